"""No role grants a way to become more than it is: escalate, bind or impersonate; reading Secrets; exec,
attach or ephemeral containers in pods; minting service-account tokens; node proxy; approving
certificates; changing admission policies; however spelled (`*` in groups, resources or verbs, `*/exec`).
The roles the stack config expects (the tenants' `seedance-tenant`, bound in team namespaces only) may
carry exactly the grants the platform gives them. A ClusterRole that aggregates others by label grows
whenever someone labels a role, so none does."""

from components.plan.resources import K8S_ROLES as ROLES
from components.tenancy.manifests import tenant_role
from policies.framework import Rule
from policies.readers.rbac import aggregates, escalations

EXPECTED_ROLES = {tenant_role()["metadata"]["name"]: tenant_role()["rules"]}


def check(resource, config):
    if resource.type not in ROLES:
        return
    name = (resource.props.get("metadata") or {}).get("name")
    allowed = {grant.what for grant in escalations(config["expected_roles"].get(name, []))}
    for grant in escalations(resource.props.get("rules")):
        if grant.what not in allowed:
            yield f"{resource.name}: {grant.where} {grant.what}"
    if aggregates(resource.props):
        yield f"{resource.name}: aggregates every ClusterRole its selectors match (aggregationRule)"


RULE = Rule(
    name="kubernetes-rbac-role-disallow-escalation",
    description="Roles grant no escalate, bind or impersonate, no Secret reads, exec, attach, token minting, node "
    "proxy or admission changes (the platform's expected roles excepted, exactly), and aggregate "
    "nothing.",
    severity="critical",
    remediation="List the verbs and resources the workload needs; give people Secrets and exec through the "
    "platform's tenant role in their namespaces, not a role of their own.",
    topics=("security", "kubernetes"),
    config={"expected_roles": {"type": "object", "default": EXPECTED_ROLES}},
    check_resource=check,
    resource_types=frozenset(ROLES),
    standards=(
        "CIS EKS 4.1.2",
        "CIS EKS 4.1.3",
        "CIS EKS 4.1.8",
        "Kubernetes RBAC good practices: privilege escalation risks",
    ),
)
