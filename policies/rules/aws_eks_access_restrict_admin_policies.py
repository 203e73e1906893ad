"""EKS access gives each principal the stack config names what its role is, and no more: a team's people
get no access policy at all (their Kubernetes group, bound in their namespaces), nor do model publishers
(they write to the model bucket), viewers only view,
administrators EKS's admin policy in namespaces only; cluster-admin is for break-glass and the deployer.
No entry joins system:masters or another team's group. And entries are the only way in: the cluster
authenticates by access entries alone (mode API: in a ConfigMap mode the aws-auth ConfigMap maps anyone to
any group, system:masters included, where no entry shows it) and gives its creator no hidden admin entry
(EKS's CreateCluster defaults are CONFIG_MAP and a creator admin, so absent settings are both)."""

from components.plan.resources import EKS_ACCESS_ENTRY, EKS_ACCESS_POLICY, EKS_CLUSTER
from components.tenancy.manifests import TENANT_GROUP_PREFIX
from policies.framework import Rule

POLICY_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
VIEW = "AmazonEKSViewPolicy"
ADMIN = "AmazonEKSAdminPolicy"


def _cluster(resource):
    access = resource.props.get("accessConfig") or {}
    mode = access.get("authenticationMode") or "CONFIG_MAP"
    if mode != "API":
        yield (
            f"{resource.name}: authentication mode {mode} lets the aws-auth ConfigMap grant cluster access "
            "that no access entry shows"
        )
    if access.get("bootstrapClusterCreatorAdminPermissions") is not False:
        yield f"{resource.name}: gives whoever creates it a cluster-admin access entry the plan does not show"


# Namespaces an administrator's namespaced policy may not reach: the cluster's own (their service accounts
# and secrets run the cluster). EKS takes wildcards in the names (`*`, `kube-*`).
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")


def _named_namespaces(namespaces) -> bool:
    """Whether a namespace scope names ordinary namespaces only: each exactly, none the cluster's own."""
    names = [str(n) for n in namespaces or []]
    return bool(names) and not any("*" in name or name in SYSTEM_NAMESPACES for name in names)


def _person(principal: str, config) -> bool:
    """Whether the stack config names the principal as a person or a pipeline (never a node)."""
    return principal in config["tenant_principals"] or any(
        principal in config[key] for key in ("admin_principals", "viewer_principals", "publisher_principals")
    )


def _named(principal: str, config) -> bool:
    return _person(principal, config) or principal in config["cluster_admin_principals"]


def check(resource, config):
    if resource.type == EKS_CLUSTER:
        yield from _cluster(resource)
        return
    principal = str(resource.props.get("principalArn"))
    team = config["tenant_principals"].get(principal)
    if resource.type == EKS_ACCESS_ENTRY:
        kind = str(resource.props.get("type") or "STANDARD")
        if kind != "STANDARD" and _person(principal, config):
            # EKS puts a node entry's principal in system:nodes (CreateAccessEntry, type): a node's powers.
            yield (
                f"{resource.name}: gives {principal}, a person the stack config names, a {kind} entry: a "
                "node's identity"
            )
        groups = [str(g) for g in resource.props.get("kubernetesGroups") or []]
        allowed = [f"{TENANT_GROUP_PREFIX}{team}"] if team else []
        for group in groups:
            # A team's group is its people's alone; without the stack config (the pack) nobody is known.
            foreign = group.startswith(TENANT_GROUP_PREFIX) and group not in allowed and config["from_stack_config"]
            if group.startswith("system:") or foreign:
                yield f"{resource.name}: puts {principal} in the Kubernetes group {group}"
        return
    if resource.type != EKS_ACCESS_POLICY:
        return
    policy = str(resource.props.get("policyArn")).removeprefix(POLICY_PREFIX)
    scope = (resource.props.get("accessScope") or {}).get("type")
    if scope == "namespace" and not _named_namespaces(resource.props["accessScope"].get("namespaces")):
        scope = "every namespace"  # a wildcard or a system namespace reaches what the cluster runs on
    if team:
        yield f"{resource.name}: gives {policy} to {principal}, a person of team {team} (teams get their group only)"
    elif principal in config["viewer_principals"] and policy != VIEW:
        yield f"{resource.name}: gives {policy} to the viewer {principal}"
    elif principal in config["admin_principals"] and not (policy == VIEW or (policy == ADMIN and scope == "namespace")):
        yield (
            f"{resource.name}: gives {policy} ({scope} scope) to the administrator {principal}; allowed: "
            f"{ADMIN} in namespaces named one by one (not {', '.join(SYSTEM_NAMESPACES)}), {VIEW}"
        )
    elif principal in config["publisher_principals"] and principal not in config["admin_principals"]:
        yield (
            f"{resource.name}: gives {policy} to {principal}, a model publisher (publishers write to the model "
            "bucket; they get no cluster access)"
        )
    elif config["deployer_named"] and not _named(principal, config):
        # With the deployer named too, the config names everyone who may hold an access policy (a pod's role,
        # another pipeline's, is not among them).
        yield f"{resource.name}: gives {policy} to {principal}, whom the stack config does not name"


RULE = Rule(
    name="aws-eks-access-restrict-admin-policies",
    description="EKS access entries and policies give tenants their group only, viewers view, administrators admin "
    "in namespaces; no entry joins system:masters or another team's group; the cluster admits by "
    "access entries alone (authentication mode API, no hidden creator admin).",
    severity="critical",
    remediation="Give access through the stack config's lists (cluster.admin_principal_arns, viewer_principal_arns, "
    "break_glass_principal_arns, tenants[].principal_arns), not extra entries or associations; set the "
    "cluster's accessConfig to authenticationMode API and bootstrapClusterCreatorAdminPermissions false.",
    topics=("security", "kubernetes", "iam"),
    config={
        "tenant_principals": {"type": "object", "default": {}},
        "admin_principals": {"type": "array", "items": {"type": "string"}, "default": []},
        "viewer_principals": {"type": "array", "items": {"type": "string"}, "default": []},
        "publisher_principals": {"type": "array", "items": {"type": "string"}, "default": []},
        "from_stack_config": {"type": "boolean", "default": False},
        # break-glass and the deployer; and whether the config names its deployer (then it names everyone)
        "cluster_admin_principals": {"type": "array", "items": {"type": "string"}, "default": []},
        "deployer_named": {"type": "boolean", "default": False},
    },
    check_resource=check,
    resource_types=frozenset({EKS_ACCESS_ENTRY, EKS_ACCESS_POLICY, EKS_CLUSTER}),
    standards=(
        "CIS EKS 4.1.1",
        "EKS User Guide: access entries and access policies",
        "EKS User Guide: set the cluster authentication mode (API: access entries only)",
    ),
)
