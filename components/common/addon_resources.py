"""Requests and limits of every add-on the stack installs: none runs BestEffort (first evicted under node
pressure). Memory limits equal nothing less than the request; CPU is left unlimited (throttling an
add-on at a burst helps no one). Pure.

Sources: the cluster autoscaler's example deployment (cluster-autoscaler-autodiscover.yaml: 100m, 600Mi);
the metrics server's chart defaults (100m, 200Mi); the others sized as small agents with headroom
(they are measured in a running cluster, not here: raise them when `kubectl top` says so).
"""

from __future__ import annotations


def _sized(cpu: str, memory: str, memory_limit: str) -> dict[str, dict[str, str]]:
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory_limit}}


ADDON_RESOURCES = {
    "cluster-autoscaler": _sized("100m", "600Mi", "1Gi"),
    "aws-node-termination-handler": _sized("50m", "64Mi", "128Mi"),
    "prometheus-adapter": _sized("100m", "256Mi", "512Mi"),
    "dcgm-exporter": _sized("100m", "256Mi", "512Mi"),
    "nvidia-device-plugin": _sized("20m", "64Mi", "128Mi"),
    "efa-device-plugin": _sized("10m", "20Mi", "64Mi"),
    "metrics-server": _sized("100m", "200Mi", "400Mi"),
    # OpenCost's chart requests 10m and 55Mi (limit 1Gi); it keeps recent allocations in memory.
    "opencost": _sized("10m", "256Mi", "1Gi"),
    "alertmanager": _sized("10m", "64Mi", "128Mi"),
    "grafana": _sized("50m", "128Mi", "512Mi"),
    # Kueue's chart requests 500m and 512Mi (limits 2 CPUs, 512Mi): its cache holds every workload.
    "kueue": _sized("500m", "512Mi", "1Gi"),
}
