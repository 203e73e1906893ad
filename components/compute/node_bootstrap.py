"""How a GPU node boots and joins the cluster: the AMI's SSM parameter and the user data. Pure.

Like pulumi-eks's AMI table: each AMI family knows its SSM parameter and how to render user data
that registers the node with its labels and taints. Taints must be set by the kubelet itself:
the cluster autoscaler does not apply them.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Literal

AmiFamily = Literal["al2023", "bottlerocket"]
AMI_FAMILIES: tuple[str, ...] = ("al2023", "bottlerocket")
_MIME_BOUNDARY = "//"


@dataclass(frozen=True)
class AmiFamilyTraits:
    """What the launch template and the cluster's add-ons must know about an AMI family."""

    block_devices: tuple[str, ...]  # every EBS device the AMI maps: all must be encrypted with our key
    image_device: str  # where container images live: sized by the group's volume size
    builtin_device_plugin: bool  # the OS runs the NVIDIA device plugin itself (no DaemonSet there)


AMI_FAMILY_TRAITS = {
    "al2023": AmiFamilyTraits(block_devices=("/dev/xvda",), image_device="/dev/xvda", builtin_device_plugin=False),
    # Bottlerocket: a small OS volume and a data volume for images and containers; its NVIDIA variants
    # run the k8s device plugin as a host service, configured by settings.kubelet-device-plugins.
    "bottlerocket": AmiFamilyTraits(
        block_devices=("/dev/xvda", "/dev/xvdb"), image_device="/dev/xvdb", builtin_device_plugin=True
    ),
}


@dataclass(frozen=True)
class ClusterJoin:
    """What a node needs to find and trust the API server."""

    cluster_name: str
    endpoint: str
    certificate_authority: str  # base64 PEM, as EKS returns it
    service_cidr: str


def ami_ssm_parameter(family: AmiFamily, kubernetes_version: str, arch: str) -> str:
    """The public SSM parameter holding the current EKS-optimised NVIDIA AMI id."""
    if family == "al2023":
        return (
            f"/aws/service/eks/optimized-ami/{kubernetes_version}/amazon-linux-2023/{arch}/nvidia/recommended/image_id"
        )
    return f"/aws/service/bottlerocket/aws-k8s-{kubernetes_version}-nvidia/{arch}/latest/image_id"


def _taint_text(taint: dict[str, Any]) -> str:
    return f"{taint['key']}={taint['value']}:{taint['effect']}"


def hugepages_script(pages: int) -> str:
    """At least `pages` 2 MiB huge pages, now and after a reboot. cloud-init runs this before nodeadm starts
    the kubelet (amazon-eks-ami: nodeadm-run.service is After=cloud-final.service), which advertises the pages
    as `hugepages-2Mi` only if they exist when it starts."""
    return "\n".join(
        [
            "#!/bin/bash",
            "set -euo pipefail",
            f'if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt {pages} ]; then',
            f'  echo "vm.nr_hugepages = {pages}" > /etc/sysctl.d/90-seedance-hugepages.conf',
            f"  sysctl -w vm.nr_hugepages={pages}",
            "fi",
        ]
    )


def al2023_user_data(
    join: ClusterJoin,
    labels: dict[str, str],
    taints: list[dict[str, Any]],
    local_disks: bool = False,
    hugepages: int = 0,
) -> str:
    """A MIME multi-part document with one nodeadm NodeConfig part. With `local_disks`, nodeadm
    formats each NVMe instance-store disk and mounts it under /mnt/k8s-disks/ (strategy Mount),
    where the local static provisioner discovers it. With `hugepages`, a script part reserves that many
    2 MiB pages before the kubelet starts."""
    flags = [f"--node-labels={','.join(f'{k}={v}' for k, v in sorted(labels.items()))}"]
    if taints:
        flags.append(f"--register-with-taints={','.join(_taint_text(t) for t in taints)}")
    node_config = "\n".join(
        [
            "apiVersion: node.eks.aws/v1alpha1",
            "kind: NodeConfig",
            "spec:",
            "  cluster:",
            f"    name: {join.cluster_name}",
            f"    apiServerEndpoint: {join.endpoint}",
            f"    certificateAuthority: {join.certificate_authority}",
            f"    cidr: {join.service_cidr}",
            "  kubelet:",
            "    flags:",
            *[f"      - {json.dumps(flag)}" for flag in flags],
            *(["  instance:", "    localStorage:", "      strategy: Mount"] if local_disks else []),
        ]
    )
    return "\n".join(
        [
            "MIME-Version: 1.0",
            f'Content-Type: multipart/mixed; boundary="{_MIME_BOUNDARY}"',
            "",
            f"--{_MIME_BOUNDARY}",
            "Content-Type: application/node.eks.aws",
            "",
            node_config,
            "",
            *(
                [f"--{_MIME_BOUNDARY}", 'Content-Type: text/x-shellscript; charset="us-ascii"', ""]
                + [hugepages_script(hugepages), ""]
                if hugepages
                else []
            ),
            f"--{_MIME_BOUNDARY}--",
            "",
        ]
    )


