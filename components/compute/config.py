"""The compute slice of the stack config (GPU node groups, GPU sharing) and what follows from it alone. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from components.capacity.workload_classes import WorkloadClass, workload_classes
from components.catalog.instance_types import gpu_instance_type, gpu_instance_types
from components.common.validation import FieldError
from components.compute.capacity_block import CapacityBlockConfig
from components.compute.labels import NODE_GROUP_LABEL, WORKLOAD_CLASS_LABEL
from components.compute.node_bootstrap import AMI_FAMILY_TRAITS
from seedance_client.contract import SPOT_NOTICE_SECONDS

# The spot notice is two minutes: a scale-in drain gets at least as long, batch its full tolerance.
MIN_TERMINATION_HEARTBEAT_SECONDS = SPOT_NOTICE_SECONDS
# A node with this label uses the named entry of the plugin's config map.
CONFIG_LABEL = "nvidia.com/device-plugin.config"


class GpuSharingConfig(BaseModel):
    """How a group's GPUs are shared between pods."""

    model_config = ConfigDict(extra="forbid")

    # No MIG: the device plugin's MIG strategy only advertises partitions, something must create them (the
    # GPU operator's MIG manager, or Bottlerocket's own settings), and this stack deploys neither yet.
    mode: Literal["none", "time-slicing"] = Field(
        "none",
        description="time-slicing: each GPU is advertised `replicas` times (no memory isolation). MIG is "
        "not offered: no MIG manager is deployed to partition the GPUs.",
    )
    replicas: int = Field(4, ge=2, le=48, description="Pods sharing one GPU with time-slicing.")

    @property
    def gpu_multiplier(self) -> int:
        """How many `nvidia.com/gpu` each physical GPU becomes."""
        return self.replicas if self.mode == "time-slicing" else 1


