"""A multi-node training pool's network (`efa: true`): one interface per network card, as AWS documents for
EFA (EC2 User Guide, "Maximize network bandwidth on Amazon EC2 instances with multiple network cards").

- The primary (card 0, device 0) is an EFA with ENA (`efa`): an EFA-only interface cannot be the primary.
- Every other card gets an EFA-only interface at device 0 (`efa-only`): it takes no IP address, so a p5's
  32 cards do not spend 32 of the subnet's addresses (EKS needs the VPC CNI 1.18.5 or later for it; the
  cluster's addon is EKS's default for its version, later than that).
- Each interface carries the nodes' security group: EKS's cluster security group, which already lets all
  traffic in from itself and out anywhere, as EFA requires ("allows all inbound and outbound traffic to and
  from the security group itself", EC2 User Guide, EFA), so no rule is added.
- No public address: the primary says false, and AWS assigns none to an instance with several interfaces.

The counts come from the instance table (`efa_interfaces`, `network_cards`; its `_efa_source` says where
from). Pure: the component turns these into launch template arguments.
"""

from __future__ import annotations

from typing import Any

from components.catalog.instance_types import gpu_instance_type
from components.common.addon_resources import ADDON_RESOURCES
from components.compute.labels import AGENT_TOLERATIONS, EFA_LABEL

EFA_RESOURCE = "vpc.amazonaws.com/efa"  # what the EFA device plugin advertises, one per adapter
EFA_PLUGIN_CHART = "aws-efa-k8s-device-plugin"
EFA_PLUGIN_REPOSITORY = "https://aws.github.io/eks-charts"
EFA_PLUGIN_VERSION = "0.5.30"  # the chart calls itself v0.5.30; Helm matches the version as semver
EFA_PLUGIN_NAMESPACE = "efa-device-plugin"
# libfabric registers EFA's buffers in 2 MiB huge pages: "Amazon EC2 instances with the EFA driver installed
# pre-allocate 5128 2MiB Huge Pages, which you can request as resources" (EKS User Guide, "Run machine
# learning training on Amazon EKS with Elastic Fabric Adapter"). The AL2023 image installs EFA with
# `efa_installer.sh --minimal` (amazon-eks-ami install-efa.sh), so the pool's user data reserves them itself.
EFA_HUGEPAGES = 5128
HUGEPAGES_RESOURCE = "hugepages-2Mi"


def efa_interfaces(instance_type: str, security_group: Any) -> list[dict[str, Any]]:
    """The launch template's network interfaces for an EFA pool of `instance_type` (its types are alike)."""
    shape = gpu_instance_type(instance_type)
    primary = {
        "device_index": 0,
        "network_card_index": 0,
        "interface_type": "efa",
        "associate_public_ip_address": "false",
        "security_groups": [security_group],
        "delete_on_termination": "true",
    }
    others = [
        {
            "device_index": 0,
            "network_card_index": card,
            "interface_type": "efa-only",
            "security_groups": [security_group],
            "delete_on_termination": "true",
        }
        for card in range(1, shape.network_cards)
    ]
    return [primary, *others]


def efa_device_plugin_values() -> dict[str, Any]:
    """The EFA device plugin's values: on the EFA pools' nodes only (the chart's own affinity adds its list of
    EFA types), past their GPU and pool taints. The chart runs it privileged with the kubelet's device-plugin
    socket and /dev/infiniband from the host, at system-node-critical: fixed in its template, so its namespace
    is privileged (and nothing may reach it, nor it anything: it talks to the kubelet through the socket)."""
    return {
        "nodeSelector": {EFA_LABEL: "true"},
        "tolerations": AGENT_TOLERATIONS,
        "resources": ADDON_RESOURCES["efa-device-plugin"],
    }