def bottlerocket_user_data(
    join: ClusterJoin,
    labels: dict[str, str],
    taints: list[dict[str, Any]],
    local_disks: bool = False,
    time_slicing_replicas: int | None = None,
    hugepages: int = 0,
) -> str:
    """Bottlerocket settings TOML (strings quoted JSON-style, which TOML basic strings accept).
    Local disks are not offered on Bottlerocket (the config refuses them): its ephemeral-storage
    API gives instance store to containerd and kubelet, not to a discovery directory. GPU
    time-slicing goes to the OS's own device plugin (settings.kubelet-device-plugins.nvidia)."""
    if local_disks:
        raise ValueError("local disks need the al2023 AMI family")
    lines = [
        "[settings.kubernetes]",
        f"cluster-name = {json.dumps(join.cluster_name)}",
        f"api-server = {json.dumps(join.endpoint)}",
        f"cluster-certificate = {json.dumps(join.certificate_authority)}",
        "",
        "[settings.kubernetes.node-labels]",
        *[f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sorted(labels.items())],
    ]
    if taints:
        lines += ["", "[settings.kubernetes.node-taints]"]
        lines += [f"{json.dumps(t['key'])} = [{json.dumps(t['value'] + ':' + t['effect'])}]" for t in taints]
    if hugepages:  # applied before the kubelet starts, as every setting
        lines += ["", "[settings.kernel.sysctl]", f'"vm.nr_hugepages" = "{hugepages}"']
    if time_slicing_replicas:
        lines += [
            "",
            "[settings.kubelet-device-plugins.nvidia]",
            'device-sharing-strategy = "time-slicing"',
            "",
            "[settings.kubelet-device-plugins.nvidia.time-slicing]",
            f"replicas = {time_slicing_replicas}",
            # The resource keeps its name (nvidia.com/gpu), as with the Helm plugin's config.
            "rename-by-default = false",
            "fail-requests-greater-than-one = false",
        ]
    return "\n".join(lines) + "\n"


def render_user_data(
    family: AmiFamily,
    join: ClusterJoin,
    labels: dict[str, str],
    taints: list[dict[str, Any]],
    local_disks: bool = False,
    time_slicing_replicas: int | None = None,
    hugepages: int = 0,
) -> str:
    """`time_slicing_replicas` only for families whose OS runs the device plugin (elsewhere the Helm
    plugin's config map carries sharing); `hugepages`: 2 MiB pages reserved at boot."""
    if family == "al2023":
        if time_slicing_replicas:
            raise ValueError("al2023 nodes share GPUs through the device plugin's config map, not user data")
        return al2023_user_data(join, labels, taints, local_disks, hugepages)
    return bottlerocket_user_data(join, labels, taints, local_disks, time_slicing_replicas, hugepages)


def encoded_user_data(
    family: AmiFamily,
    join: ClusterJoin,
    labels: dict[str, str],
    taints: list[dict[str, Any]],
    local_disks: bool = False,
    time_slicing_replicas: int | None = None,
    hugepages: int = 0,
) -> str:
    """User data as a launch template takes it: base64."""
    rendered = render_user_data(family, join, labels, taints, local_disks, time_slicing_replicas, hugepages)
    return base64.b64encode(rendered.encode()).decode()
