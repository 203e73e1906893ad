"""Nothing the plan deploys is bound to cluster-admin: a workload that holds it owns the cluster. People's
administrator access comes from EKS access entries (docs/security.md), break-glass only."""

from components.plan.resources import K8S_ROLE_BINDINGS as BINDINGS
from policies.framework import Rule



def check(resource, config):
    if resource.type in BINDINGS and (resource.props.get("roleRef") or {}).get("name") == "cluster-admin":
        subjects = ", ".join(str(s.get("name")) for s in resource.props.get("subjects") or [])
        yield f"{resource.name}: binds cluster-admin to {subjects or 'nobody'}"


RULE = Rule(
    name="kubernetes-rbac-binding-disallow-cluster-admin",
    description="No RoleBinding or ClusterRoleBinding grants cluster-admin.",
    severity="critical",
    remediation="Bind a role that lists what the subject needs.",
    topics=("security", "kubernetes"),
    check_resource=check,
    resource_types=frozenset(BINDINGS),
    standards=("CIS EKS 4.1.1",),
)
