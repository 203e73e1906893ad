"""Nothing the plan deploys binds a role that escalates: the built-in roles that carry such grants
(cluster-admin, admin, edit, the aggregation controller's, ...), the platform's expected roles outside a
namespace (a ClusterRoleBinding of the tenant role reads every Secret of the cluster), a controller's own
role (`system:controller:*`), or any role to everyone (system:authenticated, system:unauthenticated,
system:anonymous as a group or a user, every service account) or to system:masters. The tenant role is bound
in the teams' namespaces only (the stack config's): bound in kube-system it gives a team that namespace's
Secrets and pods, where Pod Security enforces nothing. A built-in `system:` role, and a role of the
platform's own controllers, is bound to its own subjects only: the ones Kubernetes itself binds it to
(policies/data/builtin_rbac.json, read from the API servers), the controller's service account, or an
aggregated API server's account for system:auth-delegator in the chart that runs it. People's administrator
access comes from EKS access entries (docs/security.md), break-glass only."""

from components.plan.resources import K8S_ROLE_BINDINGS as BINDINGS
from components.storage.config import LocalStorageConfig
from components.tenancy.manifests import TENANT_ROLE
from policies.expectations import platform_role_subjects
from policies.framework import Rule
from policies.readers.rbac import (
    CHART_BUILTIN_ROLES,
    CONTROLLER_ROLE_PREFIX,
    ESCALATING_ROLES,
    EVERYONE_GROUPS,
    builtin_role_names,
    builtin_role_subjects,
    role_key,
    subject_key,
)
from policies.rules.kubernetes_rbac_role_disallow_escalation import EXPECTED_ROLES

CLUSTER_BINDING = BINDINGS[0]


def _own_subjects(role, config) -> frozenset[str] | None:
    if role in config["platform_role_subjects"]:
        return frozenset(config["platform_role_subjects"][role])
    return builtin_role_subjects().get(role)


def check(resource, config):
    if resource.type not in BINDINGS:
        return
    role = (resource.props.get("roleRef") or {}).get("name")
    subjects = resource.props.get("subjects") or []
    shown = ", ".join(str(s.get("name")) for s in subjects) or "nobody"
    namespace = (resource.props.get("metadata") or {}).get("namespace")
    own = _own_subjects(role, config)
    chart = config["release_charts"].get(resource.parent)
    known = config.get("known_roles")
    ref_kind = (resource.props.get("roleRef") or {}).get("kind")
    origin = None if known is None else known.get(role_key(ref_kind, role, namespace))
    if known is not None and origin is None and role not in builtin_role_names():
        yield (
            f"{resource.name}: binds {ref_kind} {role}, which the plan neither declares nor renders and Kubernetes "
            "does not build in: what it grants cannot be judged"
        )
    elif origin and origin != resource.parent:
        yield f"{resource.name}: binds {role}, a role a chart's release renders, outside that release"
    if role in ESCALATING_ROLES or str(role).startswith(CONTROLLER_ROLE_PREFIX):
        yield f"{resource.name}: binds {role} to {shown}"
    elif own is not None and role not in CHART_BUILTIN_ROLES.get(chart, ()):
        foreign = sorted({subject_key(s, namespace) for s in subjects} - own)
        if foreign:
            held = ", ".join(sorted(own)) or "none (the API server grants it another way, or it is for add-ons)"
            yield f"{resource.name}: binds {role} to {', '.join(foreign)}; only its own subjects hold it: {held}"
    elif resource.type == CLUSTER_BINDING and role in config["namespaced_roles"]:
        yield f"{resource.name}: binds {role} cluster-wide to {shown}; it is bound in team namespaces only"
    elif role == TENANT_ROLE and config["tenant_namespaces"]:
        if (namespace or "default") not in config["tenant_namespaces"]:
            yield f"{resource.name}: binds {role} to {shown} in {namespace or 'default'}, which is no team's namespace"
    everyone = sorted({str(s.get("name")) for s in subjects if s.get("kind") in ("Group", "User")} & EVERYONE_GROUPS)
    if everyone:
        yield f"{resource.name}: binds {role} to {', '.join(everyone)}"


RULE = Rule(
    name="kubernetes-rbac-binding-disallow-escalating-roles",
    description="No binding grants cluster-admin, admin, edit or another escalating built-in role, binds a "
    "namespace-only role cluster-wide, binds a built-in system: role or a platform controller's role to anyone "
    "but its own subjects, or binds anything to everyone or system:masters.",
    severity="critical",
    remediation="Bind a role that lists what the subject needs, in its namespace.",
    topics=("security", "kubernetes"),
    config={
        "namespaced_roles": {"type": "array", "items": {"type": "string"}, "default": sorted(EXPECTED_ROLES)},
        # The teams' namespaces (from the stack config; none known: not judged).
        "tenant_namespaces": {"type": "array", "items": {"type": "string"}, "default": []},
        "platform_role_subjects": {
            "type": "object",
            "default": platform_role_subjects(LocalStorageConfig.model_fields["namespace"].default),
        },
        # A rendered object's release (its parent) -> the pinned chart it came from (seedance check sets it).
        "release_charts": {"type": "object", "default": {}},
        # Every role the plan declares or its charts render (role_key -> the release that renders it, "" when
        # the program declares it); seedance check sets it, and then a binding of any other role is refused.
        "known_roles": {"type": "object"},
    },
    check_resource=check,
    resource_types=frozenset(BINDINGS),
    standards=("CIS EKS 4.1.1", "Kubernetes RBAC good practices: privilege escalation risks"),
)
