"""`MetricsPipeline`: Prometheus, the NVIDIA DCGM exporter and prometheus-adapter, so the Triton HPAs
have the Pods metrics they scale on (without a Prometheus every HPA reports FailedGetPodsMetric).

One path, no operator: Prometheus scrapes pods by their `prometheus.io/*` annotations with the
chart's `kubernetes-pods` job less `honor_labels` (Triton's metrics port, the DCGM exporter's), and
the adapter queries it in-cluster. No ServiceMonitor, so no CRD has to exist before the first `pulumi
up`. The chart's defaults are narrowed: its own ClusterRole (with `nodes/proxy`) is replaced, and only
the adapter reaches the server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pulumi_tls as tls

from components.common.addon_resources import ADDON_RESOURCES
from components.common.iam import irsa_trust_policy
from components.common.k8s_objects import declare
from components.common.manifests import (
    NAMESPACE_NAME_LABEL,
    Manifest,
    api_server_egress,
    cost_labels,
    metadata,
    namespace,
    namespace_baseline,
    network_policy,
)
from components.compute.labels import AGENT_TOLERATIONS, WORKLOAD_CLASS_LABEL, system_placement
from components.compute.priority import CLUSTER_CRITICAL, PLATFORM_PRIORITY_CLASS
from components.compute.spot_interruptions import NTH_METRICS_PORT
from components.monitoring.config import (
    GPU_AGENTS_NAMESPACE,
    NAMESPACE,
    PROMETHEUS_RELEASE,
    PROMETHEUS_SERVER_LABELS,
    MonitoringConfig,
)
from components.monitoring.dashboards import ServedSet, dashboards
from components.monitoring.grafana import (
    DASHBOARDS_CONFIG_MAP,
    GRAFANA_LABELS,
    grafana_values,
)
from components.monitoring.grafana import (
    NAMESPACE as GRAFANA_NAMESPACE,
)
from components.monitoring.grafana import (
    RELEASE as GRAFANA_RELEASE,
)
from components.monitoring.opencost import (
    API_PORT as OPENCOST_PORT,
)
from components.monitoring.opencost import (
    NAMESPACE as OPENCOST_NAMESPACE,
)
from components.monitoring.opencost import (
    OPENCOST_LABELS,
    ClusterRates,
    opencost_scrape_job,
    opencost_values,
)
from components.monitoring.opencost import (
    RELEASE as OPENCOST_RELEASE,
)
from components.monitoring.rules import rule_files
from components.monitoring.sizing import FREE_BELOW_VOLUME_GIB, MIN_HISTORY_GIB, SeriesEstimate, history_volume_gib
from components.serving.manifests import PORTS, adapter_rules
from components.storage.manifests import history_storage_class, volume_claim

COMMUNITY_CHARTS = "https://prometheus-community.github.io/helm-charts"
OPENCOST_CHARTS = "https://opencost.github.io/opencost-helm-chart"
# The chart moved from grafana/helm-charts to grafana-community/helm-charts in 2026 (12.x is published there).
GRAFANA_CHARTS = "https://grafana-community.github.io/helm-charts"
DCGM_CHARTS = "https://nvidia.github.io/dcgm-exporter/helm-charts"
METRICS_SERVER_CHARTS = "https://kubernetes-sigs.github.io/metrics-server/"
DCGM_PORT = 9400
PROMETHEUS_PORT = 9090  # the server's container port (the chart's Service maps 80 to it)
ADAPTER_PORT = 6443  # the adapter chart's listenPort
# The adapter's Service as the API server calls it: the chart's fullname is the release name here.
ADAPTER_RELEASE = "prometheus-adapter"
# Prometheus's history: the stack's claim (the chart's server.persistentVolume.existingClaim) of this class.
HISTORY_CLAIM = "prometheus-history"
HISTORY_STORAGE_CLASS = "monitoring-gp3"
# The chart's global scrape timeout; Prometheus refuses a timeout longer than the interval.
CHART_SCRAPE_TIMEOUT_SECONDS = 10


def prometheus_values(
    config: MonitoringConfig,
    rules: Mapping[str, dict] | None = None,
    alerting: Mapping | None = None,
    memory_mib: tuple[int, int] = (512, 2048),
    volume_gib: int = MIN_HISTORY_GIB,
) -> dict:
    """The server and Alertmanager on the system nodes (keys checked in the chart's values.yaml at
    27.39.0, Alertmanager's in its subchart 1.26.0). Scraped: pods by annotation, each kubelet's cAdvisor
    and OpenCost. The history (autoscaling's samples, alerts, the cost dashboards and the cost gate's
    window) is on the stack's own claim (HISTORY_CLAIM: EKS from 1.30 has no default StorageClass), so a
    system node's replacement restarts the server, not its history; the chart's Recreate strategy lets
    the new pod attach it. Not persistent: a bounded emptyDir. The TSDB is kept 2 GiB below either, so the
    kubelet never evicts the server for disk. `rules`: the serverFiles rule files; `alerting`:
    Alertmanager's values (None: no Alertmanager); `memory_mib`: request and limit; `volume_gib`: the
    volume's size (config.storage_gib, else sized from the series)."""
    interval = config.scrape_interval_seconds
    storage = (
        {"persistentVolume": {"enabled": True, "existingClaim": HISTORY_CLAIM}}
        if config.persistent
        else {"persistentVolume": {"enabled": False}, "emptyDir": {"sizeLimit": f"{volume_gib}Gi"}}
    )
    return {
        "alertmanager": dict(alerting) if alerting else {"enabled": False},
        "kube-state-metrics": {"enabled": False},  # OpenCost emits the kube-state series its costs need
        "prometheus-node-exporter": {"enabled": False},
        "prometheus-pushgateway": {"enabled": False},
        "serverFiles": {
            "prometheus.yml": {
                "scrape_configs": [pods_scrape_job(), cadvisor_scrape_job(), opencost_scrape_job(interval)]
            },
            **(rules or {}),
        },
        # No lifecycle API (the chart's default turns it on for its reloader sidecar, and then any pod that
        # reaches 9090 may POST /-/quit): Prometheus 3.6 rereads its own config file when it changes.
        "configmapReload": {"prometheus": {"enabled": False}},
        "server": {
            "useExistingClusterRoleName": PROMETHEUS_CLUSTER_ROLE,  # prometheus_access(): no nodes/proxy
            "global": {
                "scrape_interval": f"{interval}s",
                "evaluation_interval": f"{interval}s",
                "scrape_timeout": f"{min(interval, CHART_SCRAPE_TIMEOUT_SECONDS)}s",
            },
            "extraFlags": ["enable-feature=auto-reload-config", "config.auto-reload-interval=30s"],
            "retention": f"{config.retention_hours}h",
            "retentionSize": f"{volume_gib - FREE_BELOW_VOLUME_GIB}GB",  # Prometheus's GB is 2^30 bytes
            **storage,
            # Sized from the series the stack holds at its maxima (components/monitoring/sizing.py).
            "resources": {
                "requests": {"cpu": "250m", "memory": f"{memory_mib[0]}Mi"},
                "limits": {"memory": f"{memory_mib[1]}Mi"},
            },
            **system_placement(PLATFORM_PRIORITY_CLASS),
        },
    }


ALERTMANAGER_RELEASE = f"{PROMETHEUS_RELEASE}-alertmanager"  # the subchart's fullname: its service account
ALERTMANAGER_PORT = 9093


def alertmanager_values(topic_arn: str, region: str, role_arn: str) -> dict:
    """Alertmanager delivers to the stack's SNS topic (its e-mail subscribers, or chat behind it), signing
    with the IRSA role; no volume (a restart forgets silences, not alerts: Prometheus resends them)."""
    return {
        "enabled": True,
        "persistence": {"enabled": False},
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": role_arn}},
        "resources": ADDON_RESOURCES["alertmanager"],
        **system_placement(PLATFORM_PRIORITY_CLASS),
        "config": {
            "global": {},
            "receivers": [
                {
                    "name": "stack-topic",
                    "sns_configs": [
                        {
                            "topic_arn": topic_arn,
                            "sigv4": {"region": region},
                            "send_resolved": True,
                            # The budget breaker acts only on AWS Budgets' messages; these say where they come from.
                            "subject": "[seedance {{ .Status }}] {{ .CommonLabels.alertname }}",
                        }
                    ],
                }
            ],
            "route": {
                "receiver": "stack-topic",
                "group_by": ["alertname", "namespace"],
                "group_wait": "30s",
                "group_interval": "5m",
                "repeat_interval": "4h",
            },
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
            {
                "source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_scrape"],
                "action": "keep",
                "regex": "true",
            },
            {
                "source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_path"],
                "action": "replace",
                "target_label": "__metrics_path__",
                "regex": "(.+)",
            },
            {
                "source_labels": ["__meta_kubernetes_pod_annotation_prometheus_io_port", "__meta_kubernetes_pod_ip"],
                "action": "replace",
                "regex": r"(\d+);((([0-9]+?)(\.|$)){4})",
                "replacement": "$2:$1",
                "target_label": "__address__",
            },
            {"source_labels": ["__meta_kubernetes_namespace"], "action": "replace", "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "action": "replace", "target_label": "pod"},
            {
                "source_labels": ["__meta_kubernetes_pod_phase"],
                "regex": "Pending|Succeeded|Failed|Completed",
                "action": "drop",
            },
            {"source_labels": ["__meta_kubernetes_pod_node_name"], "action": "replace", "target_label": "node"},
        ],
    }


SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
CADVISOR_KEPT = (
    "container_cpu_usage_seconds_total",
    "container_memory_working_set_bytes",
    "container_network_receive_bytes_total",
    "container_network_transmit_bytes_total",
)
KUBELET_PORT = 10250


def cadvisor_scrape_job() -> dict:
    """Each kubelet's cAdvisor, read directly with the server's token (`nodes/metrics`), not through the
    API server's node proxy (`nodes/proxy` is not granted). EKS kubelets serve a self-signed certificate
    (no serving-certificate bootstrap), so it is not verified; the token is. Only the series OpenCost
    and the rules read are kept."""
    return {
        "job_name": "kubernetes-cadvisor",
        "scheme": "https",
        "metrics_path": "/metrics/cadvisor",
        "kubernetes_sd_configs": [{"role": "node"}],
        "authorization": {"credentials_file": f"{SERVICE_ACCOUNT_DIR}/token"},
        "tls_config": {"ca_file": f"{SERVICE_ACCOUNT_DIR}/ca.crt", "insecure_skip_verify": True},
        "relabel_configs": [
            {"source_labels": ["__meta_kubernetes_node_name"], "action": "replace", "target_label": "node"}
        ],
        "metric_relabel_configs": [{"source_labels": ["__name__"], "action": "keep", "regex": "|".join(CADVISOR_KEPT)}],
    }


