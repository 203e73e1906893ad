"""The GPU instance types this package can place workloads on (a data table, read once)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_TABLE = Path(__file__).parent / "data" / "gpu_instance_types.json"


@dataclass(frozen=True)
class GpuInstanceType:
    name: str
    gpu: str
    gpus: int
    gpu_memory_gib: int
    vcpus: int
    memory_gib: int
    instance_store_disks: int
    instance_store_disk_gb: int
    arch: str
    nitro: bool  # io2 Block Express above 32,000 IOPS needs Nitro
    mig: bool  # NVIDIA Multi-Instance GPU: A100/H100 class only
    efa_interfaces: int  # Elastic Fabric Adapters the type takes (0: none)
    network_cards: int
    network_node_layers: int  # EC2 instance topology's network nodes above an instance (0: the type reports none)

    @property
    def has_instance_store(self) -> bool:
        return self.instance_store_disks > 0


@cache
def gpu_instance_types() -> dict[str, GpuInstanceType]:
    table = json.loads(_TABLE.read_text())["types"]
    rows = {}
    for name, entry in table.items():
        disks, disk_gb = entry.pop("instance_store")
        rows[name] = GpuInstanceType(name=name, instance_store_disks=disks, instance_store_disk_gb=disk_gb, **entry)
    return rows


def gpu_instance_type(name: str) -> GpuInstanceType:
    """The table's entry for `name`; a ValueError listing the known types otherwise."""
    try:
        return gpu_instance_types()[name]
    except KeyError:
        raise ValueError(
            f"{name!r} is not a known GPU instance type; known: {', '.join(sorted(gpu_instance_types()))}"
        ) from None


def shared_network_layers(names: list[str]) -> int:
    """The network node layers every one of these types reports, or 0 if one reports none or they differ (a
    topology's levels are one list for all the pool's nodes)."""
    depths = {gpu_instance_type(name).network_node_layers for name in names}
    return depths.pop() if len(depths) == 1 else 0
