"""What a GPU node group's Auto Scaling group says, rendered from its plan and config. Pure: the
component passes these to pulumi_aws, and the tests read them without the runtime."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.capacity.plan import CapacityPlan
from components.catalog.instance_types import gpu_instance_type
from components.compute.config import GpuNodeGroupConfig
from components.compute.efa import EFA_HUGEPAGES, EFA_RESOURCE, HUGEPAGES_RESOURCE
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


def asg_tags(
    cluster_name: str,
    node_name: str,
    labels: Mapping[str, str],
    taints: list[dict[str, Any]],
    tags: Mapping[str, str],
    resources: Mapping[str, str],
) -> dict[str, str]:
    """Tags of the group, propagated to its instances: cost tags, cluster ownership, autoscaler
    discovery and scale-from-zero templates (labels, taints, resources), termination-handler scope."""
    autoscaler = "k8s.io/cluster-autoscaler"
    return {
        **tags,
        "Name": node_name,
        f"kubernetes.io/cluster/{cluster_name}": "owned",
        f"{autoscaler}/enabled": "true",
        f"{autoscaler}/{cluster_name}": "owned",
        **{f"{autoscaler}/node-template/label/{k}": v for k, v in labels.items()},
        **{f"{autoscaler}/node-template/taint/{t['key']}": f"{t['value']}:{t['effect']}" for t in taints},
        **{f"{autoscaler}/node-template/resources/{k}": v for k, v in resources.items()},
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
