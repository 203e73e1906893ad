"""No role grants a way to become more than it is: escalate, bind or impersonate; reading Secrets; exec,
attach or ephemeral containers in pods; minting service-account tokens; node proxy; approving
certificates; changing admission of either kind; writing nodes, PersistentVolumes or priority classes;
however spelled (`*` in groups, resources or verbs, `*/exec`). Writing pods or what makes them counts too,
judged by effect: anywhere for a ClusterRole (a binding can put it in any namespace), and for a Role
outside the teams' namespaces (in a platform namespace a pod is any identity and host there).
The roles the platform declares (the tenants' `seedance-tenant`, bound in team namespaces only; the local
provisioner's) may carry exactly the grants the platform gives them; a pinned chart's own roles, what that
chart's controller needs (policies/readers/rbac.py: CHART_GRANTS). A ClusterRole that aggregates others by
label grows whenever someone labels a role, so none does but those a pinned chart brings for people and the
platform binds to no one (policies/readers/rbac.py: CHART_AGGREGATES)."""

from components.plan.resources import K8S_ROLES as ROLES
from components.storage.manifests import provisioner_role
from components.tenancy.manifests import tenant_role
from policies.framework import Rule
from policies.readers.rbac import (
    CHART_AGGREGATES,
    aggregated_into_builtins,
    aggregates,
    chart_allows,
    escalations,
    expected_grants,
    within,
)

CLUSTER_ROLE = ROLES[0]
EXPECTED_ROLES = {role["metadata"]["name"]: role["rules"] for role in (tenant_role(), provisioner_role())}


def check(resource, config):
    if resource.type not in ROLES:
        return
    metadata = resource.props.get("metadata") or {}
    name = metadata.get("name")
    workloads = resource.type == CLUSTER_ROLE or metadata.get("namespace") not in config["tenant_namespaces"]
    # The expected roles are ClusterRoles: a Role of the same name gets nothing of theirs.
    expected_rules = config["expected_roles"].get(name) if resource.type == CLUSTER_ROLE else None
    expected = expected_grants(str(name), expected_rules, workloads) if expected_rules else {}
    chart = config["release_charts"].get(resource.parent)
    grants = list(escalations(resource.props.get("rules"), workloads=workloads))
    for grant in grants:
        if not within(grant, expected) and not chart_allows(chart, grant):
            yield f"{resource.name}: {grant.where} {grant.what}"
    if grants and aggregated_into_builtins(resource.props):
        yield (
            f"{resource.name}: is labelled to be merged into the built-in admin, edit or view roles, and "
            f"{grants[0].what} there"
        )
    if aggregates(resource.props) and name not in CHART_AGGREGATES.get(chart or "", ()):
        yield f"{resource.name}: aggregates every ClusterRole its selectors match (aggregationRule)"


RULE = Rule(
    name="kubernetes-rbac-role-disallow-escalation",
    description="Roles grant no escalate, bind or impersonate, no Secret reads, exec, attach, token minting, node "
    "proxy, admission changes or writes to nodes, volumes and priority classes, and no pod or workload writes "
    "outside the teams' namespaces (the platform's expected roles and its charts' controllers excepted, "
    "exactly), and aggregate nothing.",
    severity="critical",
    remediation="List the verbs and resources the workload needs, as a Role in its team's namespace; give people "
    "Secrets and exec through the platform's tenant role in their namespaces, not a role of their own.",
    topics=("security", "kubernetes"),
    config={
        "expected_roles": {"type": "object", "default": EXPECTED_ROLES},
        # The teams' namespaces (from the stack config or the contract); a Role elsewhere is the platform's.
        "tenant_namespaces": {"type": "array", "items": {"type": "string"}, "default": []},
        # A rendered object's release (its parent) -> the pinned chart it came from (seedance check sets it).
        "release_charts": {"type": "object", "default": {}},
    },
    check_resource=check,
    resource_types=frozenset(ROLES),
    standards=(
        "CIS EKS 4.1.2",
        "CIS EKS 4.1.3",
        "CIS EKS 4.1.8",
        "Kubernetes RBAC good practices: privilege escalation risks",
    ),
)
