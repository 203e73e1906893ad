"""NVIDIA Triton serving objects as plain manifests, and the metric rules the autoscaler reads. Pure.

Triton loads every model in its repository before it serves (`poll` and `none` both do; there is
no `--preload-model` flag); in `poll` mode it then follows the bucket, so a published model or a
switched version loads with no rollout. Both modes refuse load/unload requests, so no caller can
bring code into serving. A model that fails to load fails only itself (`--exit-on-error=false`,
`--strict-readiness=false`): the server starts and serves the others, and a failed reload keeps the
loaded version. It drains on SIGTERM within `--exit-timeout-secs`. The warm pool is the HPA's
minimum; scaling follows Triton's own queue time and request rate, not CPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.common.manifests import (
    NAMESPACE_NAME_LABEL,
    Manifest,
    checkov_skips,
    cost_labels,
    metadata,
    namespace_baseline,
    network_policy,
)
from components.compute.labels import NODE_GROUP_LABEL, WORKLOAD_CLASS_LABEL, pool_tolerations
from components.compute.priority import PRIORITY_CLASS


def image(registry: str, version: str, digest: str | None) -> str:
    """The image reference: by digest when one is given, so a moved tag changes nothing that runs."""
    return f"{registry}:{version}-py3" + (f"@{digest}" if digest else "")


PORTS = {"http": 8000, "grpc": 8001, "metrics": 8002}
TRITON_UID = 1000  # the image's triton-server user; the image sets no USER
# Triton's API groups only the platform may call (server r26.07 src/restricted_features.h names them): a
# caller from a client namespace could otherwise register shared memory, read the repository index and
# model configs, and change trace and log settings. Inference, metadata and health stay open to clients.
RESTRICTED_APIS = ("shared-memory", "model-repository", "model-config", "statistics", "trace", "logging")
# The header (HTTP) that carries the key; gRPC clients send it as `triton-grpc-protocol-<key>`
# (grpc_server.h kRestrictedProtocolHeaderTemplate). Without it Triton answers 403 (HTTP) or UNAVAILABLE.
ADMIN_HEADER = "seedance-admin-key"
ADMIN_KEY_ENV = "TRITON_ADMIN_KEY"
ADMIN_KEY_SECRET_KEY = "admin-key"


def admin_key_secret_name(set_name: str) -> str:
    return f"triton-{set_name}-admin-key"


# The names the adapter rules publish and the HPA reads: one place, so they cannot drift apart.
QUEUE_METRIC = "triton_queue_time_us_per_request"
RATE_METRIC = "triton_requests_per_second"


@dataclass(frozen=True)
class TritonSpec:
    """Everything the manifests need, resolved from config."""

    name: str
    namespace: str
    image: str  # full reference: registry, tag, and the digest when pinned
    model_repository: str  # s3://bucket/prefix
    model_control_mode: str  # poll | none
    repository_poll_seconds: int
    gpus: int
    cpu: float
    memory_gib: int
    node_group: str
    warm_pool: int
    max_replicas: int
    queue_time_target_us: int
    requests_per_second_target: int
    startup_budget_seconds: int
    drain_seconds: int
    exit_timeout_seconds: int
    service_account: str
    role_arn: str  # the IRSA role
    region: str
    client_namespaces: tuple[str, ...] = ()  # who may call the inference ports
    metrics_scraper: tuple[str, tuple[tuple[str, str], ...]] = ("monitoring", ())  # (namespace, pod labels)
    track: str = "stable"
    replicas: int | None = None  # a canary's fixed count; the stable Deployment's belongs to the HPA
    tags: tuple[tuple[str, str], ...] = ()  # the stack's cost tags: the pods' cost labels

    @property
    def grace_seconds(self) -> int:
        """Longer than the drain plus Triton's own exit timeout, so the kubelet never kills mid-request."""
        return self.drain_seconds + self.exit_timeout_seconds + 15


def triton_args(spec: TritonSpec) -> list[str]:
    args = [f"--model-repository={spec.model_repository}", f"--model-control-mode={spec.model_control_mode}"]
    if spec.model_control_mode == "poll":
        args.append(f"--repository-poll-secs={spec.repository_poll_seconds}")
    # Readiness answers only once the start-up load is done; a model that failed must not keep the pod
    # (and every scale-up or spot replacement after it) out of the Service.
    # Latency quantiles (nv_inference_request_summary_us, 0.5 to 0.999 over the last minute) for the P99 and
    # jitter the source holds serving to; the counters the HPA reads stay on.
    # The restricted groups need the key from the stack's Secret; the kubelet expands $(VAR) from the
    # container's env, so the pod spec never holds the key (command_line_parser.cc: <apis>:<key>=<value>).
    restricted = f"{','.join(RESTRICTED_APIS)}:{ADMIN_HEADER}=$({ADMIN_KEY_ENV})"
    args += [f"--http-restricted-api={restricted}", f"--grpc-restricted-protocol={restricted}"]
    return [
        *args,
        "--exit-on-error=false",
        "--strict-readiness=false",
        "--allow-metrics=true",
        "--allow-gpu-metrics=true",
        "--metrics-config=summary_latencies=true",
        f"--http-port={PORTS['http']}",
        f"--grpc-port={PORTS['grpc']}",
        f"--metrics-port={PORTS['metrics']}",
        f"--exit-timeout-secs={spec.exit_timeout_seconds}",
    ]


