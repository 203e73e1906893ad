"""`NvidiaDevicePlugin`: makes `nvidia.com/gpu` schedulable on the GPU node groups, and shares
GPUs where a group asks for it (the source's "compute slice": time-slicing or MIG). `EfaDevicePlugin`:
makes `vpc.amazonaws.com/efa` schedulable on the EFA pools (components/compute/efa.py)."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.common.addon_resources import ADDON_RESOURCES
from components.common.k8s_objects import declare
from components.common.manifests import namespace as namespace_manifest
from components.common.manifests import namespace_baseline
from components.compute.config import GpuSharingConfig
from components.compute.efa import (
    EFA_PLUGIN_CHART,
    EFA_PLUGIN_NAMESPACE,
    EFA_PLUGIN_REPOSITORY,
    EFA_PLUGIN_VERSION,
    efa_device_plugin_values,
)
from components.compute.labels import AGENT_TOLERATIONS, AMI_FAMILY_LABEL, WORKLOAD_CLASS_LABEL
from components.compute.node_bootstrap import AMI_FAMILY_TRAITS

NAMESPACE = "nvidia-device-plugin"
CHART_REPOSITORY = "https://nvidia.github.io/k8s-device-plugin"
# The entry every other node uses: without a default the chart's fallback gives an unlabelled node the
# only entry there is, so one shared group's time-slicing would reach every GPU node.
DEFAULT_CONFIG = "whole-gpus"


def sharing_config(sharing: GpuSharingConfig) -> dict:
    """The device plugin's config file for one sharing setting (whole GPUs, or time-slicing)."""
    if sharing.mode == "time-slicing":
        return {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": sharing.replicas}]}},
        }
    return {"version": "v1", "flags": {"migStrategy": "none"}}


def device_plugin_values(sharing: Mapping[str, GpuSharingConfig] | None = None) -> dict:
    """Helm values: run on every node of a seedance GPU group (they carry the workload-class
    label) whose OS does not run the plugin itself, and tolerate their GPU taint (the chart's
    default affinity expects Node Feature Discovery labels, which these nodes do not have); one
    named config per sharing group, which its nodes select with the `nvidia.com/device-plugin.config`
    label, and a default of whole GPUs for every other node."""
    shared = {name: s for name, s in (sharing or {}).items() if s.mode != "none"}
    configs = {DEFAULT_CONFIG: GpuSharingConfig(), **shared}
    families = sorted(f for f, traits in AMI_FAMILY_TRAITS.items() if not traits.builtin_device_plugin)
    return {
        "config": {
            "map": {name: yaml.safe_dump(sharing_config(s)) for name, s in sorted(configs.items())},
            "default": DEFAULT_CONFIG,
        },
        "tolerations": AGENT_TOLERATIONS,
        "resources": ADDON_RESOURCES["nvidia-device-plugin"],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": WORKLOAD_CLASS_LABEL, "operator": "Exists"},
                                {"key": AMI_FAMILY_LABEL, "operator": "In", "values": families},
                            ]
                        }
                    ]
                }
            }
        },
    }


def _agent_namespace(name: str, namespace: str, parent: pulumi.Resource) -> pulumi.Resource:
    """A GPU agent's namespace (host paths of the kubelet's device-plugin socket): privileged, and nothing may
    reach it nor it anything (it talks to the kubelet through a socket)."""
    declared = declare(
        namespace_manifest(namespace, "privileged"), f"{name}-namespace", pulumi.ResourceOptions(parent=parent)
    )
    for policy in namespace_baseline(namespace):
        declare(
            policy,
            f"{name}-{policy['metadata']['name']}",
            pulumi.ResourceOptions(parent=parent, depends_on=[declared]),
        )
    return declared


class EfaDevicePlugin(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:gpu:EfaDevicePlugin", name, None, opts)
        namespace = _agent_namespace(name, EFA_PLUGIN_NAMESPACE, self)
        release = k8s.helm.v3.Release(
            f"{name}-release",
            name=EFA_PLUGIN_CHART,
            chart=EFA_PLUGIN_CHART,
            version=EFA_PLUGIN_VERSION,
            namespace=EFA_PLUGIN_NAMESPACE,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=EFA_PLUGIN_REPOSITORY),
            values=efa_device_plugin_values(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[namespace]),
        )
        self.release_name = release.name
        self.register_outputs({"release_name": self.release_name})


class NvidiaDevicePlugin(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        *,
        chart_version: str,
        sharing: Mapping[str, GpuSharingConfig] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:gpu:NvidiaDevicePlugin", name, None, opts)
        namespace = _agent_namespace(name, NAMESPACE, self)
        release = k8s.helm.v3.Release(
            f"{name}-release",
            name="nvidia-device-plugin",
            chart="nvidia-device-plugin",
            version=chart_version,
            namespace=NAMESPACE,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            values=device_plugin_values(sharing),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[namespace]),
        )
        self.release_name = release.name
        self.register_outputs({"release_name": self.release_name})
