"""`MetricsPipeline`: Prometheus, the NVIDIA DCGM exporter and prometheus-adapter, so the Triton HPAs
have the Pods metrics they scale on (without a Prometheus every HPA reports FailedGetPodsMetric).

One path, no operator: Prometheus scrapes pods by their `prometheus.io/*` annotations with its
chart's default `kubernetes-pods` job (Triton's metrics port, the DCGM exporter's), and the adapter
queries it in-cluster. No ServiceMonitor, so no CRD has to exist before the first `pulumi up`.
"""

from __future__ import annotations

from typing import Mapping

import pulumi
import pulumi_kubernetes as k8s

from components.compute.labels import GPU_TOLERATION, WORKLOAD_CLASS_LABEL
from components.serving.manifests import adapter_rules
from components.monitoring.config import NAMESPACE, PROMETHEUS_RELEASE, MonitoringConfig

COMMUNITY_CHARTS = "https://prometheus-community.github.io/helm-charts"
DCGM_CHARTS = "https://nvidia.github.io/dcgm-exporter/helm-charts"
DCGM_PORT = 9400
# The chart's global scrape timeout; Prometheus refuses a timeout longer than the interval.
CHART_SCRAPE_TIMEOUT_SECONDS = 10


def prometheus_values(config: MonitoringConfig, system_node_selector: Mapping[str, str]) -> dict:
    """The server alone, on the system nodes; its default kubernetes-pods job does the scraping (keys
    checked in the chart's values.yaml at 27.39.0). No persistent volume: EKS clusters from 1.30 have
    no default StorageClass, and a Pending Prometheus would leave every HPA blind; the samples serve
    autoscaling, which needs minutes, not history. The emptyDir is bounded, and the TSDB kept below
    it, so the kubelet never evicts the server for disk."""
    interval = config.scrape_interval_seconds
    return {
        "alertmanager": {"enabled": False},
        "kube-state-metrics": {"enabled": False},
        "prometheus-node-exporter": {"enabled": False},
        "prometheus-pushgateway": {"enabled": False},
        "server": {
            "global": {"scrape_interval": f"{interval}s", "evaluation_interval": f"{interval}s",
                       "scrape_timeout": f"{min(interval, CHART_SCRAPE_TIMEOUT_SECONDS)}s"},
            "retention": f"{config.retention_hours}h",
            "retentionSize": f"{config.storage_gib - 2}GB",
            "persistentVolume": {"enabled": False},
            "emptyDir": {"sizeLimit": f"{config.storage_gib}Gi"},
            "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "2Gi"}},
            "nodeSelector": dict(system_node_selector),
        },
    }


def dcgm_exporter_values() -> dict:
    """On every GPU node (tolerating their taint); scraped through pod annotations, not a ServiceMonitor."""
    return {
        "serviceMonitor": {"enabled": False},
        "tolerations": [GPU_TOLERATION],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": WORKLOAD_CLASS_LABEL, "operator": "Exists"}]}]}}},
        "podAnnotations": {"prometheus.io/scrape": "true", "prometheus.io/port": str(DCGM_PORT),
                           "prometheus.io/path": "/metrics"},
    }


def adapter_values(config: MonitoringConfig, system_node_selector: Mapping[str, str]) -> dict:
    return {"prometheus": {"url": config.prometheus_url, "port": 80},
            "rules": {"default": False, "custom": adapter_rules(config.rate_window)},
            "nodeSelector": dict(system_node_selector)}


class MetricsPipeline(pulumi.ComponentResource):
    def __init__(self, name: str, config: MonitoringConfig, *, system_node_selector: Mapping[str, str],
                 provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:monitoring:MetricsPipeline", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)

        def release(suffix: str, chart: str, version: str, repo: str, values: dict,
                    depends_on: list[pulumi.Resource] | None = None) -> k8s.helm.v3.Release:
            return k8s.helm.v3.Release(
                f"{name}-{suffix}", name=suffix, chart=chart, version=version, namespace=NAMESPACE,
                create_namespace=True, repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo), values=values,
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=depends_on or [])))

        prometheus = release(PROMETHEUS_RELEASE, "prometheus", config.prometheus_chart_version, COMMUNITY_CHARTS,
                             prometheus_values(config, system_node_selector))
        release("dcgm-exporter", "dcgm-exporter", config.dcgm_exporter_chart_version, DCGM_CHARTS,
                dcgm_exporter_values(), [prometheus])
        release("prometheus-adapter", "prometheus-adapter", config.adapter_chart_version, COMMUNITY_CHARTS,
                adapter_values(config, system_node_selector), [prometheus])
        self.register_outputs({})