def prometheus_access(vpc_cidr: str, api_service_ip: str) -> list[Manifest]:
    """What the server may read (the chart's ClusterRole less `nodes/proxy`, the kubelet's exec and log
    path, which the pod job never uses), and the namespaces' traffic: everything denied but DNS; the
    server answers the adapter only, on 9090 (the lifecycle API is off: no config reloader needs it), and
    reaches the metrics ports it scrapes and the API server; the adapter answers the
    API server (its control-plane addresses are in the VPC) and reaches the server and the API; the
    DCGM exporter answers the server only."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(PROMETHEUS_CLUSTER_ROLE),
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["nodes", "nodes/metrics", "services", "endpoints", "pods"],
                "verbs": ["get", "list", "watch"],
            },
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(PROMETHEUS_CLUSTER_ROLE),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": PROMETHEUS_CLUSTER_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": PROMETHEUS_SERVICE_ACCOUNT, "namespace": NAMESPACE}],
    }
    tcp = lambda *ports: [{"port": port, "protocol": "TCP"} for port in ports]  # noqa: E731
    adapter_pods = {"app.kubernetes.io/name": ADAPTER_RELEASE}
    # Pods dial the API at the `kubernetes` Service address, which the network policy agent judges before
    # it is translated (and resolves Services only for pod selectors): that address, and the control
    # plane's own in the VPC.
    api_server = api_server_egress(vpc_cidr, api_service_ip)
    readers = [
        {"podSelector": {"matchLabels": adapter_pods}},
        *[
            {
                "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace_name}},
                "podSelector": {"matchLabels": pods},
            }
            for namespace_name, pods in ((OPENCOST_NAMESPACE, OPENCOST_LABELS), (GRAFANA_NAMESPACE, GRAFANA_LABELS))
        ],
    ]
    alertmanager_pods = {"app.kubernetes.io/name": "alertmanager"}
    server = network_policy(
        "prometheus-server",
        NAMESPACE,
        PROMETHEUS_SERVER_LABELS,
        ingress=[{"from": readers, "ports": tcp(PROMETHEUS_PORT)}],
        egress=[
            {"ports": tcp(PORTS["metrics"], DCGM_PORT, NTH_METRICS_PORT)},
            api_server,
            {"to": [{"ipBlock": {"cidr": vpc_cidr}}], "ports": tcp(KUBELET_PORT)},
            {
                "to": [
                    {
                        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: OPENCOST_NAMESPACE}},
                        "podSelector": {"matchLabels": OPENCOST_LABELS},
                    }
                ],
                "ports": tcp(OPENCOST_PORT),
            },
            {"to": [{"podSelector": {"matchLabels": alertmanager_pods}}], "ports": tcp(ALERTMANAGER_PORT)},
        ],
    )
    # Alertmanager hears the server only and speaks HTTPS to SNS and STS (its IRSA credentials).
    alertmanager = network_policy(
        "alertmanager",
        NAMESPACE,
        alertmanager_pods,
        ingress=[
            {"from": [{"podSelector": {"matchLabels": PROMETHEUS_SERVER_LABELS}}], "ports": tcp(ALERTMANAGER_PORT)}
        ],
        egress=[{"ports": tcp(443)}],
    )
    adapter = network_policy(
        ADAPTER_RELEASE,
        NAMESPACE,
        adapter_pods,
        ingress=[{"from": [{"ipBlock": {"cidr": vpc_cidr}}], "ports": tcp(ADAPTER_PORT)}],
        egress=[
            {"to": [{"podSelector": {"matchLabels": PROMETHEUS_SERVER_LABELS}}], "ports": tcp(PROMETHEUS_PORT)},
            api_server,
        ],
    )
    exporter = network_policy(
        "dcgm-exporter",
        GPU_AGENTS_NAMESPACE,
        {"app.kubernetes.io/name": "dcgm-exporter"},
        ingress=[
            {
                "from": [
                    {
                        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: NAMESPACE}},
                        "podSelector": {"matchLabels": PROMETHEUS_SERVER_LABELS},
                    }
                ],
                "ports": tcp(DCGM_PORT),
            }
        ],
    )
    return [
        role,
        binding,
        *namespace_baseline(NAMESPACE),
        server,
        adapter,
        alertmanager,
        *namespace_baseline(GPU_AGENTS_NAMESPACE),
        exporter,
    ]


def dcgm_exporter_values() -> dict:
    """On every GPU node (tolerating their taint); scraped through pod annotations, not a ServiceMonitor."""
    return {
        "serviceMonitor": {"enabled": False},
        "resources": ADDON_RESOURCES["dcgm-exporter"],
        "tolerations": AGENT_TOLERATIONS,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": WORKLOAD_CLASS_LABEL, "operator": "Exists"}]}]
                }
            }
        },
        "podAnnotations": {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(DCGM_PORT),
            "prometheus.io/path": "/metrics",
        },
    }


def adapter_values(config: MonitoringConfig, tls_values: Mapping[str, pulumi.Input[str]]) -> dict:
    """`tls_values`: ca, key and certificate of the adapter's serving certificate, so the API server
    verifies whom it asks for metrics (the chart's default APIService skips TLS verification)."""
    return {
        "prometheus": {"url": config.prometheus_url, "port": 80},
        "rules": {"default": False, "custom": adapter_rules(config.rate_window)},
        "tls": {"enable": True, **tls_values},
        # Two replicas and a budget: while the only adapter is down, API discovery fails cluster-wide
        # (its APIService answers nothing) and namespace deletion stalls.
        "replicas": 2,
        "podDisruptionBudget": {"enabled": True, "maxUnavailable": 1},
        "resources": ADDON_RESOURCES["prometheus-adapter"],
        # The custom metrics API every Triton HPA reads.
        **system_placement(CLUSTER_CRITICAL),
    }


CERTIFICATE_YEARS = 5  # renewed by the first `pulumi up` in its last 90 days


def adapter_serving_certificate(name: str, opts: pulumi.ResourceOptions) -> dict[str, pulumi.Output[str]]:
    """A CA of the stack's own and the adapter's serving certificate, in Pulumi state (no cert-manager
    to install first): the APIService carries the CA, the adapter the key and certificate."""
    hours = CERTIFICATE_YEARS * 365 * 24
    ca_key = tls.PrivateKey(f"{name}-metrics-ca-key", algorithm="ECDSA", ecdsa_curve="P256", opts=opts)
    ca = tls.SelfSignedCert(
        f"{name}-metrics-ca",
        private_key_pem=ca_key.private_key_pem,
        is_ca_certificate=True,
        subject=tls.SelfSignedCertSubjectArgs(common_name=f"{name} metrics API CA"),
        validity_period_hours=hours,
        early_renewal_hours=90 * 24,
        allowed_uses=["cert_signing", "crl_signing", "digital_signature"],
        opts=opts,
    )
    key = tls.PrivateKey(f"{name}-adapter-key", algorithm="ECDSA", ecdsa_curve="P256", opts=opts)
    service = f"{ADAPTER_RELEASE}.{NAMESPACE}.svc"
    request = tls.CertRequest(
        f"{name}-adapter-csr",
        private_key_pem=key.private_key_pem,
        subject=tls.CertRequestSubjectArgs(common_name=service),
        dns_names=[service, f"{service}.cluster.local"],
        opts=opts,
    )
    certificate = tls.LocallySignedCert(
        f"{name}-adapter-cert",
        cert_request_pem=request.cert_request_pem,
        ca_private_key_pem=ca_key.private_key_pem,
        ca_cert_pem=ca.cert_pem,
        validity_period_hours=hours,
        early_renewal_hours=90 * 24,
        allowed_uses=["server_auth", "digital_signature", "key_encipherment"],
        opts=opts,
    )
    # Secret in state and in the release's values, whatever marks the provider's own outputs.
    return {"ca": ca.cert_pem, "key": pulumi.Output.secret(key.private_key_pem), "certificate": certificate.cert_pem}


@dataclass(frozen=True)
class CostMonitoring:
    """What the cost loop's parts need from the rest of the stack."""

    cluster_name: str
    monthly_budget_usd: float
    rebalance: str  # what runs when node utilisation spreads (said in the alert)
    rates: ClusterRates
    served: tuple[ServedSet, ...]
    planned_spot_share: Mapping[str, float]
    series: SeriesEstimate
    alert_topic_arn: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    region: str
    tags: Mapping[str, str]


def alertmanager_policy(topic_arn: str, key_arn: str) -> dict:
    """Publish to the stack's encrypted topic, nothing else."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn},
            {"Effect": "Allow", "Action": ["kms:GenerateDataKey", "kms:Decrypt"], "Resource": key_arn},
        ],
    }


class MetricsPipeline(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        config: MonitoringConfig,
        *,
        vpc_cidr: str,
        api_service_ip: str,
        provider: k8s.Provider,
        cost: CostMonitoring,
        csi_driver: pulumi.Resource,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:monitoring:MetricsPipeline", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)

        monitoring = declare(namespace(NAMESPACE, "baseline"), f"{name}-namespace", in_cluster)
        gpu_agents = declare(namespace(GPU_AGENTS_NAMESPACE, "privileged"), f"{name}-gpu-agents-namespace", in_cluster)
        access = [
            declare(
                manifest,
                f"{name}-{manifest['metadata'].get('namespace', 'cluster')}-"
                f"{manifest['metadata']['name']}-{manifest['kind'].lower()}",
                pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[monitoring, gpu_agents])),
            )
            for manifest in prometheus_access(vpc_cidr, api_service_ip)
        ]

        def release(
            suffix: str,
            chart: str,
            version: str,
            repo: str,
            values: dict | pulumi.Output[dict],
            depends_on: list[pulumi.Resource],
            release_namespace: str = NAMESPACE,
        ) -> k8s.helm.v3.Release:
            # The platform's own pods carry the cost labels too (the prometheus chart: on its server and
            # Alertmanager; the others: podLabels).
            # Labelled in place when the values are a mapping: resolving them as one Output would make all of
            # them secret for one secret leaf (the adapter's key), and a plan file would then hide every value
            # from the gate, which renders the release from them.
            labelled = (
                with_cost_labels(values, cost.tags, suffix)
                if isinstance(values, dict)
                else pulumi.Output.from_input(values).apply(lambda v: with_cost_labels(v, cost.tags, suffix))
            )
            return k8s.helm.v3.Release(
                f"{name}-{suffix}",
                name=suffix,
                chart=chart,
                version=version,
                namespace=release_namespace,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo),
                values=labelled,
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=depends_on)),
            )

        # Alertmanager signs its SNS calls as this role (IRSA), which may publish to the stack's topic only.
        alerts_role = aws.iam.Role(
            f"{name}-alertmanager",
            tags=dict(cost.tags),
            opts=child,
            assume_role_policy=pulumi.Output.all(cost.oidc_provider_arn, cost.oidc_issuer_url).apply(
                lambda v: json.dumps(irsa_trust_policy(v[0], v[1], NAMESPACE, ALERTMANAGER_RELEASE))
            ),
        )
        aws.iam.RolePolicy(
            f"{name}-alertmanager-publish",
            role=alerts_role.id,
            opts=child,
            policy=pulumi.Output.all(cost.alert_topic_arn, cost.kms_key_arn).apply(
                lambda v: json.dumps(alertmanager_policy(v[0], v[1]))
            ),
        )
        alerting = pulumi.Output.all(cost.alert_topic_arn, alerts_role.arn).apply(
            lambda v: alertmanager_values(v[0], cost.region, v[1])
        )
        rules = rule_files(cost.monthly_budget_usd, cost.rebalance)
        memory = (cost.series.memory_request_mib, cost.series.memory_limit_mib)
        volume_gib = history_volume_gib(config, cost.series)
        history = []
        if config.persistent:
            # Bound when the server is first scheduled; the EBS CSI driver makes it (encrypted, tagged).
            storage_class = declare(
                history_storage_class(HISTORY_STORAGE_CLASS, cost.kms_key_arn, dict(cost.tags)),
                f"{name}-history-storageclass",
                pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[csi_driver])),
            )
            history = [
                declare(
                    volume_claim(HISTORY_CLAIM, NAMESPACE, HISTORY_STORAGE_CLASS, volume_gib),
                    f"{name}-history-claim",
                    pulumi.ResourceOptions.merge(
                        in_cluster, pulumi.ResourceOptions(depends_on=[monitoring, storage_class])
                    ),
                )
            ]
        prometheus = release(
            PROMETHEUS_RELEASE,
            "prometheus",
            config.prometheus_chart_version,
            COMMUNITY_CHARTS,
            alerting.apply(lambda values: prometheus_values(config, rules, values, memory, volume_gib)),
            [monitoring, *access, *history],
        )
        release(
            "dcgm-exporter",
            "dcgm-exporter",
            config.dcgm_exporter_chart_version,
            DCGM_CHARTS,
            dcgm_exporter_values(),
            [prometheus, gpu_agents],
            GPU_AGENTS_NAMESPACE,
        )
        release(
            "metrics-server",
            "metrics-server",
            config.metrics_server_chart_version,
            METRICS_SERVER_CHARTS,
            {"resources": ADDON_RESOURCES["metrics-server"], **system_placement(CLUSTER_CRITICAL)},
            [],
            "kube-system",
        )
        release(
            ADAPTER_RELEASE,
            "prometheus-adapter",
            config.adapter_chart_version,
            COMMUNITY_CHARTS,
            adapter_values(config, adapter_serving_certificate(name, pulumi.ResourceOptions(parent=self))),
            [prometheus],
        )

        # OpenCost: cost per namespace, team and app from this Prometheus, priced as the plans price capacity.
        opencost_namespace = declare(
            namespace(OPENCOST_NAMESPACE, "restricted"), f"{name}-opencost-namespace", in_cluster
        )
        after_opencost_namespace = pulumi.ResourceOptions.merge(
            in_cluster, pulumi.ResourceOptions(depends_on=[opencost_namespace])
        )
        opencost_base = [
            declare(m, f"{name}-opencost-{m['metadata']['name']}", after_opencost_namespace)
            for m in namespace_baseline(OPENCOST_NAMESPACE)
        ]
        release(
            OPENCOST_RELEASE,
            "opencost",
            config.opencost_chart_version,
            OPENCOST_CHARTS,
            opencost_values(cost.rates, cost.cluster_name, api_server_egress(vpc_cidr, api_service_ip)),
            [prometheus, *opencost_base],
            OPENCOST_NAMESPACE,
        )

        # Grafana: the dashboards as code, by port-forward only.
        grafana_namespace = declare(namespace(GRAFANA_NAMESPACE, "restricted"), f"{name}-grafana-namespace", in_cluster)
        after_grafana_namespace = pulumi.ResourceOptions.merge(
            in_cluster, pulumi.ResourceOptions(depends_on=[grafana_namespace])
        )
        grafana_policies = [
            declare(m, f"{name}-grafana-{m['metadata']['name']}", after_grafana_namespace) for m in grafana_access()
        ]
        board_files = dashboards(list(cost.served), cost.monthly_budget_usd, dict(cost.planned_spot_share))
        boards = declare(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata(DASHBOARDS_CONFIG_MAP, GRAFANA_NAMESPACE),
                "data": board_files,
            },
            f"{name}-dashboards",
            after_grafana_namespace,
        )
        release(
            GRAFANA_RELEASE,
            "grafana",
            config.grafana_chart_version,
            GRAFANA_CHARTS,
            grafana_values(config.prometheus_url),
            [prometheus, boards, *grafana_policies],
            GRAFANA_NAMESPACE,
        )
        self.register_outputs({})


def with_cost_labels(values: dict, tags: Mapping[str, str], app: str) -> dict:
    """A release's values with its pods' cost labels where its chart takes them."""
    if app == PROMETHEUS_RELEASE:
        return {
            **values,
            "server": {**values["server"], "podLabels": cost_labels(tags, "prometheus")},
            "alertmanager": {**values["alertmanager"], "podLabels": cost_labels(tags, "alertmanager")}
            if values["alertmanager"].get("enabled")
            else values["alertmanager"],
        }
    return {**values, "podLabels": cost_labels(tags, app)}


def grafana_access() -> list[Manifest]:
    """Nothing in (port-forward reaches the pod through the kubelet); out to the Prometheus server only."""
    to_prometheus = network_policy(
        "grafana",
        GRAFANA_NAMESPACE,
        GRAFANA_LABELS,
        egress=[
            {
                "to": [
                    {
                        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: NAMESPACE}},
                        "podSelector": {"matchLabels": PROMETHEUS_SERVER_LABELS},
                    }
                ],
                "ports": [{"port": PROMETHEUS_PORT, "protocol": "TCP"}],
            }
        ],
    )
    return [*namespace_baseline(GRAFANA_NAMESPACE), to_prometheus]
