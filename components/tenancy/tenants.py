"""`TenantSpace`: one team's namespaces (components/tenancy/manifests.py), its Kubernetes access and the
admission policy that holds its pods to its classes and pools. Its people's access entries carry no EKS
access policy: they put the team's roles in its Kubernetes group, which RBAC binds in its namespaces only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.common.k8s_objects import declare
from components.common.manifests import Manifest
from components.tenancy.config import QueuesConfig, TenantConfig
from components.tenancy.manifests import (
    cluster_reader_binding,
    observer_bindings,
    tenant_cost_label_policy,
    tenant_group,
    tenant_guard_policies,
    tenant_manifests,
    tenant_pod_policy,
)
from components.tenancy.queues import (
    KUEUE_CHART,
    KUEUE_NAMESPACE,
    kueue_namespace,
    kueue_values,
    queue_admission_policies,
)


class TenantSpace(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        tenant: TenantConfig,
        *,
        triton_namespaces: dict[str, list[str]],
        observed_namespaces: list[str],
        pools: Mapping[str, str],
        namespace_gpus: Mapping[str, int],
        cluster_name: pulumi.Input[str],
        provider: k8s.Provider,
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:tenancy:TenantSpace", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        namespaces = {}
        manifests = tenant_manifests(tenant, triton_namespaces, namespace_gpus)
        for manifest in manifests:
            if manifest["kind"] == "Namespace":
                namespaces[manifest["metadata"]["name"]] = declare(
                    manifest, f"{name}-{manifest['metadata']['name']}-namespace", in_cluster
                )
        for manifest in manifests:
            if manifest["kind"] != "Namespace":
                home = manifest["metadata"]["namespace"]
                declare(
                    manifest,
                    f"{name}-{home}-{manifest['metadata']['name']}-{manifest['kind'].lower()}",
                    pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[namespaces[home]])),
                )
        # The Triton namespaces of the sets it publishes to: created by their serving sets (the caller orders them).
        for manifest in observer_bindings(tenant, observed_namespaces):
            declare(manifest, f"{name}-{manifest['metadata']['namespace']}-observer-rolebinding", in_cluster)
        reader = cluster_reader_binding(tenant)
        declare(reader, f"{name}-cluster-reader-clusterrolebinding", in_cluster)
        for manifest in tenant_pod_policy(tenant, pools):
            declare(manifest, f"{name}-pods-{manifest['kind'].lower()}", in_cluster)
        for role in tenant.principal_arns:
            aws.eks.AccessEntry(
                f"{name}-{role.rsplit('/', 1)[-1]}",
                cluster_name=cluster_name,
                principal_arn=role,
                type="STANDARD",
                kubernetes_groups=[tenant_group(tenant.name)],
                tags=dict(tags),
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(namespaces.values())),
            )
        self.register_outputs({})


class TenantCostLabels(pulumi.ComponentResource):
    """The one admission policy that holds every tenant's pods to their own `team` label."""

    def __init__(self, name: str, *, provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:tenancy:TenantCostLabels", name, None, opts)
        for manifest in tenant_cost_label_policy():
            declare(
                manifest, f"{name}-{manifest['kind'].lower()}", pulumi.ResourceOptions(parent=self, provider=provider)
            )
        self.register_outputs({})


class TenantGuards(pulumi.ComponentResource):
    """What every team shares: the tenant ClusterRole, and the admission policies that keep Services inside
    the cluster and the platform's objects in a team's namespaces beyond the team's reach."""

    def __init__(
        self,
        name: str,
        *,
        team_namespaces: list[str],
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:tenancy:TenantGuards", name, None, opts)
        for manifest in tenant_guard_policies(team_namespaces):
            declare(
                manifest,
                f"{name}-{manifest['metadata']['name']}-{manifest['kind'].lower()}",
                pulumi.ResourceOptions(parent=self, provider=provider),
            )
        self.register_outputs({})


class GpuQueues(pulumi.ComponentResource):
    """Kueue, from its pinned chart, and the stack's flavors and team queues (components/tenancy/queues.py).
    Kueue's own webhooks judge its objects and fail closed, so the objects wait for the release to be ready."""

    def __init__(
        self,
        name: str,
        config: QueuesConfig,
        manifests: Sequence[Manifest],
        *,
        teams: bool,
        vpc_cidr: str,
        api_service_ip: str,
        provider: k8s.Provider,
        provisioning_api: pulumi.Resource | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:tenancy:GpuQueues", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        space = [
            declare(m, f"{name}-{m['metadata']['name']}-{m['kind'].lower()}", in_cluster)
            for m in kueue_namespace(vpc_cidr, api_service_ip)
        ]
        release = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            chart=KUEUE_CHART,
            version=config.kueue_version,
            namespace=KUEUE_NAMESPACE,
            # The chart takes no pod labels: Kueue's cost is the system nodes'.
            values=kueue_values(config, provisioning=provisioning_api is not None),
            opts=pulumi.ResourceOptions.merge(
                in_cluster,
                pulumi.ResourceOptions(depends_on=[*space, *([provisioning_api] if provisioning_api else [])]),
            ),
        )
        # Jobs in the teams' namespaces name their queues; batch GPU pods are the Job controller's.
        for manifest in queue_admission_policies() if teams else []:
            declare(manifest, f"{name}-{manifest['metadata']['name']}-{manifest['kind'].lower()}", in_cluster)
        after = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[release])
        for manifest in manifests:
            where = manifest["metadata"].get("namespace")
            declare(
                manifest,
                f"{name}-{where + '-' if where else ''}{manifest['metadata']['name']}-{manifest['kind'].lower()}",
                after,
            )
        self.register_outputs({})
