"""What a GPU node group's Auto Scaling group says, rendered from its plan and config. Pure: the
component passes these to pulumi_aws, and the tests read them without the runtime."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.capacity.plan import CapacityPlan
from components.catalog.instance_types import gpu_instance_type
from components.compute.config import CONFIG_LABEL, GpuNodeGroupConfig, gpu_pool_selector
from components.compute.efa import EFA_HUGEPAGES, EFA_RESOURCE, HUGEPAGES_RESOURCE
from components.compute.labels import (
    ACCELERATOR_LABEL,
    AMI_FAMILY_LABEL,
    EFA_LABEL,
    GPU_TAINT,
    LOCAL_NVME_LABEL,
    accelerator_value,
    pool_taint,
)
from components.compute.node_bootstrap import AMI_FAMILY_TRAITS
from components.pricing.reserved import CAPACITY_RESERVATION

NTH_MANAGED_TAG_PREFIX = "aws-node-termination-handler/managed"


def nth_managed_tag(cluster_name: str) -> str:
    """The instance tag a cluster's termination handler drains by (a key: the handler checks for it). Each
    cluster has its own, so a handler that hears another stack's nodes in the account leaves them alone."""
    return f"{NTH_MANAGED_TAG_PREFIX}/{cluster_name}"


def instances_distribution(plan: CapacityPlan, gpus_per_instance: int) -> dict[str, Any]:
    """The plan's distribution in instances (the group counts instances: no weights,
    kubernetes/autoscaler#4851); the on-demand base rounds up, so spot never exceeds the plan's share."""
    mix = plan.mix.in_instances(gpus_per_instance)
    return {
        "on_demand_base_capacity": int(mix.on_demand_base),
        "on_demand_percentage_above_base_capacity": int(mix.on_demand_percentage_above_base),
        "on_demand_allocation_strategy": plan.on_demand_allocation_strategy,
        "spot_allocation_strategy": plan.spot_allocation_strategy,
    }


def capacity_reservation_specification(plan: CapacityPlan) -> dict[str, Any] | None:
    """The group's capacity reservation preference, when its plan holds On-Demand Capacity Reservations:
    reserved capacity first, then on-demand (`capacity-reservations-first`); a targeted reservation is
    used only by instances that name it, so it is listed. None when the plan holds none (AWS's default:
    open reservations that match are still used). The pinned provider's ASG
    `capacity_reservation_specification`; whether EC2 Auto Scaling applies the preference to a mixed
    instances policy's on-demand part only is not stated in its docs (spot never launches into one)."""
    reservations = [h for h in plan.mix.holdings if h.kind == CAPACITY_RESERVATION]
    if not reservations:
        return None
    targeted = sorted({h.reference for h in reservations if h.targeted})
    return {
        "capacity_reservation_preference": "capacity-reservations-first",
        **({"capacity_reservation_target": {"capacity_reservation_ids": targeted}} if targeted else {}),
    }


def pool_node_labels(config: GpuNodeGroupConfig) -> dict[str, str]:
    """The labels a pool's nodes register with (their user data) and its group's scale-from-zero template says."""
    shared = config.gpu_sharing.mode != "none"
    return {
        **gpu_pool_selector(config),
        AMI_FAMILY_LABEL: config.ami_family,
        # Tells the autoscaler a new node is a GPU node before its device plugin reports GPUs.
        ACCELERATOR_LABEL: accelerator_value([gpu_instance_type(t).gpu for t in config.instance_types]),
        **({LOCAL_NVME_LABEL: "true"} if config.local_storage else {}),
        **({EFA_LABEL: "true"} if config.efa else {}),
        # Sharing goes to the OS's own device plugin, or to the Helm plugin's named config.
        **(
            {CONFIG_LABEL: config.name}
            if shared and not AMI_FAMILY_TRAITS[config.ami_family].builtin_device_plugin
            else {}
        ),
    }


def pool_node_taints(config: GpuNodeGroupConfig) -> list[dict[str, str]]:
    return [GPU_TAINT, pool_taint(config.name)]


NODE_TEMPLATE_PREFIX = "k8s.io/cluster-autoscaler/node-template/"


