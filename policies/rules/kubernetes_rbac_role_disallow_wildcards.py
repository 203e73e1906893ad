"""Roles name what they allow: `*` in verbs, resources or API groups grants whatever the API server
serves, including kinds added later, and `escalate`, `bind` or `impersonate` lets a holder grant itself more."""

from components.plan.resources import K8S_ROLES as ROLES
from policies.framework import Rule

ESCALATING_VERBS = {"escalate", "bind", "impersonate"}


def check(resource, config):
    if resource.type not in ROLES:
        return
    for index, rule in enumerate(resource.props.get("rules") or []):
        wild = [field for field in ("verbs", "resources", "apiGroups") if "*" in (rule.get(field) or [])]
        if wild:
            yield f"{resource.name}: rule {index} has * in {', '.join(wild)}"
        escalating = sorted(ESCALATING_VERBS & set(rule.get("verbs") or []))
        if escalating:
            yield f"{resource.name}: rule {index} grants {', '.join(escalating)}"


RULE = Rule(
    name="kubernetes-rbac-role-disallow-wildcards",
    description="Roles and ClusterRoles list their verbs, resources and API groups; no escalate, bind or "
                "impersonate.",
    severity="high",
    remediation="List the verbs and resources the workload needs.",
    topics=("security", "kubernetes"),
    check_resource=check,
    resource_types=frozenset(ROLES),
    standards=("CIS EKS 4.1.3", "CIS EKS 4.1.8"),
)
