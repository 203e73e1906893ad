"""`MetricsPipeline`: Prometheus, the NVIDIA DCGM exporter and prometheus-adapter, so the Triton HPAs
have the Pods metrics they scale on (without a Prometheus every HPA reports FailedGetPodsMetric).

One path, no operator: Prometheus scrapes pods by their `prometheus.io/*` annotations with the
chart's `kubernetes-pods` job less `honor_labels` (Triton's metrics port, the DCGM exporter's), and
the adapter queries it in-cluster. No ServiceMonitor, so no CRD has to exist before the first `pulumi
up`. The chart's defaults are narrowed: its own ClusterRole (with `nodes/proxy`) is replaced, and only
the adapter reaches the server.
"""

from __future__ import annotations

from typing import Mapping

import pulumi
import pulumi_kubernetes as k8s
import pulumi_tls as tls

from components.compute.labels import AGENT_TOLERATIONS, WORKLOAD_CLASS_LABEL
from components.serving.manifests import PORTS, adapter_rules
from components.common.addon_resources import ADDON_RESOURCES
from components.common.k8s_objects import declare
from components.common.manifests import (NAMESPACE_NAME_LABEL, Manifest, metadata, namespace, namespace_baseline,
                                         network_policy)
from components.monitoring.config import (GPU_AGENTS_NAMESPACE, NAMESPACE, PROMETHEUS_RELEASE,
                                          PROMETHEUS_SERVER_LABELS, MonitoringConfig)

