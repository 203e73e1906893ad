"""The cluster autoscaler's settings: its IAM policy and its Helm values, as the program declares them and the
gate compares them (components/cluster/autoscaler.py declares the resources). Pure."""

from __future__ import annotations

from typing import Any

from components.cluster.config import ClusterAutoscalerConfig
from components.cluster.provisioning import rbac_rules_for
from components.common.addon_resources import ADDON_RESOURCES
from components.compute.labels import system_placement
from components.compute.priority import CLUSTER_CRITICAL

CHART_REPOSITORY = "https://kubernetes.github.io/autoscaler"
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"


def autoscaler_policy(partition: str, region: str, account_id: str, cluster_name: str) -> dict[str, Any]:
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
) -> dict[str, Any]:
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
