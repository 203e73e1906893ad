"""The recording and alerting rules Prometheus evaluates: the source's cost and latency anchors as
PromQL. Pure; tests run every expression on Prometheus's own engine (`promtool test rules`).

Inputs: Triton's metrics (`nv_inference_request_success`, the request-latency summary that
`--metrics-config=summary_latencies=true` publishes), cAdvisor's container CPU, OpenCost's cost
and allocation series and its kube-state-like metrics (pod labels, resource requests, node
capacity), and DCGM's GPU utilisation, each from the job that exposes it. Anchors (shared/seed/DIGEST.md):
P99 under 50 ms, jitter at most 3 %, node utilisation spread above 0.32 starts a rebalance, 1 vCPU : 4 GiB,
the budget.

"Jitter" is read as the P99's own variation: its standard deviation over ten minutes relative to its
mean. "Node utilisation variance above 0.32" is read as the coefficient of variation of node CPU
utilisation (a variance of ratios in [0, 1] never exceeds 0.25, so the literal reading never fires).
"""

from __future__ import annotations

from typing import Any

from components.compute.labels import DEGRADE, SPOT_ONLY
from components.monitoring.config import GPU_AGENTS_NAMESPACE
from components.pricing.prices import HOURS_PER_MONTH

P99_MS = 50
JITTER = 0.03
NODE_UTILISATION_CV = 0.32
GIB_PER_VCPU = 4
GIB_PER_VCPU_FACTOR = 2  # "far from 1:4": below 2 or above 8 GiB per vCPU
GPU_IDLE_PERCENT = 5
GIB = 1073741824

# Each series is read from the job that exposes it, never by its name alone: a pod the annotation job
# scrapes could publish any name (a cost, a GPU's utilisation), but not another job's label.
OPENCOST = 'job="opencost"'
CADVISOR = 'job="kubernetes-cadvisor"'
DCGM = f'namespace="{GPU_AGENTS_NAMESPACE}"'  # the pods job labels series with the scraped pod's namespace
TRITON = 'namespace=~"triton-.+"'
NTH = 'namespace="kube-system"'  # the termination handler's drains (its actions.node counter)
POOL_LABEL = "label_seedance_io_node_group"  # kube_node_labels' form of seedance.io/node-group
# Triton's summary carries each pod's last minute; the worst pod is the set's tail.
_QUANTILE = 'max by (namespace, model) (nv_inference_request_summary_us{{quantile="{q}", ' + TRITON + "}}) / 1000"
_COSTS = (
    ("cpu", "container_cpu_allocation", "node_cpu_hourly_cost", ""),
    ("memory", "container_memory_allocation_bytes", "node_ram_hourly_cost", f" / {GIB}"),
    ("gpu", "container_gpu_allocation", "node_gpu_hourly_cost", ""),
)


def node_pools(node_label: str, window: str | None = None) -> str:
    """Each node's GPU group from its labels, keyed by the label another source names the node by (DCGM's
    `Hostname`, the termination handler's `node_name`); with a window, every node that existed in it."""
    labels = f'kube_node_labels{{{OPENCOST}, {POOL_LABEL}!=""}}'
    if window:
        labels = f"max_over_time({labels}[{window}])"
    return f'label_replace(max by (node, {POOL_LABEL}) ({labels}), "{node_label}", "$1", "node", "(.+)")'


def _pod_cost() -> str:
    """Each pod's allocation priced at its node's hourly rates, CPU, memory and GPU summed (each kind
    labelled apart first, so a pod without GPUs keeps its CPU and memory)."""
    parts = [
        f"label_replace(sum by (namespace, pod, node) ({allocation}{{{OPENCOST}}}{unit}) * on (node) "
        f'group_left () max by (node) ({rate}{{{OPENCOST}}}), "resource", "{kind}", "", "")'
        for kind, allocation, rate, unit in _COSTS
    ]
    return f"sum by (namespace, pod) ({' or '.join(parts)})"