class WorkloadClassOverrides(BaseModel):
    """Per-group changes to the workload class defaults (the source's cost/reliability matrix)."""

    model_config = ConfigDict(extra="forbid")

    max_spot_share: float | None = Field(None, ge=0, le=1, description="Largest share of the group's GPUs on spot.")
    ri_baseline: float | None = Field(None, ge=0, le=1, description="Share of desired GPUs kept on on-demand/RI.")
    interruption_tolerance_seconds: int | None = Field(
        None, ge=0, le=86_400, description="Longest interruption the work tolerates."
    )
    min_placement_score: int | None = Field(
        None,
        ge=1,
        le=10,
        description="Spot starts only when EC2 scores this high some zone for the group's whole spot share, or every "
        "zone for its part.",
    )
    lost_work_seconds: int | None = Field(
        None, ge=0, le=86_400, description="Work an interrupted GPU loses on average (half a checkpoint interval)."
    )
    warmup_seconds: int | None = Field(
        None, ge=0, le=7_200, description="Time a replacement node takes to do useful work (start, pull, load)."
    )


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
    root_volume_gib: int = Field(
        200,
        ge=50,
        le=4000,
        description="Encrypted gp3 volume for container images (large): "
        "the root volume on al2023, the data volume /dev/xvdb on Bottlerocket.",
    )
    local_storage: bool = Field(False, description="Mount each NVMe instance-store disk for local PersistentVolumes.")
    single_zone: bool = Field(
        False,
        description="Launch only in the stack's first zone, where pre-provisioned "
        "checkpoint volumes live (the autoscaler then starts a node where the volume is).",
    )
    efa: bool = Field(
        False,
        description="A multi-node training pool: every Elastic Fabric Adapter its types take (one per network "
        "card) in the launch template, for NCCL across nodes. Needs types that all take EFA on the same network "
        "cards, and single_zone (EFA's OS-bypass traffic stays in one subnet).",
    )
    placement_group: bool = Field(
        False,
        description="An EFA pool's on-demand and spot nodes in a cluster placement group (close on the "
        "network, for NCCL). Its Capacity Blocks' groups never join it (AWS places a block's instances itself), "
        "and a pool whose types have On-Demand Capacity Reservations may not set it.",
    )
    gpu_sharing: GpuSharingConfig = Field(default_factory=GpuSharingConfig)
    class_overrides: WorkloadClassOverrides = Field(default_factory=WorkloadClassOverrides)
    capacity_blocks: list[CapacityBlockConfig] = Field(
        [],
        max_length=4,
        description="Capacity Blocks for ML the "
        "account bought for this pool: each runs as its own group of "
        "the pool's nodes, from the block's start to its drain.",
    )

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
            raise ValueError(
                f"mixes instance shapes ({', '.join(f'{g} GPUs/{c} vCPUs' for g, c in shapes)}): the cluster "
                "autoscaler models a group as copies of its first type; allowed: one GPU and vCPU count "
                "per group (split the group)"
            )
        return values

    @model_validator(mode="after")
    def _sizes(self) -> GpuNodeGroupConfig:
        if not self.min_gpus <= self.desired_gpus <= self.max_gpus:
            raise FieldError(
                "desired_gpus",
                self.desired_gpus,
                f"need min_gpus <= desired_gpus <= max_gpus, got {self.min_gpus}, {self.desired_gpus}, {self.max_gpus}",
            )
        if self.local_storage:
            without = [t for t in self.instance_types if not gpu_instance_type(t).has_instance_store]
            if without:
                raise FieldError(
                    "local_storage",
                    True,
                    f"{', '.join(without)} have no NVMe instance store; allowed: "
                    "false, or only types with instance store",
                )
            if self.ami_family != "al2023":
                raise FieldError(
                    "local_storage",
                    True,
                    "needs ami_family al2023 (nodeadm mounts each disk); "
                    "Bottlerocket gives instance store to containerd and kubelet only",
                )
        if self.efa:
            self._check_efa()
        elif self.placement_group:
            raise FieldError(
                "placement_group", True, "only for a multi-node pool (efa: true); allowed: false, or efa: true"
            )
        per_instance = self.gpus_per_instance
        if self.max_gpus < per_instance:
            raise FieldError(
                "max_gpus",
                self.max_gpus,
                f"cannot hold one instance of {per_instance} GPUs; allowed: >= {per_instance}, or smaller types",
            )
        for key in ("min_gpus", "desired_gpus", "max_gpus"):
            if getattr(self, key) % per_instance:
                raise FieldError(
                    key,
                    getattr(self, key),
                    f"the group's instances have {per_instance} GPUs each; allowed: a multiple of {per_instance}",
                )
        ids = [block.reservation_id for block in self.capacity_blocks]
        for index, block in enumerate(self.capacity_blocks):
            where = f"capacity_blocks[{index}]"
            if block.instance_type not in self.instance_types:
                raise FieldError(
                    f"{where}.instance_type",
                    block.instance_type,
                    f"allowed: one of the group's instance types ({', '.join(self.instance_types)})",
                )
            if ids.index(block.reservation_id) != index:
                raise FieldError(f"{where}.reservation_id", block.reservation_id, "lists a block twice")
            try:
                block.check_drain(self.termination_heartbeat_seconds)
            except FieldError as error:
                raise FieldError(f"{where}.{error.field}", error.value, error.allowed) from None
        return self

    def _check_efa(self) -> None:
        types = [gpu_instance_type(t) for t in self.instance_types]
        without = [t.name for t in types if t.efa_interfaces == 0]
        if without:
            raise FieldError(
                "efa", True, f"{', '.join(without)} take no Elastic Fabric Adapter; allowed: false, or only EFA types"
            )
        cards = sorted({(t.network_cards, t.efa_interfaces) for t in types})
        partial = [t.name for t in types if t.efa_interfaces != t.network_cards]
        if partial:
            raise FieldError(
                "efa",
                True,
                f"{', '.join(partial)} have network cards without EFA; allowed: types with an adapter on every card "
                "(components/compute/efa.py puts one on each)",
            )
        if len(cards) > 1:
            shapes = ", ".join(f"{c} cards/{e} EFA" for c, e in cards)
            raise FieldError(
                "efa",
                True,
                f"its types differ in network cards and adapters ({shapes}): "
                "one launch template lists one interface per card; allowed: types alike (split the group)",
            )
        if not self.single_zone:
            raise FieldError(
                "single_zone",
                False,
                "an EFA pool's nodes must share a subnet (EFA's OS-bypass traffic does not leave it); allowed: true",
            )

    @property
    def termination_heartbeat_seconds(self) -> int:
        """How long a terminating node may take to drain: the class's interruption tolerance, at least the
        two minutes a spot notice gives."""
        return max(MIN_TERMINATION_HEARTBEAT_SECONDS, self.workload().interruption_tolerance_seconds)

    def launch_zones(self, zones: Sequence[str]) -> tuple[str, ...]:
        """Where the group launches: the stack's zones, or the first alone (`single_zone`)."""
        return tuple(zones[:1] if self.single_zone else zones)

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


def gpu_pool_selector(config: GpuNodeGroupConfig) -> dict[str, str]:
    """The node labels that select this group's nodes (what pods put in their nodeSelector)."""
    return {WORKLOAD_CLASS_LABEL: config.workload_class, NODE_GROUP_LABEL: config.name}


def helm_device_plugin_sharing(groups: list[GpuNodeGroupConfig]) -> dict[str, GpuSharingConfig]:
    """The sharing settings the Helm device plugin serves: groups whose OS runs no plugin of its own."""
    return {g.name: g.gpu_sharing for g in groups if not AMI_FAMILY_TRAITS[g.ami_family].builtin_device_plugin}


def allocatable_gpus(config: GpuNodeGroupConfig) -> dict[str, int]:
    """`nvidia.com/gpu` each instance type advertises, after sharing."""
    return {t: gpu_instance_type(t).gpus * config.gpu_sharing.gpu_multiplier for t in config.instance_types}
