"""`GpuNodeGroup`: a self-managed GPU node group whose Spot / On-Demand mix comes from a `CapacityPlan`.

A managed node group has one capacity type; an on-demand base plus a spot share in one group
needs an Auto Scaling group with a MixedInstancesPolicy, so this is built on `aws.autoscaling`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from components.capacity.mix import EXPECTED_SPOT_TAG, HOLDINGS_TAG, holdings_tag
from components.capacity.plan import CapacityPlan
from components.compute.asg import (
    asg_tags,
    capacity_reservation_specification,
    instances_distribution,
    node_template_tags,
    pool_node_labels,
    pool_node_taints,
)
from components.compute.capacity_block import BlockSchedule, CapacityBlockConfig
from components.compute.config import GpuNodeGroupConfig
from components.compute.efa import EFA_HUGEPAGES, efa_interfaces
from components.compute.labels import (
    BREAKER_TAG,
    CAPACITY_BLOCK_TAG,
)
from components.compute.node_bootstrap import AMI_FAMILY_TRAITS, ClusterJoin, ami_ssm_parameter, encoded_user_data
from components.compute.node_role import node_role
from components.compute.rollout import SUSPENDED_PROCESSES, refresh_preferences, rollout_pace
from components.pricing.prices import utc_text


class GpuNodeGroup(pulumi.ComponentResource):
    """Launch template, node role and access entry, and an Auto Scaling group rendered from the plan."""

    asg_name: pulumi.Output[str]
    asg_arn: pulumi.Output[str]
    node_role_arn: pulumi.Output[str]
    template_arn: pulumi.Output[str]
    block_template_arns: list[pulumi.Output[str]]  # one a Capacity Block the group runs
    block_asg_arns: list[pulumi.Output[str]]  # likewise

    def __init__(
        self,
        name: str,
        config: GpuNodeGroupConfig,
        plan: CapacityPlan,
        *,
        cluster_name: str,
        kubernetes_version: str,
        join: pulumi.Output[ClusterJoin],
        subnet_ids: pulumi.Input[list[str]],
        node_security_group_id: pulumi.Input[str],
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        image_id: pulumi.Input[str] | None,
        zones: Sequence[str] = (),
        blocks: Mapping[str, BlockSchedule] | None = None,
        budget_breaker: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:compute:GpuNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(tags)
        role, attachments = node_role(name, self, tags)
        profile = aws.iam.InstanceProfile(f"{name}-profile", role=role.name, tags=tags, opts=child)
        # EC2_LINUX entries get the node permissions from EKS itself; no policy association.
        access = aws.eks.AccessEntry(
            f"{name}-access",
            cluster_name=join.apply(lambda j: j.cluster_name),
            principal_arn=role.arn,
            type="EC2_LINUX",
            tags=tags,
            opts=child,
        )

        traits = AMI_FAMILY_TRAITS[config.ami_family]
        shared = config.gpu_sharing.mode != "none"
        labels, taints = pool_node_labels(config), pool_node_taints(config)
        replicas = config.gpu_sharing.replicas if shared and traits.builtin_device_plugin else None
        user_data = join.apply(
            lambda j: encoded_user_data(
                config.ami_family,
                j,
                labels,
                taints,
                config.local_storage,
                replicas,
                EFA_HUGEPAGES if config.efa else 0,
            )
        )
        if image_id is None:  # an offline plan of a stack that pins no image (a real run refuses it)
            image_id = aws.ssm.get_parameter_output(
                name=ami_ssm_parameter(config.ami_family, kubernetes_version, config.arch),
                opts=pulumi.InvokeOutputOptions(parent=self),
            ).insecure_value
        template_args: dict[str, Any] = dict(
            image_id=image_id,
            user_data=user_data,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",
                http_put_response_hop_limit=1,
            ),
            network_interfaces=[
                aws.ec2.LaunchTemplateNetworkInterfaceArgs(**interface)
                for interface in (
                    efa_interfaces(config.instance_types[0], node_security_group_id)
                    if config.efa
                    else [
                        {
                            "associate_public_ip_address": "false",
                            "security_groups": [node_security_group_id],
                            "delete_on_termination": "true",
                        }
                    ]
                )
            ],
            # Every device the AMI maps, encrypted with the stack key; the one holding container images
            # gets the configured size, the others keep the AMI's snapshot size.
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name=device,
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_type="gp3",
                        encrypted="true",
                        kms_key_id=kms_key_arn,
                        delete_on_termination="true",
                        volume_size=config.root_volume_gib if device == traits.image_device else None,
                    ),
                )
                for device in traits.block_devices
            ],
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                for kind in ("instance", "volume", "network-interface")
            ],
            update_default_version=True,
            tags=tags,
        )
        template = aws.ec2.LaunchTemplate(f"{name}-template", **template_args, opts=child)

        pool_tags = asg_tags(cluster_name, f"{cluster_name}-{config.name}", tags, node_template_tags(config))
        reserved = holdings_tag(plan.mix.holdings)  # priced by the cost estimate as the decision priced them
        spot_rate = (
            f"{plan.spot_usd_per_gpu_hour * config.gpus_per_instance:.6f}"
            if plan.spot_usd_per_gpu_hour is not None
            else None
        )
        reservations = capacity_reservation_specification(plan)
        if config.placement_group and reservations:
            # The stack config refuses this for the reservations it lists; these were read from the account.
            pulumi.log.warn(
                f"{config.name}: its plan holds On-Demand Capacity Reservations, which a cluster placement group "
                "would keep it from using: the group launches outside one",
                resource=self,
            )
        placement = (
            aws.ec2.PlacementGroup(
                f"{name}-placement", name=f"{cluster_name}-{config.name}", strategy="cluster", tags=tags, opts=child
            )
            if config.placement_group and not reservations
            else None
        )
        group = aws.autoscaling.Group(
            f"{name}-asg",
            vpc_zone_identifiers=subnet_ids,
            placement_group=placement.name if placement else None,
            # Instances, not GPUs: the cluster autoscaler reads the sizes as node counts.
            min_size=config.min_gpus // config.gpus_per_instance,
            max_size=config.max_gpus // config.gpus_per_instance,
            desired_capacity=config.desired_gpus // config.gpus_per_instance,
            capacity_rebalance=plan.capacity_rebalance,
            # `up` does not wait for instances: the provider's create waits 10 minutes by default for the
            # desired healthy count and fails on any Failed scaling activity (one InsufficientInstanceCapacity
            # in one zone), so a stockout would fail the first `up`. Nodes joining is the cluster's to judge
            # (the autoscaler retries, balanced-best-effort moves the share). "0" skips every capacity wait:
            # terraform-provider-aws internal/service/autoscaling/group.go, resourceGroupCreate and Update call
            # waitGroupCapacitySatisfied only when the timeout parses to more than 0; failed activities are
            # ignored should a wait ever be set.
            wait_for_capacity_timeout="0",
            ignore_failed_scaling_activities=True,
            # A zone that cannot launch sends its share to the others, as the planner's placement rule
            # assumes (AWS's default, pinned here): balanced-only would leave the share unlaunched.
            availability_zone_distribution=aws.autoscaling.GroupAvailabilityZoneDistributionArgs(
                capacity_distribution_strategy="balanced-best-effort"
            ),
            mixed_instances_policy=mixed_instances_policy(
                plan, config.gpus_per_instance, template.id, template.latest_version
            ),
            capacity_reservation_specification=(
                aws.autoscaling.GroupCapacityReservationSpecificationArgs(
                    capacity_reservation_preference=reservations["capacity_reservation_preference"],
                    capacity_reservation_target=aws.autoscaling.GroupCapacityReservationSpecificationCapacityReservationTargetArgs(
                        **reservations["capacity_reservation_target"]
                    )
                    if "capacity_reservation_target" in reservations
                    else None,
                )
                if reservations
                else None
            ),
            # New images and user data roll at the class's pace; see components/compute/rollout.py.
            instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
                strategy="Rolling",
                preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                    **refresh_preferences(rollout_pace(config.workload(), config.workload_class))
                ),
            ),
            protect_from_scale_in=True,
            suspended_processes=list(SUSPENDED_PROCESSES),
            tags=[
                aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
                for k, v in sorted(
                    {
                        **pool_tags,
                        **({BREAKER_TAG: "on"} if budget_breaker else {}),
                        **({HOLDINGS_TAG: reserved} if reserved else {}),
                        **({EXPECTED_SPOT_TAG: spot_rate} if spot_rate else {}),
                    }.items()
                )
            ],
            # The cluster autoscaler owns the size once the group exists (pulumi-eks #321, #709, #985).
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[access, *attachments], ignore_changes=["desiredCapacity"]
            ),
        )
        drain_hook(f"{name}-drain", group, config, child)

        def zone_subnet(zone: str) -> pulumi.Output[list[str]]:
            return pulumi.Output.from_input(subnet_ids).apply(lambda ids: [ids[list(zones).index(zone)]])

        block_groups = [
            CapacityBlockGroup(
                f"{name}-{block.reservation_id}",
                config,
                block,
                (blocks or {})[block.reservation_id],
                template_args=template_args,
                pool_tags=pool_tags,
                depends_on=[access, *attachments],
                subnet_ids=zone_subnet(block.zone),
                opts=child,
            )
            for block in config.capacity_blocks
        ]
        self.asg_name = group.name
        self.asg_arn = group.arn
        self.node_role_arn = role.arn
        self.template_arn = template.arn
        self.block_template_arns = [block.template_arn for block in block_groups]
        self.block_asg_arns = [block.asg_arn for block in block_groups]
        self.register_outputs(
            {
                "asg_name": self.asg_name,
                "asg_arn": self.asg_arn,
                "node_role_arn": self.node_role_arn,
                "template_arn": self.template_arn,
            }
        )


def drain_hook(
    name: str, group: aws.autoscaling.Group, config: GpuNodeGroupConfig, opts: pulumi.ResourceOptions
) -> aws.autoscaling.LifecycleHook:
    """Scale-in and rebalancing terminations wait for the termination handler to drain the node."""
    return aws.autoscaling.LifecycleHook(
        name,
        autoscaling_group_name=group.name,
        lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
        heartbeat_timeout=config.termination_heartbeat_seconds,
        default_result="CONTINUE",
        opts=opts,
    )


class CapacityBlockGroup(pulumi.ComponentResource):
    """A purchased Capacity Block run as the pool's nodes (components/compute/capacity_block.py says what AWS
    requires): the pool's launch template settings with the block's market type, reservation and instance
    type; a plain group in the block's zone at the size right now; scheduled actions to its size at the
    start and to zero at the drain, while ahead; the pool's labels, taints and drain hook, so its pods land
    on it and leave it gracefully."""

    asg_name: pulumi.Output[str]
    template_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: GpuNodeGroupConfig,
        block: CapacityBlockConfig,
        schedule: BlockSchedule,
        *,
        template_args: Mapping[str, Any],
        pool_tags: Mapping[str, str],
        subnet_ids: pulumi.Input[list[str]],
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:compute:CapacityBlockGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        template = aws.ec2.LaunchTemplate(
            f"{name}-template",
            **template_args,
            instance_type=block.instance_type,
            instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block"),
            capacity_reservation_specification=aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                    capacity_reservation_id=block.reservation_id
                )
            ),
            opts=child,
        )
        size = schedule.size
        group = aws.autoscaling.Group(
            f"{name}-asg",
            vpc_zone_identifiers=subnet_ids,
            min_size=size,
            max_size=size,
            desired_capacity=size,
            # AWS: a specific version, never $Latest or $Default.
            launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            wait_for_capacity_timeout="0",
            ignore_failed_scaling_activities=True,
            # Scale-in must terminate (and the hook drain) at the scheduled drain: no scale-in protection.
            protect_from_scale_in=False,
            suspended_processes=list(SUSPENDED_PROCESSES),
            tags=[
                aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
                for k, v in sorted({**pool_tags, CAPACITY_BLOCK_TAG: block.reservation_id}.items())
            ],
            # The size the actions that have run set (a run declares what is right now, so an `up` after an
            # edited or missed drain puts it right); nodes join once the pool's access entry exists.
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)),
        )
        drain_hook(f"{name}-drain", group, config, child)
        for action, moment, count in (
            ("start", schedule.scale_out_at, block.instance_count),
            ("drain", schedule.drain_at, 0),
        ):
            if moment is not None:
                aws.autoscaling.Schedule(
                    f"{name}-{action}",
                    autoscaling_group_name=group.name,
                    scheduled_action_name=f"capacity-block-{action}",
                    start_time=utc_text(moment),
                    min_size=count,
                    max_size=count,
                    desired_capacity=count,
                    opts=child,
                )
        self.asg_name = group.name
        self.asg_arn = group.arn
        self.template_arn = template.arn
        self.register_outputs({"asg_name": self.asg_name, "asg_arn": self.asg_arn, "template_arn": self.template_arn})


def mixed_instances_policy(
    plan: CapacityPlan, gpus_per_instance: int, template_id: pulumi.Input[str], template_version: pulumi.Input[int]
) -> aws.autoscaling.GroupMixedInstancesPolicyArgs:
    """The plan in instances. No weights (kubernetes/autoscaler#4851: the autoscaler ignores them and
    counts instances); see `instances_distribution`."""
    return aws.autoscaling.GroupMixedInstancesPolicyArgs(
        instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
            **instances_distribution(plan, gpus_per_instance)
        ),
        launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
            launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                # A version number, not "$Latest": the provider starts no instance refresh for "$Latest",
                # so new AMIs and user data would never roll.
                launch_template_id=template_id,
                version=pulumi.Output.from_input(template_version).apply(str),
            ),
            overrides=[
                aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(instance_type=instance_type)
                for instance_type in plan.instance_types
            ],
        ),
    )
