"""How many series the stack's Prometheus holds at the groups' maxima, and the memory that takes. Pure.

Counted per source from what each exposes (and what the scrape keeps), at the stack's largest size:
every node at its group's maximum, each Triton set at its HPA maximum plus canary. Assumptions,
stated here because no running cluster measures them for a plan: a system node runs 20 containers, a
GPU node 8 (agents and its workloads); a Triton pod serves 10 models. Memory: Prometheus's head
block costs about 4 KiB an active series with its index and the rules' samples (the upstream
operational guidance puts it at 3-8 KiB): the request is a base of 512 MiB (the process, WAL replay,
the rules' evaluation) plus 4 KiB a series; the limit adds 1.5 GiB for compaction and dashboard queries
over days. Disk: Prometheus's storage guide gives retention seconds x samples a second x 1-2 bytes a
sample; at 2 bytes, a quarter more for the WAL and compaction, and 2 GiB the TSDB keeps free below the
volume (its retention size), never less than 8 GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from components.common.addon_resources import ADDON_RESOURCES
from components.common.manifests import quantity
from components.monitoring.config import MonitoringConfig
from components.monitoring.opencost import CPU_USD_PER_HOUR, RAM_USD_PER_GIB_HOUR
from components.pricing.prices import HOURS_PER_MONTH

SYSTEM_NODE_CONTAINERS = 20
GPU_NODE_CONTAINERS = 8
MODELS_PER_TRITON_POD = 10
# Series per unit, from each source's metric set.
CADVISOR_PER_CONTAINER = 4  # the kept cpu, memory and two network series (the job keeps only these)
OPENCOST_PER_CONTAINER = 8  # allocation (cpu, memory, gpu), requests, limits, status, labels, owner
OPENCOST_PER_NODE = 14  # hourly costs, capacity and allocatable, labels
DCGM_PER_GPU = 24  # the chart's counters file
TRITON_PER_MODEL = 40  # 8 counters, 2 gauges, 5 summaries x (5 quantiles + sum + count)
TRITON_PER_POD = 12  # GPU, CPU and memory pool gauges
RULE_SERIES_PER_NAMESPACE = 10
BASE_MIB = 512
QUERY_HEADROOM_MIB = 1536
KIB_PER_SERIES = 4
BYTES_PER_SAMPLE = 2
WAL_AND_COMPACTION = 1.25
FREE_BELOW_VOLUME_GIB = 2
MIN_HISTORY_GIB = 8


@dataclass(frozen=True)
class SeriesEstimate:
    by_source: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.by_source.values())

    @property
    def memory_request_mib(self) -> int:
        return BASE_MIB + -(-self.total * KIB_PER_SERIES // 1024)

    @property
    def memory_limit_mib(self) -> int:
        return self.memory_request_mib + QUERY_HEADROOM_MIB

    def history_gib(self, retention_hours: int, scrape_interval_seconds: int) -> int:
        """The volume that holds `retention_hours` of every series at one sample a scrape."""
        samples = self.total * retention_hours * 3600 / scrape_interval_seconds
        tsdb_gib = samples * BYTES_PER_SAMPLE * WAL_AND_COMPACTION / 2**30
        return max(MIN_HISTORY_GIB, math.ceil(tsdb_gib) + FREE_BELOW_VOLUME_GIB)

    def lines(self) -> list[str]:
        return [f"  {source}: {count:,} series" for source, count in self.by_source.items()] + [
            f"  total {self.total:,} active series at the maxima: memory request {self.memory_request_mib} MiB, "
            f"limit {self.memory_limit_mib} MiB"
        ]


def series_estimate(
    *, system_nodes: int, gpu_nodes: int, gpus: int, triton_pods: int, namespaces: int
) -> SeriesEstimate:
    containers = system_nodes * SYSTEM_NODE_CONTAINERS + gpu_nodes * GPU_NODE_CONTAINERS
    nodes = system_nodes + gpu_nodes
    return SeriesEstimate(
        {
            "cAdvisor (kept metrics)": containers * CADVISOR_PER_CONTAINER,
            "OpenCost": containers * OPENCOST_PER_CONTAINER + nodes * OPENCOST_PER_NODE,
            "DCGM exporter": gpus * DCGM_PER_GPU,
            "Triton": triton_pods * (MODELS_PER_TRITON_POD * TRITON_PER_MODEL + TRITON_PER_POD),
            "recording rules": namespaces * RULE_SERIES_PER_NAMESPACE + nodes,
        }
    )


def history_volume_gib(config: MonitoringConfig, series: SeriesEstimate) -> int:
    """Prometheus's volume: the config's size, else what the series take over the retention."""
    return config.storage_gib or series.history_gib(config.retention_hours, config.scrape_interval_seconds)


# What the server requested before its memory was sized from the series it holds.
UNSIZED_SERVER_MIB = 512


def _requested(addon: str, resource: str) -> float:
    """What an add-on requests of a resource (its own requests are quantities)."""
    requested = quantity(ADDON_RESOURCES[addon]["requests"][resource])
    assert requested is not None
    return requested


def cost_loop_monthly_usd(series: SeriesEstimate) -> dict[str, float]:
    """What the cost loop's in-cluster parts take of the system nodes a month, at OpenCost's rates (the
    share of a node they reserve; the nodes grow only if the requests no longer fit)."""

    def monthly(cpu: float, gib: float) -> float:
        return round((cpu * CPU_USD_PER_HOUR + gib * RAM_USD_PER_GIB_HOUR) * HOURS_PER_MONTH, 2)

    parts = {
        name: monthly(_requested(name, "cpu"), _requested(name, "memory"))
        for name in ("opencost", "grafana", "alertmanager")
    }
    parts["prometheus (memory sized from the series)"] = monthly(
        0, max(0, series.memory_request_mib - UNSIZED_SERVER_MIB) / 1024
    )
    return parts
