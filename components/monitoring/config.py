"""The monitoring slice of the stack config. Pure."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

NAMESPACE = "monitoring"
# The DCGM exporter reads the kubelet's pod-resources socket as root with SYS_ADMIN: a GPU agent, privileged
# in a namespace of its own, so monitoring itself holds to Pod Security baseline.
GPU_AGENTS_NAMESPACE = "gpu-monitoring"
PROMETHEUS_RELEASE = "prometheus"
# The chart's labels on the server's pods (templates/_helpers.tpl at 27.39.0: prometheus.server.matchLabels),
# which NetworkPolicies of scraped workloads admit.
PROMETHEUS_SERVER_LABELS = {
    "app.kubernetes.io/name": "prometheus",
    "app.kubernetes.io/component": "server",
    "app.kubernetes.io/instance": PROMETHEUS_RELEASE,
}
# Who scrapes Triton's metrics port: the program writes its NetworkPolicy with it, the gate judges by it.
METRICS_SCRAPER = (NAMESPACE, PROMETHEUS_SERVER_LABELS)
# Rates over fewer than four scrapes are noise (and over one or two, often empty): the adapter's windows
# hold four scrapes and at least a minute.
SCRAPES_PER_WINDOW = 4
MIN_WINDOW_SECONDS = 60


class MonitoringConfig(BaseModel):
    """The metrics pipeline (config `seedance-gpu:monitoring`)."""

    model_config = ConfigDict(extra="forbid")

    scrape_interval_seconds: int = Field(15, ge=5, le=60, description="Prometheus scrape interval.")
    retention_hours: int = Field(
        192,
        ge=2,
        le=720,
        description="How long Prometheus keeps samples: autoscaling "
        "needs minutes, the cost dashboards and `seedance cost-gate --window 7d` a week and "
        "a day.",
    )
    persistent: bool = Field(
        True,
        description="Keep Prometheus's history on a gp3 claim (the stack key, "
        "WaitForFirstConsumer), so it survives a system node's replacement; the volume stays "
        "in its zone, so this needs a system node in every zone (cluster.system_nodes.min_size "
        ">= network.az_count). false: an emptyDir, whose history restarts with the pod.",
    )
    storage_gib: int | None = Field(
        None,
        ge=4,
        le=16384,
        description="Size of Prometheus's volume (or emptyDir "
        "limit); the TSDB keeps 2 GiB below it. Default: sized from the series estimate "
        "and retention_hours (components/monitoring/sizing.py).",
    )
    prometheus_chart_version: str = Field(
        "27.39.0", pattern=r"^\d+\.\d+\.\d+$", description="prometheus-community/prometheus chart."
    )
    adapter_chart_version: str = Field("4.11.0", pattern=r"^\d+\.\d+\.\d+$", description="prometheus-adapter chart.")
    dcgm_exporter_chart_version: str = Field(
        "4.1.1", pattern=r"^\d+\.\d+\.\d+$", description="NVIDIA dcgm-exporter chart (GPU utilisation per pod)."
    )
    metrics_server_chart_version: str = Field(
        "3.13.1",
        pattern=r"^\d+\.\d+\.\d+$",
        description="metrics-server chart: the resource metrics API (kubectl top, CPU/memory HPAs).",
    )
    opencost_chart_version: str = Field(
        "2.5.17", pattern=r"^\d+\.\d+\.\d+$", description="OpenCost chart: cost per namespace, team and app."
    )
    grafana_chart_version: str = Field(
        "12.11.1", pattern=r"^\d+\.\d+\.\d+$", description="Grafana chart (grafana-community): the dashboards."
    )

    @property
    def rate_window(self) -> str:
        return f"{max(MIN_WINDOW_SECONDS, self.scrape_interval_seconds * SCRAPES_PER_WINDOW)}s"

    @property
    def prometheus_url(self) -> str:
        return f"http://{PROMETHEUS_RELEASE}-server.{NAMESPACE}.svc"
