"""`GpuNodeGroup`: a self-managed GPU node group whose Spot / On-Demand mix comes from a `CapacityPlan`.

A managed node group has one capacity type; an on-demand base plus a spot share in one group
needs an Auto Scaling group with a MixedInstancesPolicy, so this is built on `aws.autoscaling`.
"""

from __future__ import annotations

import math

from typing import Literal, Mapping

import pulumi
import pulumi_aws as aws
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from components.capacity.planner import BREAKER_TAG, CapacityPlan
from components.pricing.reserved import ReservedHolding
from components.common.validation import FieldError
from components.catalog.instance_types import gpu_instance_type, gpu_instance_types
from components.compute.node_role import node_role
from components.capacity.holdings import HOLDINGS_TAG, holdings_tag
from components.compute.labels import ACCELERATOR_LABEL, AMI_FAMILY_LABEL, GPU_TAINT, LOCAL_NVME_LABEL, NODE_GROUP_LABEL, WORKLOAD_CLASS_LABEL
from components.compute.device_plugin import CONFIG_LABEL, GpuSharingConfig
from components.compute.node_bootstrap import AMI_FAMILY_TRAITS, ClusterJoin, ami_ssm_parameter, encoded_user_data
from components.capacity.workload_classes import WorkloadClass, workload_classes

NTH_MANAGED_TAG = "aws-node-termination-handler/managed"
# The spot notice is two minutes: a scale-in drain gets at least as long, batch its full tolerance.
MIN_TERMINATION_HEARTBEAT_SECONDS = 120


class WorkloadClassOverrides(BaseModel):
    """Per-group changes to the workload class defaults (the source's cost/reliability matrix)."""

    model_config = ConfigDict(extra="forbid")

    max_spot_share: float | None = Field(None, ge=0, le=1, description="Largest share of the group's GPUs on spot.")
    ri_baseline: float | None = Field(None, ge=0, le=1, description="Share of desired GPUs kept on on-demand/RI.")
    interruption_tolerance_seconds: int | None = Field(None, ge=0, le=86_400,
                                                       description="Longest interruption the work tolerates.")
    min_placement_score: int | None = Field(None, ge=1, le=10, description="Spot starts only when EC2 scores this high some zone for the group's whole spot share, or every zone for its part.")
    lost_work_seconds: int | None = Field(None, ge=0, le=86_400,
                                          description="Work an interrupted GPU loses on average (half a checkpoint interval).")
    warmup_seconds: int | None = Field(None, ge=0, le=7_200,
                                       description="Time a replacement node takes to do useful work (start, pull, load).")