def recording_rules() -> list[dict[str, Any]]:
    return [
        {"record": "seedance:triton_latency_p99_ms", "expr": _QUANTILE.format(q="0.99")},
        {"record": "seedance:triton_latency_p50_ms", "expr": _QUANTILE.format(q="0.5")},
        {
            "record": "seedance:triton_latency_jitter:ratio10m",
            "expr": "stddev_over_time(seedance:triton_latency_p99_ms[10m]) "
            "/ avg_over_time(seedance:triton_latency_p99_ms[10m])",
        },
        {
            "record": "seedance:triton_requests:rate5m",
            "expr": f"sum by (namespace, model) (rate(nv_inference_request_success{{{TRITON}}}[5m]))",
        },
        {
            "record": "seedance:triton_queue_ms:mean5m",
            "expr": f"sum by (namespace, model) (rate(nv_inference_queue_duration_us{{{TRITON}}}[5m])) / "
            f"sum by (namespace, model) (rate(nv_inference_request_success{{{TRITON}}}[5m])) / 1000",
        },
        {
            "record": "seedance:node_cpu_utilisation:ratio",
            "expr": "sum by (node) (rate(container_cpu_usage_seconds_total"
            f'{{{CADVISOR}, container!="", container!="POD"}}[5m])) '
            f"/ max by (node) (kube_node_status_capacity_cpu_cores{{{OPENCOST}}})",
        },
        {
            "record": "seedance:node_cpu_utilisation:cv",
            "expr": "stddev(seedance:node_cpu_utilisation:ratio) / avg(seedance:node_cpu_utilisation:ratio)",
        },
        {
            "record": "seedance:request_vcpu_seconds:ratio5m",
            "expr": f'sum by (namespace) (rate(container_cpu_usage_seconds_total{{{CADVISOR}, {TRITON}, container!="", '
            f'container!="POD"}}[5m])) / sum by (namespace) (rate(nv_inference_request_success{{{TRITON}}}[5m]))',
        },
        {
            "record": "seedance:request_vcpu_seconds:p95_1h",
            "expr": "quantile_over_time(0.95, seedance:request_vcpu_seconds:ratio5m[1h])",
        },
        {"record": "seedance:pod_cost_usd:hourly", "expr": _pod_cost()},
        {"record": "seedance:namespace_cost_usd:hourly", "expr": "sum by (namespace) (seedance:pod_cost_usd:hourly)"},
        # By the pods' own `team` label (the cost labels every workload carries), as OpenCost aggregates.
        {
            "record": "seedance:team_cost_usd:hourly",
            "expr": f"sum by (team) (seedance:pod_cost_usd:hourly * on (namespace, pod) group_left (team) "
            f'label_replace(max by (namespace, pod, label_team) (kube_pod_labels{{{OPENCOST}, label_team!=""}}), '
            '"team", "$1", "label_team", "(.+)"))',
        },
        {
            "record": "seedance:cost_per_1000_requests_usd:1h",
            "expr": "seedance:namespace_cost_usd:hourly / on (namespace) "
            f"(sum by (namespace) (increase(nv_inference_request_success{{{TRITON}}}[1h])) > 0) * 1000",
        },
        {"record": "seedance:cluster_cost_usd:hourly", "expr": f"sum(node_total_hourly_cost{{{OPENCOST}}})"},
        # Spot interruptions the termination handler drained, per GPU group, over the last day: one series per
        # event (its id names the kind), so they are counted, not rated; the node's group from its labels
        # while it existed.
        {
            "record": "seedance:spot_interruptions:count1d",
            "expr": f"sum by ({POOL_LABEL}) (count by (node_name) (max_over_time(actions_node_total{{{NTH}, "
            f'node_event_id=~"spot-itn-event-.+"}}[1d])) * on (node_name) group_left ({POOL_LABEL}) '
            f"{node_pools('node_name', '1d')})",
        },
        # Requests, what nodes are packed by (OpenCost exports limits only with EMIT_DEPRECATED_METRICS).
        {
            "record": "seedance:pod_memory_gib_per_vcpu:requests",
            "expr": "sum by (namespace, pod) "
            f'(kube_pod_container_resource_requests{{{OPENCOST}, resource="memory"}}) / {GIB} '
            f'/ sum by (namespace, pod) (kube_pod_container_resource_requests{{{OPENCOST}, resource="cpu"}})',
        },
    ]


