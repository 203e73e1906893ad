"""`Descheduler`: rebalances pods the scheduler placed well once but badly now (the source, 3.1)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
from pydantic import BaseModel, ConfigDict, Field

CHART_REPOSITORY = "https://kubernetes-sigs.github.io/descheduler/"
# The descheduler's minor matches the Kubernetes minor it is built and tested for (its README's
# compatibility matrix): chart 0.33.0 runs v0.33, 0.34.0 runs v0.34.
CHART_VERSIONS = {"1.33": "0.33.0", "1.34": "0.34.0"}


class SchedulingConfig(BaseModel):
    """Cluster-wide scheduling helpers (config `seedance-gpu:scheduling`)."""

    model_config = ConfigDict(extra="forbid")

    descheduler: bool = Field(False, description="Run the Descheduler with the source's settings.")
    descheduler_chart_version: str | None = Field(
        None, pattern=r"^\d+\.\d+\.\d+$", description="Its Helm chart version; default: the release matching the "
        f"cluster's minor ({', '.join(f'{k}: {v}' for k, v in CHART_VERSIONS.items())}).")
    cpu_threshold: int = Field(35, ge=1, le=100, description="Nodes below this CPU % are under-used (source: 35).")
    memory_threshold: int = Field(45, ge=1, le=100, description="Nodes below this memory % are under-used (source: 45).")
    pod_lifetime_hours: int = Field(72, ge=1, le=8760, description="Pods older than this are evicted (source: 72).")
    lifetime_exempt_namespaces: list[str] = Field(
        ["kube-system", "training-job"],
        description="Namespaces whose pods may run longer (long training jobs resume from checkpoints anyway).")


def chart_version(config: SchedulingConfig, kubernetes_version: str) -> str | None:
    return config.descheduler_chart_version or CHART_VERSIONS.get(kubernetes_version)


def evictor_args(version: str) -> dict:
    """Pods with local storage or claims stay put. From 0.34 the evictor says so with podProtections
    (local-storage pods are protected by default; claims are an extra protection); before, with booleans."""
    minor = int(version.split(".")[1])
    if minor >= 34:
        return {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}
    return {"evictLocalStoragePods": False, "ignorePvcPods": True}


def descheduler_policy(config: SchedulingConfig, version: str) -> dict:
    """LowNodeUtilization (thresholds from the source; targets well above them), RemoveDuplicates and
    PodLifeTime, in the v1alpha2 profile format, for chart `version`."""
    return {
        "profiles": [{
            "name": "seedance",
            "pluginConfig": [
                {"name": "DefaultEvictor", "args": evictor_args(version)},
                {"name": "RemoveDuplicates"},
                {"name": "LowNodeUtilization", "args": {
                    "thresholds": {"cpu": config.cpu_threshold, "memory": config.memory_threshold},
                    "targetThresholds": {"cpu": min(100, config.cpu_threshold * 2),
                                         "memory": min(100, config.memory_threshold + 30)}}},
                {"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": config.pod_lifetime_hours * 3600,
                                                 "namespaces": {"exclude": config.lifetime_exempt_namespaces}}},
            ],
            "plugins": {"balance": {"enabled": ["RemoveDuplicates", "LowNodeUtilization"]},
                        "deschedule": {"enabled": ["PodLifeTime"]}},
        }],
    }


class Descheduler(pulumi.ComponentResource):
    def __init__(self, name: str, config: SchedulingConfig, *, kubernetes_version: str, provider: k8s.Provider,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:cluster:Descheduler", name, None, opts)
        k8s.helm.v3.Release(
            f"{name}-release",
            name="descheduler",
            chart="descheduler",
            version=chart_version(config, kubernetes_version),
            namespace="kube-system",
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            values={"kind": "Deployment", "deschedulingInterval": "10m", "deschedulerPolicyAPIVersion": "descheduler/v1alpha2",
                    "deschedulerPolicy": descheduler_policy(config, chart_version(config, kubernetes_version))},
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.register_outputs({})
