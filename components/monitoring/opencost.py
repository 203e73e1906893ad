"""OpenCost's values: attribution of the cluster's cost to namespaces, teams and apps, read from the
stack's Prometheus, priced from the price source the capacity planner uses. Pure.

Pricing: OpenCost's `custom` provider prices a node as vCPUs x CPU + GiB x RAM + GPUs x GPU. The GPU
rate is each group's expected price per GPU under its plan (on-demand base, spot share, RIs, at the
plan's prices), less the CPU and memory part, weighted by the groups' maximum GPUs: a spot-heavy plan
prices GPU hours below on-demand, as it costs. CPU and RAM keep OpenCost's own default rates (its
default.json, AWS list-price derived). The chart divides these by 730 (monthly values;
opencost-helm-chart #288), so they are given per month. Per-node exactness (a spot node at its own
spot price) needs the account's spot data feed, which the stack does not subscribe (one per account).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.capacity.plan import CapacityPlan
from components.catalog.instance_types import gpu_instance_type
from components.common.addon_resources import ADDON_RESOURCES
from components.compute.labels import SYSTEM_NODE_SELECTOR, SYSTEM_TOLERATIONS
from components.compute.priority import PLATFORM_PRIORITY_CLASS
from components.monitoring.config import NAMESPACE as MONITORING_NAMESPACE
from components.monitoring.config import PROMETHEUS_RELEASE, PROMETHEUS_SERVER_LABELS
from components.pricing.prices import HOURS_PER_MONTH

NAMESPACE = "opencost"
RELEASE = "opencost"
API_PORT = 9003
# OpenCost's default.json rates, $/vCPU-hour and $/GiB-hour.
CPU_USD_PER_HOUR = 0.031611
RAM_USD_PER_GIB_HOUR = 0.004237
OPENCOST_LABELS = {"app.kubernetes.io/name": "opencost"}


@dataclass(frozen=True)
class ClusterRates:
    cpu: float  # $/vCPU-hour
    ram: float  # $/GiB-hour
    gpu: float  # $/GPU-hour, blended over the GPU groups' plans

    def cost_model(self) -> dict[str, str]:

        def monthly(hourly: float) -> str:
            return f"{hourly * HOURS_PER_MONTH:.4f}"

        return {
            "description": "seedance: GPU from the capacity plans' prices, CPU and RAM OpenCost's defaults",
            "CPU": monthly(self.cpu),
            "RAM": monthly(self.ram),
            "GPU": monthly(self.gpu),
            # Nodes carry no spot label: every node is priced at the blended rates above.
            "spotCPU": monthly(self.cpu),
            "spotRAM": monthly(self.ram),
        }


def gpu_rate(plan: CapacityPlan) -> float:
    """The plan's expected $/GPU-hour less the CPU and memory of its instances."""
    constraints = plan.constraints
    reference = constraints["desired_gpus"] or constraints["max_gpus"]
    shape = gpu_instance_type(plan.instance_types[0])
    per_gpu = plan.expected_usd_per_hour / reference if reference else 0.0
    host = (shape.vcpus * CPU_USD_PER_HOUR + shape.memory_gib * RAM_USD_PER_GIB_HOUR) / shape.gpus
    return max(0.0, per_gpu - host)


def cluster_rates(plans: Mapping[str, CapacityPlan]) -> ClusterRates:
    weights = {name: plan.constraints["max_gpus"] for name, plan in plans.items()}
    total = sum(weights.values())
    gpu = sum(gpu_rate(plans[name]) * weight for name, weight in weights.items()) / total if total else 0.0
    return ClusterRates(cpu=CPU_USD_PER_HOUR, ram=RAM_USD_PER_GIB_HOUR, gpu=round(gpu, 6))


def opencost_values(rates: ClusterRates, cluster_name: str, api_server_egress: dict[str, Any]) -> dict[str, Any]:
    """The exporter alone (no UI, no MCP server) on the system nodes, reading the stack's Prometheus;
    scraped by Prometheus's own job for it (`opencost_scrape_job`), not by annotations."""
    return {
        "opencost": {
            "exporter": {
                "defaultClusterId": cluster_name,
                "resources": ADDON_RESOURCES["opencost"],
                "securityContext": {
                    "runAsNonRoot": True,
                    "readOnlyRootFilesystem": True,
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
            },
            "prometheus": {
                "internal": {
                    "enabled": True,
                    "serviceName": f"{PROMETHEUS_RELEASE}-server",
                    "namespaceName": MONITORING_NAMESPACE,
                    "port": 80,
                }
            },
            "customPricing": {"enabled": True, "provider": "custom", "costModel": rates.cost_model()},
            "ui": {"enabled": False},
            "mcp": {"enabled": False},
            "nodeSelector": SYSTEM_NODE_SELECTOR,
            "tolerations": SYSTEM_TOLERATIONS,
        },
        "priorityClassName": PLATFORM_PRIORITY_CLASS,  # the chart reads it at the top level, the rest under opencost
        "podSecurityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        # The chart's policy: in from the Prometheus server on 9003, out to it on 9090; plus the API server.
        "networkPolicies": {
            "enabled": True,
            "prometheus": {"namespace": MONITORING_NAMESPACE, "port": 9090, "labels": PROMETHEUS_SERVER_LABELS},
            "extraEgress": [api_server_egress],
        },
    }


def opencost_scrape_job(interval_seconds: int) -> dict[str, Any]:
    """OpenCost's metrics carry the namespace, pod and node they price: its job alone keeps them
    (`honor_labels`), where the pods job never lets a scraped pod name another's series."""
    return {
        "job_name": "opencost",
        "honor_labels": True,
        "scrape_interval": f"{max(60, interval_seconds)}s",
        "static_configs": [{"targets": [f"{RELEASE}.{NAMESPACE}.svc:{API_PORT}"]}],
    }
