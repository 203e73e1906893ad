"""Grafana dashboards as code, built with Grafana's Foundation SDK: GPUs, serving, cost. Pure.

Every panel reads Prometheus (the recording rules of components/monitoring/rules.py where one fits);
the tests run each query on Prometheus's engine over synthetic series. Lines drawn at the source's
anchors: P99 50 ms, jitter 3 %, node utilisation spread 0.32, the monthly budget.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from grafana_foundation_sdk.builders.common import GraphThresholdsStyleConfig
from grafana_foundation_sdk.builders.dashboard import Dashboard, ThresholdsConfig
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.builders.stat import Panel as Stat
from grafana_foundation_sdk.builders.timeseries import Panel as Timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import DataSourceRef, GraphThresholdsStyleMode
from grafana_foundation_sdk.models.dashboard import Threshold, ThresholdsMode

from components.monitoring.rules import DCGM, JITTER, NODE_UTILISATION_CV, OPENCOST, P99_MS, POOL_LABEL, node_pools
from components.pricing.prices import HOURS_PER_MONTH

DATASOURCE_UID = "prometheus"
PROMETHEUS = DataSourceRef(type_val="prometheus", uid=DATASOURCE_UID)
# DCGM's series name the node `Hostname`; OpenCost's node labels name it `node`.
_POOL_OF_HOST = node_pools("Hostname")


@dataclass(frozen=True)
class ServedSet:
    namespace: str
    requests_per_second_target: int  # per pod: the HPA's target


def _line(value: float, color: str = "red") -> ThresholdsConfig:
    return (
        ThresholdsConfig()
        .mode(ThresholdsMode.ABSOLUTE)
        .steps([Threshold(value=None, color="green"), Threshold(value=value, color=color)])
    )


def _series(title: str, expr: str, legend: str, unit: str, span: int, threshold: float | None = None) -> Timeseries:
    panel = (
        Timeseries()
        .title(title)
        .datasource(PROMETHEUS)
        .unit(unit)
        .min(0)
        .height(8)
        .span(span)
        .with_target(Dataquery().ref_id("A").expr(expr).legend_format(legend))
    )
    if threshold is not None:
        panel = panel.thresholds(_line(threshold)).thresholds_style(
            GraphThresholdsStyleConfig().mode(GraphThresholdsStyleMode.LINE)
        )
    return panel


def gpu_dashboard() -> Dashboard:
    return (
        Dashboard("seedance: GPUs")
        .uid("seedance-gpus")
        .tags(["seedance", "generated"])
        .refresh("1m")
        .time("now-6h", "now")
        .with_panel(
            _series(
                "GPU utilisation by pool",
                f"avg by ({POOL_LABEL}) (DCGM_FI_DEV_GPU_UTIL{{{DCGM}}} * on (Hostname) group_left ({POOL_LABEL}) "
                f"{_POOL_OF_HOST})",
                f"{{{{{POOL_LABEL}}}}}",
                "percent",
                12,
            )
        )
        .with_panel(
            _series(
                "GPU memory used by pool",
                f"sum by ({POOL_LABEL}) (DCGM_FI_DEV_FB_USED{{{DCGM}}} * on (Hostname) group_left ({POOL_LABEL}) "
                f"{_POOL_OF_HOST})",
                f"{{{{{POOL_LABEL}}}}}",
                "decmbytes",
                12,
            )
        )
        .with_panel(
            _series(
                "GPU utilisation by pod",
                f'avg by (exported_namespace, exported_pod) (DCGM_FI_DEV_GPU_UTIL{{{DCGM}, exported_pod!=""}})',
                "{{exported_namespace}}/{{exported_pod}}",
                "percent",
                12,
            )
        )
        .with_panel(
            _series(
                "GPU memory used by pod",
                f'sum by (exported_namespace, exported_pod) (DCGM_FI_DEV_FB_USED{{{DCGM}, exported_pod!=""}})',
                "{{exported_namespace}}/{{exported_pod}}",
                "decmbytes",
                12,
            )
        )
    )


def serving_dashboard(sets: list[ServedSet]) -> Dashboard:
    dashboard = (
        Dashboard("seedance: serving")
        .uid("seedance-serving")
        .tags(["seedance", "generated"])
        .refresh("1m")
        .time("now-6h", "now")
        .with_panel(
            _series("Requests per second", "seedance:triton_requests:rate5m", "{{namespace}}/{{model}}", "reqps", 12)
        )
        .with_panel(
            _series("Queue time (mean)", "seedance:triton_queue_ms:mean5m", "{{namespace}}/{{model}}", "ms", 12)
        )
        .with_panel(
            _series(
                f"P99 latency (anchor {P99_MS} ms)",
                "seedance:triton_latency_p99_ms",
                "{{namespace}}/{{model}} p99",
                "ms",
                8,
                P99_MS,
            )
        )
        .with_panel(_series("P50 latency", "seedance:triton_latency_p50_ms", "{{namespace}}/{{model}} p50", "ms", 8))
        .with_panel(
            _series(
                f"Jitter of the P99 (anchor {JITTER:.0%})",
                "seedance:triton_latency_jitter:ratio10m",
                "{{namespace}}/{{model}}",
                "percentunit",
                8,
                JITTER,
            )
        )
    )
    for served in sets:
        # Replicas serving (pods reporting) against what the HPA's per-pod request target asks for.
        dashboard = dashboard.with_panel(
            Timeseries()
            .title(f"{served.namespace}: replicas and the HPA's target")
            .datasource(PROMETHEUS)
            .unit("short")
            .min(0)
            .height(8)
            .span(12)
            .with_target(
                Dataquery()
                .ref_id("A")
                .legend_format("serving")
                .expr(f'count(count by (pod) (nv_inference_request_success{{namespace="{served.namespace}"}}))')
            )
            .with_target(
                Dataquery()
                .ref_id("B")
                .legend_format("needed at the target")
                .expr(
                    f'ceil(sum(rate(nv_inference_request_success{{namespace="{served.namespace}"}}[5m])) / '
                    f"{served.requests_per_second_target})"
                )
            )
        )
    return dashboard


def cost_dashboard(monthly_budget_usd: float, planned_spot_share: dict[str, float]) -> Dashboard:
    dashboard = (
        Dashboard("seedance: cost")
        .uid("seedance-cost")
        .tags(["seedance", "generated"])
        .refresh("5m")
        .time("now-7d", "now")
        .with_panel(
            _series(
                "Cost per namespace, USD a day",
                "seedance:namespace_cost_usd:hourly * 24",
                "{{namespace}}",
                "currencyUSD",
                12,
            )
        )
        .with_panel(
            _series("Cost per team, USD a day", "seedance:team_cost_usd:hourly * 24", "{{team}}", "currencyUSD", 12)
        )
        .with_panel(
            _series(
                "Cost per 1,000 requests", "seedance:cost_per_1000_requests_usd:1h", "{{namespace}}", "currencyUSD", 12
            )
        )
        .with_panel(
            _series(
                "vCPU-seconds per request (P95 over 1 h)",
                "seedance:request_vcpu_seconds:p95_1h",
                "{{namespace}}",
                "s",
                12,
            )
        )
        .with_panel(
            _series(
                f"Node utilisation spread (rebalance above {NODE_UTILISATION_CV})",
                "seedance:node_cpu_utilisation:cv",
                "spread",
                "short",
                12,
                NODE_UTILISATION_CV,
            )
        )
        .with_panel(
            _series(
                f"Budget burn, USD a month at the current rate (budget {monthly_budget_usd:,.0f})",
                f"seedance:cluster_cost_usd:hourly * {HOURS_PER_MONTH}",
                "at this rate",
                "currencyUSD",
                12,
                monthly_budget_usd,
            )
        )
        .with_panel(
            _series(
                "GPU nodes per group",
                f'count by ({POOL_LABEL}) (kube_node_labels{{{OPENCOST}, {POOL_LABEL}!=""}})',
                f"{{{{{POOL_LABEL}}}}}",
                "short",
                12,
            )
        )
        .with_panel(
            _series(
                "Spot interruptions drained per group, last day",
                "seedance:spot_interruptions:count1d",
                f"{{{{{POOL_LABEL}}}}}",
                "short",
                12,
            )
        )
    )
    for group, share in sorted(planned_spot_share.items()):
        # The groups' market is not a node label (self-managed groups set none): the plan's share is shown.
        dashboard = dashboard.with_panel(
            Stat()
            .title(f"{group}: planned spot share at its maximum")
            .datasource(PROMETHEUS)
            .unit("percentunit")
            .height(4)
            .span(6)
            .with_target(Dataquery().ref_id("A").expr(f"vector({share:.4f})").instant())
        )
    return dashboard


def dashboards(
    sets: list[ServedSet], monthly_budget_usd: float, planned_spot_share: dict[str, float]
) -> dict[str, str]:
    """File name -> dashboard JSON, as Grafana's file provider reads them."""
    built = [gpu_dashboard(), serving_dashboard(sets), cost_dashboard(monthly_budget_usd, planned_spot_share)]
    return {f"{d.build().uid}.json": JSONEncoder(sort_keys=True, indent=2).encode(d.build()) for d in built}


def queries(files: dict[str, str]) -> list[tuple[str, str, str]]:
    """(dashboard, panel title, PromQL) of every target the dashboards ship."""
    found = []
    for name, text in files.items():
        for panel in json.loads(text).get("panels", []):
            found += [
                (name, panel["title"], target["expr"]) for target in panel.get("targets", []) if target.get("expr")
            ]
    return found
