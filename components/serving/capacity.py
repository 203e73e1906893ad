"""Can every Triton replica the autoscalers may ask for be scheduled once the cluster autoscaler acts,
within the GPU group's maximum? Pure arithmetic over the config, shown by `seedance plan`.

Per node, a replica needs its GPUs (after sharing), its vCPUs and its memory; the kubelet, the system
daemons and the per-node exporters keep about one vCPU and 15 % of memory (the same allowance the
config's per-replica check uses). The most pods a group can run is its most nodes times the pods the
smallest of its types holds. The pods a group must hold are every model set's HPA maximum, plus the
rolling update's surge pod, plus the canary.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.catalog.instance_types import gpu_instance_type
from components.common.tables import table

RESERVED_VCPUS = 1
USABLE_MEMORY = 0.85
SURGE_PODS = 1  # the Triton Deployment's maxSurge


@dataclass(frozen=True)
class ServingDemand:
    name: str
    gpus: int
    cpu: float
    memory_gib: int
    hpa_min: int
    hpa_max: int
    canary: int


@dataclass(frozen=True)
class GroupCapacity:
    group: str
    gpus_per_node: int  # allocatable nvidia.com/gpu after sharing
    max_nodes: int
    pods_per_node: int
    limited_by: str
    demands: tuple[ServingDemand, ...]

    @property
    def schedulable(self) -> int:
        return self.max_nodes * self.pods_per_node

    @property
    def needed(self) -> int:
        return sum(d.hpa_max + SURGE_PODS + d.canary for d in self.demands)

    @property
    def fits(self) -> bool:
        return self.needed <= self.schedulable


def pods_per_node(instance_types: list[str], gpu_multiplier: int, demand: ServingDemand) -> tuple[int, str]:
    """Replicas of `demand` the smallest of the types holds, and what limits it."""
    fewest = None
    for name in instance_types:
        spec = gpu_instance_type(name)
        limits = {
            "GPUs": spec.gpus * gpu_multiplier // demand.gpus,
            "vCPUs": int((spec.vcpus - RESERVED_VCPUS) // demand.cpu),
            "memory": int(spec.memory_gib * USABLE_MEMORY // demand.memory_gib),
        }
        bound = min(limits, key=limits.__getitem__)
        if fewest is None or limits[bound] < fewest[0]:
            fewest = (limits[bound], f"{bound} on {name}")
    assert fewest is not None  # a group lists at least one type
    return fewest


def group_capacity(
    group: str,
    instance_types: list[str],
    gpus_per_instance: int,
    gpu_multiplier: int,
    max_gpus: int,
    demands: list[ServingDemand],
) -> GroupCapacity:
    """Model sets sharing a group are packed as the most demanding one (the conservative bound)."""
    per_node, limit = min(pods_per_node(instance_types, gpu_multiplier, d) for d in demands)
    return GroupCapacity(
        group=group,
        gpus_per_node=gpus_per_instance * gpu_multiplier,
        max_nodes=max_gpus // gpus_per_instance,
        pods_per_node=per_node,
        limited_by=limit,
        demands=tuple(demands),
    )


def table_lines(capacities: list[GroupCapacity]) -> list[str]:
    """A markdown table: each online group's Triton pods needed at most against what it holds."""
    rows = [
        [
            c.group,
            c.gpus_per_node,
            c.max_nodes,
            f"{c.pods_per_node} ({c.limited_by})",
            "; ".join(f"{d.name}: {d.hpa_min}-{d.hpa_max} + {SURGE_PODS} + {d.canary}" for d in c.demands),
            c.needed,
            c.schedulable,
            "yes" if c.fits else "NO",
        ]
        for c in capacities
    ]
    return table(
        [
            "group",
            "GPUs/node",
            "max nodes",
            "pods/node (limit)",
            "model set: HPA min-max + surge + canary",
            "pods needed",
            "pods schedulable",
            "fits",
        ],
        rows,
        markdown=True,
    )
