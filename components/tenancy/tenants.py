"""`TenantSpace`: one team's namespaces (components/tenancy/manifests.py) and its Kubernetes access:
an EKS access entry per team role with the edit policy scoped to the team's namespaces only."""

from __future__ import annotations

from typing import Mapping

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.common.k8s_objects import declare
from components.tenancy.config import TenantConfig
from components.tenancy.manifests import tenant_cost_label_policy, tenant_manifests


class TenantSpace(pulumi.ComponentResource):
    def __init__(self, name: str, tenant: TenantConfig, *, triton_namespaces: dict[str, list[str]],
                 cluster_name: pulumi.Input[str], partition: str, provider: k8s.Provider, tags: Mapping[str, str],
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:tenancy:TenantSpace", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        namespaces = {}
        manifests = tenant_manifests(tenant, triton_namespaces)
        for manifest in manifests:
            if manifest["kind"] == "Namespace":
                namespaces[manifest["metadata"]["name"]] = declare(
                    manifest, f"{name}-{manifest['metadata']['name']}-namespace", in_cluster)
        for manifest in manifests:
            if manifest["kind"] != "Namespace":
                home = manifest["metadata"]["namespace"]
                declare(manifest, f"{name}-{home}-{manifest['metadata']['name']}-{manifest['kind'].lower()}",
                        pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[namespaces[home]])))
        for role in tenant.principal_arns:
            entry_name = f"{name}-{role.rsplit('/', 1)[-1]}"
            entry = aws.eks.AccessEntry(entry_name, cluster_name=cluster_name, principal_arn=role, type="STANDARD",
                                        tags=dict(tags), opts=pulumi.ResourceOptions(parent=self))
            aws.eks.AccessPolicyAssociation(
                entry_name, cluster_name=cluster_name, principal_arn=role,
                policy_arn=f"arn:{partition}:eks::aws:cluster-access-policy/AmazonEKSEditPolicy",
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="namespace",
                                                                            namespaces=tenant.namespace_names),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[entry, *namespaces.values()]))
        self.register_outputs({})


class TenantCostLabels(pulumi.ComponentResource):
    """The one admission policy that holds every tenant's pods to their own `team` label."""

    def __init__(self, name: str, *, provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:tenancy:TenantCostLabels", name, None, opts)
        for manifest in tenant_cost_label_policy():
            declare(manifest, f"{name}-{manifest['kind'].lower()}", pulumi.ResourceOptions(parent=self,
                                                                                            provider=provider))
        self.register_outputs({})
