"""`Descheduler`: rebalances pods the scheduler placed well once but badly now (the source, 3.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.cluster.config import DESCHEDULING_INTERVAL, SchedulingConfig, chart_version, target_thresholds
from components.common.manifests import cost_labels
from components.compute.labels import system_placement
from components.compute.priority import CLUSTER_CRITICAL

CHART_REPOSITORY = "https://kubernetes-sigs.github.io/descheduler/"


def evictor_args(version: str) -> dict:
    """Pods with local storage or claims stay put. From 0.34 the evictor says so with podProtections
    (local-storage pods are protected by default; claims are an extra protection); before, with booleans."""
    minor = int(version.split(".")[1])
    if minor >= 34:
        return {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}
    return {"evictLocalStoragePods": False, "ignorePvcPods": True}


def descheduler_policy(config: SchedulingConfig, version: str, exempt: Sequence[str] = ()) -> dict:
    """LowNodeUtilization (thresholds from the source; targets well above them), RemoveDuplicates and
    PodLifeTime, in the v1alpha2 profile format, for chart `version`; `exempt` namespaces run as long as
    they need besides the configured ones."""
    return {
        "profiles": [
            {
                "name": "seedance",
                "pluginConfig": [
                    {"name": "DefaultEvictor", "args": evictor_args(version)},
                    {"name": "RemoveDuplicates"},
                    {
                        "name": "LowNodeUtilization",
                        "args": {
                            "thresholds": {"cpu": config.cpu_threshold, "memory": config.memory_threshold},
                            "targetThresholds": target_thresholds(config),
                        },
                    },
                    {
                        "name": "PodLifeTime",
                        "args": {
                            "maxPodLifeTimeSeconds": config.pod_lifetime_hours * 3600,
                            "namespaces": {
                                "exclude": list(dict.fromkeys([*config.lifetime_exempt_namespaces, *exempt]))
                            },
                        },
                    },
                ],
                "plugins": {
                    "balance": {"enabled": ["RemoveDuplicates", "LowNodeUtilization"]},
                    "deschedule": {"enabled": ["PodLifeTime"]},
                },
            }
        ],
    }


class Descheduler(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        config: SchedulingConfig,
        *,
        kubernetes_version: str,
        provider: k8s.Provider,
        tags: Mapping[str, str],
        training_namespaces: Sequence[str] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`training_namespaces`: where the stack's training pods run (their checkpoint claims' namespace):
        a pod that resumes from a checkpoint still loses its work since the last one when evicted."""
        super().__init__("seedance:cluster:Descheduler", name, None, opts)
        k8s.helm.v3.Release(
            f"{name}-release",
            name="descheduler",
            chart="descheduler",
            version=chart_version(config, kubernetes_version),
            namespace="kube-system",
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            values={
                "kind": "Deployment",
                "deschedulingInterval": DESCHEDULING_INTERVAL,
                "deschedulerPolicyAPIVersion": "descheduler/v1alpha2",
                "deschedulerPolicy": descheduler_policy(
                    config, chart_version(config, kubernetes_version), training_namespaces
                ),
                "podLabels": cost_labels(tags, "descheduler"),
                **system_placement(CLUSTER_CRITICAL),
            },
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.register_outputs({})