def node_template_tags(config: GpuNodeGroupConfig) -> dict[str, str]:
    """What the cluster autoscaler reads of a group to scale it from zero: its nodes' labels, taints and
    resources, all from the pool's config (a tag that says more GPUs, or another class, than the nodes have
    makes the autoscaler launch nodes no pod fits, or place pods where they never run)."""
    return {
        **{f"{NODE_TEMPLATE_PREFIX}label/{k}": v for k, v in pool_node_labels(config).items()},
        **{f"{NODE_TEMPLATE_PREFIX}taint/{t['key']}": f"{t['value']}:{t['effect']}" for t in pool_node_taints(config)},
        **{f"{NODE_TEMPLATE_PREFIX}resources/{k}": v for k, v in node_template_resources(config).items()},
    }


def asg_tags(cluster_name: str, node_name: str, tags: Mapping[str, str], template: Mapping[str, str]) -> dict[str, str]:
    """Tags of the group, propagated to its instances: cost tags, cluster ownership, autoscaler
    discovery and its scale-from-zero `template` (node_template_tags), termination-handler scope."""
    autoscaler = "k8s.io/cluster-autoscaler"
    return {
        **tags,
        "Name": node_name,
        f"kubernetes.io/cluster/{cluster_name}": "owned",
        f"{autoscaler}/enabled": "true",
        f"{autoscaler}/{cluster_name}": "owned",
        **template,
        nth_managed_tag(cluster_name): "true",
    }


def node_template_resources(config: GpuNodeGroupConfig) -> dict[str, str]:
    """What one node offers, for the cluster autoscaler's scale-from-zero template: GPUs after sharing
    (it would read the physical count from the type), and the smallest type's CPU and memory, so the
    template never promises more than any override delivers."""
    types = [gpu_instance_type(t) for t in config.instance_types]
    memory_gib = min(t.memory_gib for t in types)
    hugepages_mib = EFA_HUGEPAGES * 2 if config.efa else 0  # taken from the memory pods may ask for
    return {
        "nvidia.com/gpu": str(config.gpus_per_instance * config.gpu_sharing.gpu_multiplier),
        "cpu": str(min(t.vcpus for t in types)),
        "memory": f"{memory_gib * 1024 - hugepages_mib}Mi" if hugepages_mib else f"{memory_gib}Gi",
        # An EFA pool's adapters (its types are alike) and huge pages, so a pod asking for them scales the pool
        # from zero.
        **(
            {EFA_RESOURCE: str(types[0].efa_interfaces), HUGEPAGES_RESOURCE: f"{hugepages_mib}Mi"} if config.efa else {}
        ),
    }


def group_update_statements(
    *,
    partition: str,
    region: str,
    account_id: str,
    cluster_name: str,
    actions: list[str],
    template_arns: list[str],
    node_role_arns: list[str],
    tagged: str | None = None,
) -> list[dict[str, Any]]:
    """IAM statements to change this cluster's Auto Scaling groups (those tagged `tagged` only, when given).
    Auto Scaling checks that whoever updates a launch-template group may launch from its template
    (RunInstances, limited to these templates by ec2:LaunchTemplate), tag what it launches and pass its node
    role (EC2 Auto Scaling user guide, "Control Amazon EC2 launch template usage in Auto Scaling groups")."""
    condition: dict[str, Any] = {
        "StringEquals": {f"autoscaling:ResourceTag/kubernetes.io/cluster/{cluster_name}": "owned"}
    }
    if tagged:
        condition["Null"] = {f"autoscaling:ResourceTag/{tagged}": "false"}
    return [
        # DescribeAutoScalingGroups has no resource-level permissions.
        {"Sid": "FindGroups", "Effect": "Allow", "Action": "autoscaling:DescribeAutoScalingGroups", "Resource": "*"},
        {
            "Sid": "ChangeThisClustersGroups",
            "Effect": "Allow",
            "Action": actions,
            "Resource": f"arn:{partition}:autoscaling:{region}:{account_id}:autoScalingGroup:*:autoScalingGroupName/*",
            "Condition": condition,
        },
        {
            "Sid": "UseTheGroupsLaunchTemplates",
            "Effect": "Allow",
            "Action": "ec2:RunInstances",
            "Resource": "*",
            "Condition": {"ArnLike": {"ec2:LaunchTemplate": template_arns}},
        },
        {
            "Sid": "TagWhatTheyLaunch",
            "Effect": "Allow",
            "Action": "ec2:CreateTags",
            "Resource": f"arn:{partition}:ec2:{region}:{account_id}:*/*",
            "Condition": {"StringEquals": {"ec2:CreateAction": "RunInstances"}},
        },
        {
            "Sid": "PassTheNodeRoles",
            "Effect": "Allow",
            "Action": "iam:PassRole",
            "Resource": node_role_arns,
            "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
        },
    ]