COMMUNITY_CHARTS = "https://prometheus-community.github.io/helm-charts"
DCGM_CHARTS = "https://nvidia.github.io/dcgm-exporter/helm-charts"
METRICS_SERVER_CHARTS = "https://kubernetes-sigs.github.io/metrics-server/"
DCGM_PORT = 9400
PROMETHEUS_PORT = 9090  # the server's container port (the chart's Service maps 80 to it)
ADAPTER_PORT = 6443  # the adapter chart's listenPort
# The adapter's Service as the API server calls it: the chart's fullname is the release name here.
ADAPTER_RELEASE = "prometheus-adapter"
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
        "serverFiles": {"prometheus.yml": {"scrape_configs": [pods_scrape_job()]}},
        "configmapReload": {"prometheus": {"resources": ADDON_RESOURCES["config-reloader"]}},
        "server": {
            "useExistingClusterRoleName": PROMETHEUS_CLUSTER_ROLE,  # prometheus_access(): no nodes/proxy
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


# The server's service account as the chart names it (prometheus.serviceAccountName.server: the fullname).
PROMETHEUS_SERVICE_ACCOUNT = f"{PROMETHEUS_RELEASE}-server"
PROMETHEUS_CLUSTER_ROLE = "seedance-prometheus"


def pods_scrape_job() -> dict:
    """The chart's kubernetes-pods job (values.yaml at 27.39.0) without `honor_labels`: a scraped pod's own
    `namespace` or `pod` labels never replace the ones Prometheus sets from discovery, so no annotated pod
    can publish series in Triton's name and steer its HPA (conflicting labels become exported_*)."""
    return {
        "job_name": "kubernetes-pods",
        "honor_labels": False,
        "kubernetes_sd_configs": [{"role": "pod"}],
        "relabel_configs": [
            {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"], "action": "keep",
             "regex": "true"},
            {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_path"], "action": "replace",
             "target_label": "__metrics_path__", "regex": "(.+)"},
            {"source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_port", "__meta_kubernetes_pod_ip"],
             "action": "replace", "regex": r"(\d+);((([0-9]+?)(\.|$)){4})", "replacement": "$2:$1",
             "target_label": "__address__"},
            {"source_labels": ["__meta_kubernetes_namespace"], "action": "replace", "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "action": "replace", "target_label": "pod"},
            {"source_labels": ["__meta_kubernetes_pod_phase"], "regex": "Pending|Succeeded|Failed|Completed",
             "action": "drop"},
            {"source_labels": ["__meta_kubernetes_pod_node_name"], "action": "replace", "target_label": "node"},
        ],
    }


def prometheus_access(vpc_cidr: str, api_service_ip: str) -> list[Manifest]:
    """What the server may read (the chart's ClusterRole less `nodes/proxy`, the kubelet's exec and log
    path, which the pod job never uses), and the namespaces' traffic: everything denied but DNS; the
    server answers the adapter only, on 9090 (so the lifecycle API the config reloader needs answers
    nobody else), and reaches the metrics ports it scrapes and the API server; the adapter answers the
    API server (its control-plane addresses are in the VPC) and reaches the server and the API; the
    DCGM exporter answers the server only."""
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": metadata(PROMETHEUS_CLUSTER_ROLE),
            "rules": [{"apiGroups": [""], "resources": ["nodes", "nodes/metrics", "services", "endpoints", "pods"],
                       "verbs": ["get", "list", "watch"]},
                      {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
                       "verbs": ["get", "list", "watch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": metadata(PROMETHEUS_CLUSTER_ROLE),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": PROMETHEUS_CLUSTER_ROLE},
               "subjects": [{"kind": "ServiceAccount", "name": PROMETHEUS_SERVICE_ACCOUNT, "namespace": NAMESPACE}]}
    tcp = lambda *ports: [{"port": port, "protocol": "TCP"} for port in ports]  # noqa: E731
    adapter_pods = {"app.kubernetes.io/name": ADAPTER_RELEASE}
    # Pods dial the API at the `kubernetes` Service address, which the network policy agent judges before
    # it is translated (and resolves Services only for pod selectors): that address, and the control
    # plane's own in the VPC.
    api_server = {"to": [{"ipBlock": {"cidr": f"{api_service_ip}/32"}}, {"ipBlock": {"cidr": vpc_cidr}}],
                  "ports": tcp(443)}
    server = network_policy(
        "prometheus-server", NAMESPACE, PROMETHEUS_SERVER_LABELS,
        ingress=[{"from": [{"podSelector": {"matchLabels": adapter_pods}}], "ports": tcp(PROMETHEUS_PORT)}],
        egress=[{"ports": tcp(PORTS["metrics"], DCGM_PORT)}, api_server])
    adapter = network_policy(
        ADAPTER_RELEASE, NAMESPACE, adapter_pods,
        ingress=[{"from": [{"ipBlock": {"cidr": vpc_cidr}}], "ports": tcp(ADAPTER_PORT)}],
        egress=[{"to": [{"podSelector": {"matchLabels": PROMETHEUS_SERVER_LABELS}}], "ports": tcp(PROMETHEUS_PORT)},
                api_server])
    exporter = network_policy(
        "dcgm-exporter", GPU_AGENTS_NAMESPACE, {"app.kubernetes.io/name": "dcgm-exporter"},
        ingress=[{"from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: NAMESPACE}},
                            "podSelector": {"matchLabels": PROMETHEUS_SERVER_LABELS}}], "ports": tcp(DCGM_PORT)}])
    return [role, binding, *namespace_baseline(NAMESPACE), server, adapter, *namespace_baseline(GPU_AGENTS_NAMESPACE),
            exporter]


def dcgm_exporter_values() -> dict:
    """On every GPU node (tolerating their taint); scraped through pod annotations, not a ServiceMonitor."""
    return {
        "serviceMonitor": {"enabled": False},
        "resources": ADDON_RESOURCES["dcgm-exporter"],
        "tolerations": AGENT_TOLERATIONS,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": WORKLOAD_CLASS_LABEL, "operator": "Exists"}]}]}}},
        "podAnnotations": {"prometheus.io/scrape": "true", "prometheus.io/port": str(DCGM_PORT),
                           "prometheus.io/path": "/metrics"},
    }


def adapter_values(config: MonitoringConfig, system_node_selector: Mapping[str, str],
                   tls_values: Mapping[str, pulumi.Input[str]]) -> dict:
    """`tls_values`: ca, key and certificate of the adapter's serving certificate, so the API server
    verifies whom it asks for metrics (the chart's default APIService skips TLS verification)."""
    return {"prometheus": {"url": config.prometheus_url, "port": 80},
            "rules": {"default": False, "custom": adapter_rules(config.rate_window)},
            "tls": {"enable": True, **tls_values},
            # Two replicas and a budget: while the only adapter is down, API discovery fails cluster-wide
            # (its APIService answers nothing) and namespace deletion stalls.
            "replicas": 2,
            "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
            "resources": ADDON_RESOURCES["prometheus-adapter"],
            "nodeSelector": dict(system_node_selector)}


CERTIFICATE_YEARS = 5  # renewed by the first `pulumi up` in its last 90 days


def adapter_serving_certificate(name: str, opts: pulumi.ResourceOptions) -> dict[str, pulumi.Output[str]]:
    """A CA of the stack's own and the adapter's serving certificate, in Pulumi state (no cert-manager
    to install first): the APIService carries the CA, the adapter the key and certificate."""
    hours = CERTIFICATE_YEARS * 365 * 24
    ca_key = tls.PrivateKey(f"{name}-metrics-ca-key", algorithm="ECDSA", ecdsa_curve="P256", opts=opts)
    ca = tls.SelfSignedCert(f"{name}-metrics-ca", private_key_pem=ca_key.private_key_pem, is_ca_certificate=True,
                            subject=tls.SelfSignedCertSubjectArgs(common_name=f"{name} metrics API CA"),
                            validity_period_hours=hours, early_renewal_hours=90 * 24,
                            allowed_uses=["cert_signing", "crl_signing", "digital_signature"], opts=opts)
    key = tls.PrivateKey(f"{name}-adapter-key", algorithm="ECDSA", ecdsa_curve="P256", opts=opts)
    service = f"{ADAPTER_RELEASE}.{NAMESPACE}.svc"
    request = tls.CertRequest(f"{name}-adapter-csr", private_key_pem=key.private_key_pem,
                              subject=tls.CertRequestSubjectArgs(common_name=service),
                              dns_names=[service, f"{service}.cluster.local"], opts=opts)
    certificate = tls.LocallySignedCert(f"{name}-adapter-cert", cert_request_pem=request.cert_request_pem,
                                        ca_private_key_pem=ca_key.private_key_pem, ca_cert_pem=ca.cert_pem,
                                        validity_period_hours=hours, early_renewal_hours=90 * 24,
                                        allowed_uses=["server_auth", "digital_signature", "key_encipherment"],
                                        opts=opts)
    # Secret in state and in the release's values, whatever marks the provider's own outputs.
    return {"ca": ca.cert_pem, "key": pulumi.Output.secret(key.private_key_pem), "certificate": certificate.cert_pem}


class MetricsPipeline(pulumi.ComponentResource):
    def __init__(self, name: str, config: MonitoringConfig, *, system_node_selector: Mapping[str, str],
                 vpc_cidr: str, api_service_ip: str, provider: k8s.Provider,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:monitoring:MetricsPipeline", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)

        monitoring = declare(namespace(NAMESPACE, "baseline"), f"{name}-namespace", in_cluster)
        gpu_agents = declare(namespace(GPU_AGENTS_NAMESPACE, "privileged"), f"{name}-gpu-agents-namespace", in_cluster)
        access = [declare(manifest, f"{name}-{manifest['metadata'].get('namespace', 'cluster')}-"
                                    f"{manifest['metadata']['name']}-{manifest['kind'].lower()}",
                          pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(
                              depends_on=[monitoring, gpu_agents])))
                  for manifest in prometheus_access(vpc_cidr, api_service_ip)]

        def release(suffix: str, chart: str, version: str, repo: str, values: dict, depends_on: list[pulumi.Resource],
                    release_namespace: str = NAMESPACE) -> k8s.helm.v3.Release:
            return k8s.helm.v3.Release(
                f"{name}-{suffix}", name=suffix, chart=chart, version=version, namespace=release_namespace,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo), values=values,
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=depends_on)))

        prometheus = release(PROMETHEUS_RELEASE, "prometheus", config.prometheus_chart_version, COMMUNITY_CHARTS,
                             prometheus_values(config, system_node_selector), [monitoring, *access])
        release("dcgm-exporter", "dcgm-exporter", config.dcgm_exporter_chart_version, DCGM_CHARTS,
                dcgm_exporter_values(), [prometheus, gpu_agents], GPU_AGENTS_NAMESPACE)
        release("metrics-server", "metrics-server", config.metrics_server_chart_version, METRICS_SERVER_CHARTS,
                {"resources": ADDON_RESOURCES["metrics-server"], "nodeSelector": dict(system_node_selector)}, [],
                "kube-system")
        release(ADAPTER_RELEASE, "prometheus-adapter", config.adapter_chart_version, COMMUNITY_CHARTS,
                adapter_values(config, system_node_selector,
                               adapter_serving_certificate(name, pulumi.ResourceOptions(parent=self))), [prometheus])
        self.register_outputs({})
