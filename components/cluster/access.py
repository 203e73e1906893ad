"""Who gets which Kubernetes access, through EKS access entries. Pure.

No permanent cluster-admin hides in the cluster itself (the creator's bootstrap grant is off): the
deployer running `pulumi up` gets cluster-admin by an entry the plan shows, day-to-day administrators
EKS's admin policy in the application namespaces only (at cluster scope it grants RBAC, Secrets,
`pods/exec` and impersonation in kube-system too) and its view policy everywhere, readers the view
policy, and cluster-admin otherwise only the break-glass roles.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.cluster.config import ClusterConfig

CLUSTER_ADMIN = "AmazonEKSClusterAdminPolicy"
# The policy each config list grants, cluster-wide (EKS access policy names).
POLICY_OF = {
    "break_glass_principal_arns": CLUSTER_ADMIN,
    "admin_principal_arns": "AmazonEKSAdminPolicy",
    "viewer_principal_arns": "AmazonEKSViewPolicy",
}
# Resource-name prefixes; admins keep the one their entries had, so existing entries are not replaced.
NAME_OF = {
    "break_glass_principal_arns": "break-glass",
    "admin_principal_arns": "admin",
    "viewer_principal_arns": "view",
}


VIEW = "AmazonEKSViewPolicy"


@dataclass(frozen=True)
class AccessGrant:
    principal: str
    name: str  # resource-name stem
    policies: tuple[str, ...]
    # Per policy, the namespaces it is scoped to; a policy not listed is cluster-wide.
    namespaces: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def scope(self, policy: str) -> tuple[str, ...] | None:
        return dict(self.namespaces).get(policy)


def access_grants(config: ClusterConfig, deployer_arn: str, app_namespaces: list[str]) -> list[AccessGrant]:
    """One grant per principal. The deployer (the role `pulumi up` runs as) needs cluster-admin to install
    cluster-scoped objects; when it is also listed, its entry carries both policies. Admins hold the admin
    policy in `app_namespaces` (the teams', Triton's, training's) and read the rest."""
    grants = []
    for key, arn in config.principals():
        policies: tuple[str, ...] = (POLICY_OF[key],)
        scoped: tuple[tuple[str, tuple[str, ...]], ...] = ()
        if key == "admin_principal_arns" and app_namespaces:
            policies, scoped = (POLICY_OF[key], VIEW), ((POLICY_OF[key], tuple(app_namespaces)),)
        if arn == deployer_arn and POLICY_OF[key] != CLUSTER_ADMIN:
            policies += (CLUSTER_ADMIN,)
        grants.append(AccessGrant(arn, f"{NAME_OF[key]}-{arn.rsplit('/', 1)[-1]}", policies, scoped))
    if deployer_arn not in {grant.principal for grant in grants}:
        grants.insert(0, AccessGrant(deployer_arn, "deployer", (CLUSTER_ADMIN,)))
    return grants