def alerting_rules(monthly_budget_usd: float, rebalance: str) -> list[dict[str, Any]]:
    """`rebalance`: what runs when node utilisation spreads (said in the alert)."""
    low, high = GIB_PER_VCPU / GIB_PER_VCPU_FACTOR, GIB_PER_VCPU * GIB_PER_VCPU_FACTOR
    return [
        {
            "alert": "TritonP99LatencyHigh",
            "expr": f"seedance:triton_latency_p99_ms > {P99_MS}",
            "for": "10m",
            "labels": {"severity": "page"},
            "annotations": {
                "summary": f"{{{{ $labels.namespace }}}}/{{{{ $labels.model }}}}: P99 {{{{ $value | printf "
                f'"%.1f" }}}} ms, above the {P99_MS} ms anchor for 10 minutes'
            },
        },
        {
            "alert": "TritonLatencyJitterHigh",
            "expr": f"seedance:triton_latency_jitter:ratio10m > {JITTER}",
            "for": "10m",
            "labels": {"severity": "ticket"},
            # Two decimals: the recorded series and the alert are evaluated in groups of their own, a step apart.
            "annotations": {
                "summary": f"{{{{ $labels.namespace }}}}/{{{{ $labels.model }}}}: the P99 varies by "
                f'{{{{ $value | printf "%.2f" }}}} of itself, above {JITTER}'
            },
        },
        {
            "alert": "HighLatencyPodCostReview",
            "expr": f'max by (namespace, pod) (nv_inference_request_summary_us{{quantile="0.99", {TRITON}}}) / 1000 > '
            f"{P99_MS}",
            "for": "30m",
            "labels": {"severity": "cost-review"},
            "annotations": {
                "summary": "{{ $labels.namespace }}/{{ $labels.pod }} serves slowly for 30 minutes: review "
                "what it costs (its GPU, its replicas) against what it delivers"
            },
        },
        {
            "alert": "NodeUtilisationImbalanced",
            "expr": f"seedance:node_cpu_utilisation:cv > {NODE_UTILISATION_CV}",
            "for": "30m",
            "labels": {"severity": "ticket"},
            "annotations": {
                "summary": f"node CPU utilisation spread (coefficient of variation) {{{{ $value | printf "
                f'"%.2f" }}}} above {NODE_UTILISATION_CV}',
                "rebalance": rebalance,
            },
        },
        {
            "alert": "MemoryPerVcpuFarFromOneToFour",
            "expr": f"seedance:pod_memory_gib_per_vcpu:requests < {low:g} "
            f"or seedance:pod_memory_gib_per_vcpu:requests > {high:g}",
            "for": "1h",
            "labels": {"severity": "cost-review"},
            "annotations": {
                "summary": f"{{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} requests {{{{ $value | printf "
                f'"%.1f" }}}} GiB per vCPU; the packing anchor is {GIB_PER_VCPU}'
            },
        },
        {
            "alert": "GpuIdleWhileBilled",
            "expr": f"avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL{{{DCGM}}}) < {GPU_IDLE_PERCENT}",
            "for": "30m",
            "labels": {"severity": "cost-review"},
            "annotations": {
                "summary": '{{ $labels.Hostname }}: GPUs {{ $value | printf "%.0f" }}% busy for 30 '
                "minutes, billed by the hour"
            },
        },
        {
            "alert": "BudgetBurnRateHigh",
            "expr": f"seedance:cluster_cost_usd:hourly * {HOURS_PER_MONTH} > {monthly_budget_usd:g}",
            "for": "1h",
            "labels": {"severity": "ticket"},
            "annotations": {
                "summary": f"the cluster runs at {{{{ $value | humanize }}}} USD a month, above the "
                f"{monthly_budget_usd:,.0f} budget (the budget's own alerts act at {DEGRADE} and {SPOT_ONLY} %)"
            },
        },
    ]


def rule_files(monthly_budget_usd: float, rebalance: str) -> dict[str, dict[str, Any]]:
    """The chart's serverFiles entries."""
    return {
        "recording_rules.yml": {"groups": [{"name": "seedance", "rules": recording_rules()}]},
        "alerting_rules.yml": {
            "groups": [{"name": "seedance", "rules": alerting_rules(monthly_budget_usd, rebalance)}]
        },
    }
