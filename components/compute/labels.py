"""Node labels and taints shared by the node groups and the workloads scheduled onto them."""

from typing import Any

from seedance_client.pod_admission import POOL_TAINT_KEY as POOL_TAINT_KEY
from seedance_client.pod_admission import SYSTEM_TAINT_KEY as SYSTEM_TAINT_KEY

WORKLOAD_CLASS_LABEL = "seedance.io/workload-class"
# The cluster autoscaler's node-template label tag that tells a GPU Auto Scaling group's class (asg.py writes it).
CLASS_TAG = f"k8s.io/cluster-autoscaler/node-template/label/{WORKLOAD_CLASS_LABEL}"
NODE_GROUP_LABEL = "seedance.io/node-group"
NODE_GROUP_TAG = f"k8s.io/cluster-autoscaler/node-template/label/{NODE_GROUP_LABEL}"
# The small on-demand system node group: cluster services (CoreDNS, autoscaler, Prometheus) run there.
SYSTEM_NODE_SELECTOR = {"seedance.io/node-role": "system"}
# System nodes repel every pod but the platform's add-ons (SYSTEM_TAINT_KEY), which every add-on the stack
# installs tolerates; the keys are the teams' pod rules' too (seedance_client/pod_admission.py).
SYSTEM_TAINT = {"key": SYSTEM_TAINT_KEY, "value": "true", "effect": "NoSchedule"}
SYSTEM_TOLERATIONS = [{"key": SYSTEM_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]


def system_placement(priority_class: str) -> dict[str, Any]:
    """Helm values (the keys most charts share) that run an add-on on the system nodes, tolerating their
    taint, at `priority_class`: one of the platform's, above every class a team may name."""
    return {
        "nodeSelector": dict(SYSTEM_NODE_SELECTOR),
        "tolerations": SYSTEM_TOLERATIONS,
        "priorityClassName": priority_class,
    }


# The node's AMI family: node add-ons that the OS may already run (the NVIDIA device plugin) select on it.
AMI_FAMILY_LABEL = "seedance.io/ami-family"

# On a Capacity Block's Auto Scaling group: the block's reservation id (paid at purchase; the breaker leaves it).
CAPACITY_BLOCK_TAG = "seedance.io/capacity-block"
# On a GPU group's Auto Scaling group: the budget breaker moved it ("degrade": no growth, "on": spot only).
BREAKER_TAG = "seedance.io/budget-breaker"
# The breaker's steps, in % of the monthly budget (the source's): the budget notifies at each, and the
# breaker acts (85: experiments stop growing, 95: dev and staging GPU groups go spot only).
DEGRADE, SPOT_ONLY = 85, 95

# GPU nodes repel everything that does not ask for a GPU.
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT = {"key": GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
# Each pool repels every pod that does not name it (POOL_TAINT_KEY): a GPU pod without a selector cannot
# take serving capacity, and pools are told apart by a taint as well as a label.
# Node agents (device plugin, GPU metrics, local volumes) run on every pool.
AGENT_TOLERATIONS = [GPU_TOLERATION, {"key": POOL_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]


def pool_taint(group: str) -> dict[str, str]:
    return {"key": POOL_TAINT_KEY, "value": group, "effect": "NoSchedule"}


def pool_tolerations(group: str) -> list[dict[str, str]]:
    """What a pod needs to run on one pool: the GPU taint, and that pool's own."""
    return [GPU_TOLERATION, {"key": POOL_TAINT_KEY, "operator": "Equal", "value": group, "effect": "NoSchedule"}]


# The label the cluster autoscaler reads on AWS to know a node has GPUs before the device plugin runs.
ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"


def accelerator_value(gpu_models: list[str]) -> str:
    """The label's value for a group: its GPU model when every type it may launch has that one; a plain
    `nvidia` otherwise, never a model some of its nodes do not have (a pod that needs a model selects
    `node.kubernetes.io/instance-type`, which the kubelet sets from the instance itself)."""
    models = {model.lower() for model in gpu_models}
    return f"nvidia-{models.pop()}" if len(models) == 1 else "nvidia"


# Nodes whose NVMe instance store is mounted for local PersistentVolumes.
LOCAL_NVME_LABEL = "seedance.io/local-nvme"
# On an EFA pool's nodes (components/compute/efa.py): where the EFA device plugin runs.
EFA_LABEL = "seedance.io/efa"
# EKS labels each node with its place in EC2's network, layer 1 the farthest from the instance (kubernetes/
# cloud-provider-aws pkg/providers/v1/well_known_labels.go `LabelNetworkNodePrefix`, set from
# DescribeInstanceTopology at node initialization); the kubelet sets the host name.
NETWORK_NODE_LAYER = "topology.k8s.aws/network-node-layer-"
HOSTNAME_LABEL = "kubernetes.io/hostname"
