"""`ClusterAutoscaler`: scales the GPU groups (and the system nodes) to the pods that wait for them.

Without it nothing changes an Auto Scaling group's size once it exists (the program ignores desired
capacity after creation), so an HPA asking for more Triton replicas, or a rolling update's surge pod,
waits forever. Cluster autoscaler discovers the groups by their tags, templates a new node from the
group's first type and its `node-template` tags, and counts instances (hence one instance shape per
GPU group, see `GpuNodeGroupConfig`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.cluster.autoscaling import (
    CHART_REPOSITORY,
    NAMESPACE,
    SERVICE_ACCOUNT,
    autoscaler_policy,
    autoscaler_values,
)
from components.cluster.config import ClusterAutoscalerConfig
from components.cluster.provisioning import PROVISIONING_CRD_NAME, provisioning_request_crd
from components.common.iam import irsa_trust_policy
from components.common.k8s_objects import declare
from components.common.manifests import cost_labels


class ClusterAutoscaler(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        config: ClusterAutoscalerConfig,
        *,
        cluster_name: str,
        region: str,
        kubernetes_version: str,
        oidc_provider_arn: pulumi.Input[str],
        oidc_issuer_url: pulumi.Input[str],
        provider: k8s.Provider,
        tags: Mapping[str, str],
        provisioning_requests: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:cluster:ClusterAutoscaler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        account = aws.get_caller_identity_output(opts=invoke).account_id
        partition = aws.get_partition_output(opts=invoke).partition
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=pulumi.Output.all(oidc_provider_arn, oidc_issuer_url).apply(
                lambda v: json.dumps(irsa_trust_policy(v[0], v[1], NAMESPACE, SERVICE_ACCOUNT))
            ),
            tags=dict(tags),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-policy",
            role=role.id,
            opts=child,
            policy=pulumi.Output.all(partition, account).apply(
                lambda v: json.dumps(autoscaler_policy(v[0], region, v[1], cluster_name))
            ),
        )
        # Kueue and the autoscaler both look for the API when they start: it comes first.
        self.provisioning_api = (
            declare(
                provisioning_request_crd(),
                f"{name}-{PROVISIONING_CRD_NAME}",
                pulumi.ResourceOptions(parent=self, provider=provider),
            )
            if provisioning_requests
            else None
        )
        chart_version = config.chart_for(kubernetes_version)
        k8s.helm.v3.Release(
            f"{name}-release",
            name="cluster-autoscaler",
            chart="cluster-autoscaler",
            version=chart_version,
            namespace=NAMESPACE,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            values=role.arn.apply(
                lambda arn: {
                    **autoscaler_values(
                        config,
                        cluster_name=cluster_name,
                        region=region,
                        image_tag=config.image_for(kubernetes_version),
                        chart_version=chart_version,
                        role_arn=arn,
                        provisioning_requests=provisioning_requests,
                    ),
                    "podLabels": cost_labels(tags, "cluster-autoscaler"),
                }
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[self.provisioning_api] if self.provisioning_api else []
            ),
        )
        self.role_arn = role.arn
        self.register_outputs({"role_arn": self.role_arn})
