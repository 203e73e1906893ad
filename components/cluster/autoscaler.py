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

from components.cluster.config import ClusterAutoscalerConfig
from components.cluster.provisioning import PROVISIONING_CRD_NAME, provisioning_request_crd, rbac_rules_for
from components.common.addon_resources import ADDON_RESOURCES
from components.common.iam import irsa_trust_policy
from components.common.k8s_objects import declare
from components.common.manifests import cost_labels
from components.compute.labels import system_placement
from components.compute.priority import CLUSTER_CRITICAL

CHART_REPOSITORY = "https://kubernetes.github.io/autoscaler"
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


def autoscaler_policy(partition: str, region: str, account_id: str, cluster_name: str) -> dict:
    """Read what it needs everywhere (Describe calls take no resource); change only this cluster's
    groups (the discovery tag, which EKS also sets on managed node groups)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Discover",
                "Effect": "Allow",
                "Resource": "*",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                ],
            },
            {
                "Sid": "DescribeThisClustersManagedNodeGroups",
                "Effect": "Allow",
                "Action": "eks:DescribeNodegroup",
                "Resource": f"arn:{partition}:eks:{region}:{account_id}:nodegroup/{cluster_name}/*/*",
            },
            {
                "Sid": "ScaleThisClustersGroups",
                "Effect": "Allow",
                "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
                "Resource": (
                    f"arn:{partition}:autoscaling:{region}:{account_id}:autoScalingGroup:*:autoScalingGroupName/*"
                ),
                "Condition": {"StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"}},
            },
        ],
    }


def autoscaler_values(
    config: ClusterAutoscalerConfig,
    *,
    cluster_name: str,
    region: str,
    image_tag: str,
    chart_version: str,
    role_arn: str,
    provisioning_requests: bool,
) -> dict:
    """Helm values (keys checked in the chart's values.yaml at 9.53.0 and 9.59.0). Each GPU pod selects its
    group by label, so one group fits a pending pod and the default expander (least-waste) is enough. Nodes
    with emptyDir pods may scale down (Triton's /tmp and /dev/shm are emptyDirs, or online nodes would never
    shrink); training pods that must not move say so with the safe-to-evict annotation.
    `provisioning_requests`: the autoscaler answers Kueue's ProvisioningRequests for multi-node pools
    (components/cluster/provisioning.py), with the rules its chart's ClusterRole lacks for them."""
    gangs = {"enable-provisioning-requests": True} if provisioning_requests else {}
    extra_rules = rbac_rules_for(chart_version) if provisioning_requests else []
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name},
        "image": {"tag": image_tag},
        "rbac": {
            "serviceAccount": {
                "create": True,
                "name": SERVICE_ACCOUNT,
                "annotations": {"eks.amazonaws.com/role-arn": role_arn},
            },
            **({"additionalRules": extra_rules} if extra_rules else {}),
        },
        **system_placement(CLUSTER_CRITICAL),
        "resources": ADDON_RESOURCES["cluster-autoscaler"],
        "extraArgs": {
            "expander": "least-waste",
            "balance-similar-node-groups": False,
            "skip-nodes-with-local-storage": False,
            "scale-down-unneeded-time": f"{config.scale_down_unneeded_minutes}m",
            "max-node-provision-time": f"{config.max_node_provision_minutes}m",
            **gangs,
        },
    }


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
