"""`NvidiaDevicePlugin`: makes `nvidia.com/gpu` schedulable on the GPU node groups."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.labels import GPU_TOLERATION, WORKLOAD_CLASS_LABEL

CHART_REPOSITORY = "https://nvidia.github.io/k8s-device-plugin"


def device_plugin_values() -> dict:
    """Helm values: run on every node of a seedance GPU group (they carry the workload-class
    label) and tolerate their GPU taint. The chart's default affinity expects Node Feature
    Discovery labels, which these nodes do not have."""
    return {
        "tolerations": [GPU_TOLERATION],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": WORKLOAD_CLASS_LABEL, "operator": "Exists"}]}]
                }
            }
        },
    }


class NvidiaDevicePlugin(pulumi.ComponentResource):
    def __init__(self, name: str, *, chart_version: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:gpu:NvidiaDevicePlugin", name, None, opts)
        release = k8s.helm.v3.Release(
            f"{name}-release",
            name="nvidia-device-plugin",
            chart="nvidia-device-plugin",
            version=chart_version,
            namespace="nvidia-device-plugin",
            create_namespace=True,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            values=device_plugin_values(),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.release_name = release.name
        self.register_outputs({"release_name": self.release_name})