class GpuNodeGroupConfig(BaseModel):
    """One GPU node group; capacity is configured in GPUs. Every type in a group has the same GPU and vCPU
    count: the cluster autoscaler models a group as copies of its first type and counts instances, not
    weights (kubernetes/autoscaler#4851), so the Auto Scaling group counts instances."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,30}$", description="Group name, used in labels and resource names.")
    workload_class: Literal["batch", "online"] = Field(description="batch (training) or online (serving).")
    instance_types: list[str] = Field(min_length=1, max_length=20, description="Candidate GPU instance types.")
    min_gpus: int = Field(0, ge=0, le=4096, description="Fewest GPUs the autoscaler keeps.")
    desired_gpus: int = Field(ge=0, le=4096, description="GPUs at creation (the autoscaler owns it later).")
    max_gpus: int = Field(ge=1, le=4096, description="Most GPUs the autoscaler may run.")
    ami_family: Literal["al2023", "bottlerocket"] = Field("al2023", description="EKS-optimised NVIDIA AMI family.")
    root_volume_gib: int = Field(200, ge=50, le=4000, description="Encrypted gp3 volume for container images (large): "
                                 "the root volume on al2023, the data volume /dev/xvdb on Bottlerocket.")
    local_storage: bool = Field(False, description="Mount each NVMe instance-store disk for local PersistentVolumes.")
    gpu_sharing: GpuSharingConfig = Field(default_factory=GpuSharingConfig)
    class_overrides: WorkloadClassOverrides = Field(default_factory=WorkloadClassOverrides)

    @field_validator("instance_types")
    @classmethod
    def _known_gpu_types(cls, values: list[str]) -> list[str]:
        known = gpu_instance_types()
        unknown = [v for v in values if v not in known]
        if unknown:
            raise ValueError(f"{', '.join(unknown)} not in the GPU instance table; known: {', '.join(sorted(known))}")
        if len(set(values)) != len(values):
            raise ValueError("lists a type twice")
        if len({known[v].arch for v in values}) > 1:
            raise ValueError("mixes CPU architectures; one launch template serves one architecture")
        shapes = sorted({(known[v].gpus, known[v].vcpus) for v in values})
        if len(shapes) > 1:
            raise ValueError(f"mixes instance shapes ({', '.join(f'{g} GPUs/{c} vCPUs' for g, c in shapes)}): the cluster "
                             "autoscaler models a group as copies of its first type; allowed: one GPU and vCPU count "
                             "per group (split the group)")
        return values

    @model_validator(mode="after")
    def _sizes(self) -> "GpuNodeGroupConfig":
        if not self.min_gpus <= self.desired_gpus <= self.max_gpus:
            raise FieldError("desired_gpus", self.desired_gpus,
                             f"need min_gpus <= desired_gpus <= max_gpus, got {self.min_gpus}, {self.desired_gpus}, "
                             f"{self.max_gpus}")
        if self.local_storage:
            without = [t for t in self.instance_types if not gpu_instance_type(t).has_instance_store]
            if without:
                raise FieldError("local_storage", True, f"{', '.join(without)} have no NVMe instance store; allowed: "
                                 "false, or only types with instance store")
            if self.ami_family != "al2023":
                raise FieldError("local_storage", True, "needs ami_family al2023 (nodeadm mounts each disk); "
                                 "Bottlerocket gives instance store to containerd and kubelet only")
        if self.gpu_sharing.mode == "mig":
            # The device plugin's MIG strategy only advertises partitions; something must create them (the
            # GPU operator's MIG manager, or Bottlerocket's own settings), and this stack deploys neither yet.
            raise FieldError("gpu_sharing.mode", "mig", "no MIG manager is deployed, so nothing would partition "
                             "the GPUs; allowed: none, or time-slicing")
        per_instance = self.gpus_per_instance
        if self.max_gpus < per_instance:
            raise FieldError("max_gpus", self.max_gpus, f"cannot hold one instance of {per_instance} GPUs; "
                             f"allowed: >= {per_instance}, or smaller types")
        for key in ("min_gpus", "desired_gpus", "max_gpus"):
            if getattr(self, key) % per_instance:
                raise FieldError(key, getattr(self, key), f"the group's instances have {per_instance} GPUs each; "
                                 f"allowed: a multiple of {per_instance}")
        return self

    @property
    def gpus_per_instance(self) -> int:
        return gpu_instance_type(self.instance_types[0]).gpus

    @property
    def arch(self) -> str:
        return gpu_instance_type(self.instance_types[0]).arch

    def workload(self) -> WorkloadClass:
        """The class defaults with this group's overrides applied."""
        base = workload_classes()[self.workload_class]
        changes = self.class_overrides.model_dump(exclude_none=True)
        return WorkloadClass(**{**base.__dict__, **changes})