def _labels(spec: TritonSpec) -> dict[str, str]:
    return {"app.kubernetes.io/name": f"triton-{spec.name}", "seedance.io/track": spec.track}


def deployment(spec: TritonSpec) -> Manifest:
    name = f"triton-{spec.name}" + ("" if spec.track == "stable" else f"-{spec.track}")
    probe = {"httpGet": {"path": "/v2/health/ready", "port": "http"}}
    cpu = f"{int(spec.cpu)}" if float(spec.cpu).is_integer() else f"{round(spec.cpu * 1000)}m"
    resources = {"cpu": cpu, "memory": f"{spec.memory_gib}Gi", "nvidia.com/gpu": str(spec.gpus)}
    container = {
        "name": "triton",
        "image": spec.image,
        "imagePullPolicy": "Always",
        "command": ["tritonserver"],
        "args": triton_args(spec),
        "env": [
            {"name": "AWS_REGION", "value": spec.region},
            {"name": "AWS_DEFAULT_REGION", "value": spec.region},
            {
                "name": ADMIN_KEY_ENV,
                "valueFrom": {"secretKeyRef": {"name": admin_key_secret_name(spec.name), "key": ADMIN_KEY_SECRET_KEY}},
            },
        ],
        "ports": [{"name": port, "containerPort": number, "protocol": "TCP"} for port, number in PORTS.items()],
        "resources": {"requests": resources, "limits": resources},
        # Model loading takes minutes for large models: the startup probe's budget, then readiness.
        "startupProbe": {**probe, "periodSeconds": 10, "failureThreshold": max(1, spec.startup_budget_seconds // 10)},
        "readinessProbe": {**probe, "periodSeconds": 5, "failureThreshold": 2},
        "livenessProbe": {
            "httpGet": {"path": "/v2/health/live", "port": "http"},
            "periodSeconds": 10,
            "failureThreshold": 3,
        },
        # Endpoints drop the pod while it sleeps; then SIGTERM makes Triton finish in-flight requests.
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(spec.drain_seconds)]}}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "runAsUser": TRITON_UID,
        },
        "volumeMounts": [{"name": "model-cache", "mountPath": "/tmp"}, {"name": "shm", "mountPath": "/dev/shm"}],
    }
    pod_labels = _labels(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(
            name,
            spec.namespace,
            annotations=checkov_skips(
                **(
                    {}
                    if "@sha256:" in spec.image
                    else {
                        "CKV_K8S_43": "pinned by release tag (never latest); set serving[].image_digest to pin the "
                        "digest"
                    }
                ),
                CKV_K8S_40="the image's triton-server user is uid 1000 and owns the server's files; a higher uid "
                "breaks it",
                CKV_K8S_35="Triton takes its admin key on its command line only; the kubelet expands it from this "
                "env var, so the pod spec never holds it",
            ),
        ),
        "spec": {
            # No `replicas` for the stable track: the HPA owns the count, from the warm pool up.
            **({"replicas": spec.replicas} if spec.replicas is not None else {}),
            "selector": {"matchLabels": pod_labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {
                    "labels": {**cost_labels(dict(spec.tags), f"triton-{spec.name}"), **pod_labels},
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(PORTS["metrics"]),
                        "prometheus.io/path": "/metrics",
                    },
                },
                "spec": {
                    "serviceAccountName": spec.service_account,
                    "automountServiceAccountToken": False,  # IRSA mounts its own token; Triton never calls the API
                    "terminationGracePeriodSeconds": spec.grace_seconds,
                    "priorityClassName": PRIORITY_CLASS["online"],  # serving preempts batch for capacity
                    "nodeSelector": {WORKLOAD_CLASS_LABEL: "online", NODE_GROUP_LABEL: spec.node_group},
                    "tolerations": pool_tolerations(spec.node_group),
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": TRITON_UID,
                        "runAsGroup": TRITON_UID,
                        "fsGroup": TRITON_UID,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "topologySpreadConstraints": [
                        # The source: maxSkew 1 with DoNotSchedule leaves pods Pending on mixed nodes.
                        {
                            "maxSkew": 2,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": pod_labels},
                        },
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": pod_labels},
                        },
                    ],
                    "containers": [container],
                    "volumes": [
                        # Triton copies the S3 model repository to a local directory before loading.
                        {"name": "model-cache", "emptyDir": {"sizeLimit": "50Gi"}},
                        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}},
                    ],
                },
            },
        },
    }


def service(spec: TritonSpec) -> Manifest:
    """One Service for the stable and canary Deployments (selects on the app name only)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(f"triton-{spec.name}", spec.namespace),
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": f"triton-{spec.name}"},
            "ports": [
                {"name": port, "port": number, "targetPort": port, "protocol": "TCP"} for port, number in PORTS.items()
            ],
        },
    }


def disruption_budget(spec: TritonSpec) -> Manifest:
    """One replica down at a time in drains and spot interruptions. A minimum equal to the warm pool
    would block every drain at minimum scale until the ASG's lifecycle hook timed out."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(f"triton-{spec.name}", spec.namespace),
        "spec": {
            "maxUnavailable": 1,
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
            "selector": {"matchLabels": {"app.kubernetes.io/name": f"triton-{spec.name}"}},
        },
    }