class GpuNodeGroup(pulumi.ComponentResource):
    """Launch template, node role and access entry, and an Auto Scaling group rendered from the plan."""

    asg_name: pulumi.Output[str]
    asg_arn: pulumi.Output[str]
    node_role_arn: pulumi.Output[str]

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
        budget_breaker: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:compute:GpuNodeGroup", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(tags)
        role, attachments = node_role(name, self, tags)
        profile = aws.iam.InstanceProfile(f"{name}-profile", role=role.name, tags=tags, opts=child)
        # EC2_LINUX entries get the node permissions from EKS itself; no policy association.
        access = aws.eks.AccessEntry(f"{name}-access", cluster_name=join.apply(lambda j: j.cluster_name),
                                     principal_arn=role.arn,
                                     type="EC2_LINUX", tags=tags, opts=child)

        traits = AMI_FAMILY_TRAITS[config.ami_family]
        shared = config.gpu_sharing.mode != "none"
        labels = {**gpu_pool_selector(config), AMI_FAMILY_LABEL: config.ami_family,
                  # Tells the autoscaler a new node is a GPU node before its device plugin reports GPUs.
                  ACCELERATOR_LABEL: f"nvidia-{gpu_instance_type(config.instance_types[0]).gpu.lower()}",
                  **({LOCAL_NVME_LABEL: "true"} if config.local_storage else {}),
                  # Sharing goes to the OS's own device plugin, or to the Helm plugin's named config.
                  **({CONFIG_LABEL: config.name} if shared and not traits.builtin_device_plugin else {})}
        replicas = config.gpu_sharing.replicas if shared and traits.builtin_device_plugin else None
        user_data = join.apply(
            lambda j: encoded_user_data(config.ami_family, j, labels, [GPU_TAINT], config.local_storage, replicas)
        )
        image = aws.ssm.get_parameter_output(
            name=ami_ssm_parameter(config.ami_family, kubernetes_version, config.arch),
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-template",
            image_id=image.insecure_value,
            user_data=user_data,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=profile.arn),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=1,
            ),
            network_interfaces=[aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                associate_public_ip_address="false", security_groups=[node_security_group_id],
                delete_on_termination="true",
            )],
            # Every device the AMI maps, encrypted with the stack key; the one holding container images
            # gets the configured size, the others keep the AMI's snapshot size.
            block_device_mappings=[aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=device,
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    volume_type="gp3", encrypted="true", kms_key_id=kms_key_arn, delete_on_termination="true",
                    volume_size=config.root_volume_gib if device == traits.image_device else None,
                ),
            ) for device in traits.block_devices],
            tag_specifications=[aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                                for kind in ("instance", "volume", "network-interface")],
            update_default_version=True,
            tags=tags,
            opts=child,
        )

        reserved = holdings_tag(plan_holdings(plan))  # priced by the cost estimate as the decision priced them
        group = aws.autoscaling.Group(
            f"{name}-asg",
            vpc_zone_identifiers=subnet_ids,
            # Instances, not GPUs: the cluster autoscaler reads the sizes as node counts.
            min_size=config.min_gpus // config.gpus_per_instance,
            max_size=config.max_gpus // config.gpus_per_instance,
            desired_capacity=config.desired_gpus // config.gpus_per_instance,
            capacity_rebalance=plan.capacity_rebalance,
            # A zone that cannot launch sends its share to the others, as the planner's placement rule
            # assumes (AWS's default, pinned here): balanced-only would leave the share unlaunched.
            availability_zone_distribution=aws.autoscaling.GroupAvailabilityZoneDistributionArgs(
                capacity_distribution_strategy="balanced-best-effort"),
            mixed_instances_policy=mixed_instances_policy(plan, config.gpus_per_instance, template.id,
                                                          template.latest_version),
            instance_refresh=aws.autoscaling.GroupInstanceRefreshArgs(
                strategy="Rolling",
                preferences=aws.autoscaling.GroupInstanceRefreshPreferencesArgs(
                    min_healthy_percentage=90 if config.workload_class == "online" else 50,
                    instance_warmup="300",
                ),
            ),
            tags=[aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
                  for k, v in sorted({**asg_tags(cluster_name, f"{cluster_name}-{config.name}", labels, tags,
                                                       node_template_resources(config)),
                                      **({BREAKER_TAG: "on"} if budget_breaker else {}),
                                      **({HOLDINGS_TAG: reserved} if reserved else {})}.items())],
            # The cluster autoscaler owns the size once the group exists (pulumi-eks #321, #709, #985).
            opts=pulumi.ResourceOptions(parent=self, depends_on=[access, *attachments],
                                        ignore_changes=["desiredCapacity"]),
        )
        # Scale-in and rebalancing terminations wait for the termination handler to drain the node.
        aws.autoscaling.LifecycleHook(
            f"{name}-drain",
            autoscaling_group_name=group.name,
            lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
            heartbeat_timeout=max(MIN_TERMINATION_HEARTBEAT_SECONDS, config.workload().interruption_tolerance_seconds),
            default_result="CONTINUE",
            opts=child,
        )
        self.asg_name = group.name
        self.asg_arn = group.arn
        self.node_role_arn = role.arn
        self.register_outputs({"asg_name": self.asg_name, "asg_arn": self.asg_arn, "node_role_arn": self.node_role_arn})


def plan_holdings(plan: CapacityPlan) -> list[ReservedHolding]:
    """The Reserved Instances the plan was decided with (its constraints record them)."""
    return [ReservedHolding(instance_type=t, count=int(count), usd_per_hour=float(rate), source="plan")
            for t, count, rate in plan.constraints.get("holdings", [])]


def gpu_pool_selector(config: GpuNodeGroupConfig) -> dict[str, str]:
    """The node labels that select this group's nodes (what pods put in their nodeSelector)."""
    return {WORKLOAD_CLASS_LABEL: config.workload_class, NODE_GROUP_LABEL: config.name}


def helm_device_plugin_sharing(groups: list[GpuNodeGroupConfig]) -> dict[str, GpuSharingConfig]:
    """The sharing settings the Helm device plugin serves: groups whose OS runs no plugin of its own."""
    return {g.name: g.gpu_sharing for g in groups if not AMI_FAMILY_TRAITS[g.ami_family].builtin_device_plugin}


def allocatable_gpus(config: GpuNodeGroupConfig) -> dict[str, int]:
    """`nvidia.com/gpu` each instance type advertises, after sharing."""
    return {t: gpu_instance_type(t).gpus * config.gpu_sharing.gpu_multiplier for t in config.instance_types}


def mixed_instances_policy(plan: CapacityPlan, gpus_per_instance: int, template_id: pulumi.Input[str],
                           template_version: pulumi.Input[int]) -> aws.autoscaling.GroupMixedInstancesPolicyArgs:
    """The plan in instances. No weights (kubernetes/autoscaler#4851: the autoscaler ignores them and
    counts instances); the on-demand base rounds up, so spot never exceeds the plan's share at any size."""
    return aws.autoscaling.GroupMixedInstancesPolicyArgs(
        instances_distribution=aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
            on_demand_base_capacity=math.ceil(plan.on_demand_base_gpus / gpus_per_instance),
            on_demand_percentage_above_base_capacity=plan.on_demand_percentage_above_base,
            on_demand_allocation_strategy=plan.on_demand_allocation_strategy,
            spot_allocation_strategy=plan.spot_allocation_strategy,
        ),
        launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
            launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                # A version number, not "$Latest": the provider starts no instance refresh for "$Latest",
                # so new AMIs and user data would never roll.
                launch_template_id=template_id, version=pulumi.Output.from_input(template_version).apply(str),
            ),
            overrides=[aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(instance_type=instance_type)
                       for instance_type in plan.instance_types],
        ),
    )


def node_template_resources(config: GpuNodeGroupConfig) -> dict[str, str]:
    """What one node offers, for the cluster autoscaler's scale-from-zero template: GPUs after sharing
    (it would read the physical count from the type), and the smallest type's CPU and memory, so the
    template never promises more than any override delivers."""
    types = [gpu_instance_type(t) for t in config.instance_types]
    return {"nvidia.com/gpu": str(config.gpus_per_instance * config.gpu_sharing.gpu_multiplier),
            "cpu": str(min(t.vcpus for t in types)), "memory": f"{min(t.memory_gib for t in types)}Gi"}


def asg_tags(cluster_name: str, node_name: str, labels: Mapping[str, str], tags: Mapping[str, str],
             resources: Mapping[str, str]) -> dict[str, str]:
    """Tags of the group, propagated to its instances: cost tags, cluster ownership, autoscaler
    discovery and scale-from-zero templates (labels, the GPU taint, resources), termination-handler scope."""
    autoscaler = "k8s.io/cluster-autoscaler"
    return {
        **tags,
        "Name": node_name,
        f"kubernetes.io/cluster/{cluster_name}": "owned",
        f"{autoscaler}/enabled": "true",
        f"{autoscaler}/{cluster_name}": "owned",
        **{f"{autoscaler}/node-template/label/{k}": v for k, v in labels.items()},
        f"{autoscaler}/node-template/taint/{GPU_TAINT['key']}": f"{GPU_TAINT['value']}:{GPU_TAINT['effect']}",
        **{f"{autoscaler}/node-template/resources/{k}": v for k, v in resources.items()},
        NTH_MANAGED_TAG: "true",
    }