def autoscaler(spec: TritonSpec) -> Manifest:
    """Scale on Triton's queue time per request and request rate; never on CPU (it jitters, per the source)."""

    def pods_metric(metric: str, target: int) -> dict[str, Any]:
        return {
            "type": "Pods",
            "pods": {"metric": {"name": metric}, "target": {"type": "AverageValue", "averageValue": str(target)}},
        }

    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": metadata(f"triton-{spec.name}", spec.namespace),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"triton-{spec.name}"},
            "minReplicas": spec.warm_pool,
            "maxReplicas": spec.max_replicas,
            "metrics": [
                pods_metric(QUEUE_METRIC, spec.queue_time_target_us),
                pods_metric(RATE_METRIC, spec.requests_per_second_target),
            ],
            "behavior": {
                # A new pod loads models for seconds to minutes while the queue is still long: wait a
                # minute and add at most two pods a minute, so one burst is not answered twice.
                "scaleUp": {
                    "stabilizationWindowSeconds": 60,
                    "selectPolicy": "Min",
                    "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": 600,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}],
                },
            },
        },
    }


def service_account(spec: TritonSpec) -> Manifest:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(
            spec.service_account, spec.namespace, annotations={"eks.amazonaws.com/role-arn": spec.role_arn}
        ),
        "automountServiceAccountToken": False,
    }


def triton_ingress(
    client_namespaces: Sequence[str], metrics_scraper: tuple[str, Mapping[str, str]]
) -> list[dict[str, Any]]:
    """Who reaches Triton's pods: the client namespaces on the inference ports, the metrics scraper (its
    namespace and pod labels) on the metrics port. The gate holds a serving namespace's ingress to this."""
    scraper_namespace, scraper_labels = metrics_scraper

    def ports(*names: str) -> list[dict[str, Any]]:
        return [{"port": PORTS[n], "protocol": "TCP"} for n in names]

    ingress = [
        {
            "from": [
                {
                    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: scraper_namespace}},
                    "podSelector": {"matchLabels": dict(scraper_labels)},
                }
            ],
            "ports": ports("metrics"),
        }
    ]
    if client_namespaces:
        ingress.insert(
            0,
            {
                "from": [
                    {
                        "namespaceSelector": {
                            "matchExpressions": [
                                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(client_namespaces)}
                            ]
                        }
                    }
                ],
                "ports": ports("http", "grpc"),
            },
        )
    return ingress


def network_policies(spec: TritonSpec) -> list[Manifest]:
    """The namespace denies everything by default; Triton's pods take inference calls from the client
    namespaces only, metrics scrapes from Prometheus only, and reach out only on 443 (S3 through the
    gateway endpoint, STS and KMS through theirs)."""
    ingress = triton_ingress(spec.client_namespaces, (spec.metrics_scraper[0], dict(spec.metrics_scraper[1])))
    triton = network_policy(
        f"triton-{spec.name}",
        spec.namespace,
        {"app.kubernetes.io/name": f"triton-{spec.name}"},
        ingress=ingress,
        egress=[{"ports": [{"port": 443, "protocol": "TCP"}]}],
    )
    return [*namespace_baseline(spec.namespace), triton]


def adapter_rules(window: str) -> list[dict[str, Any]]:
    """prometheus-adapter rules publishing the two Pods metrics the HPA names. Triton's upstream example
    divides queue time by requests over a window; both are counters, so `increase` (not `delta`, which
    is for gauges and misreads counter resets), over `window` (several scrape intervals)."""
    resources = {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}}
    return [
        {
            "seriesQuery": 'nv_inference_queue_duration_us{namespace!="",pod!=""}',
            "resources": resources,
            "name": {"matches": "^nv_inference_queue_duration_us$", "as": QUEUE_METRIC},
            "metricsQuery": (
                f"avg(increase(nv_inference_queue_duration_us{{<<.LabelMatchers>>}}[{window}])"
                f"/(1+increase(nv_inference_request_success{{<<.LabelMatchers>>}}[{window}]))) by (<<.GroupBy>>)"
            ),
        },
        {
            "seriesQuery": 'nv_inference_request_success{namespace!="",pod!=""}',
            "resources": resources,
            "name": {"matches": "^nv_inference_request_success$", "as": RATE_METRIC},
            "metricsQuery": (
                f"sum(rate(nv_inference_request_success{{<<.LabelMatchers>>}}[{window}])) by (<<.GroupBy>>)"
            ),
        },
    ]


def serving_manifests(spec: TritonSpec, canary: TritonSpec | None) -> list[Manifest]:
    objects = [
        service_account(spec),
        deployment(spec),
        service(spec),
        disruption_budget(spec),
        autoscaler(spec),
        *network_policies(spec),
    ]
    if canary is not None:
        objects.append(deployment(canary))
    return objects
