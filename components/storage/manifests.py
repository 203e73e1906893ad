"""Kubernetes objects for checkpoint and local NVMe storage, as plain manifests. Pure.

The components declare exactly these objects; the tests validate them against the official
schemas and scan them with checkov. Where checkov flags something the object needs, the skip
and its reason sit in the object's own `checkov.io/skip` annotations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from components.common.manifests import (
    Manifest,
    Passed,
    admission_policy,
    checkov_skips,
    cost_labels,
    metadata,
    namespace,
    namespace_baseline,
    network_policy,
)
from components.compute.labels import AGENT_TOLERATIONS, LOCAL_NVME_LABEL, NODE_GROUP_LABEL
from components.storage.checkpoint_sizing import SizingDecision
from components.storage.ebs_csi import EBS_CSI

NO_PROVISIONER = "kubernetes.io/no-provisioner"
ZONE_LABEL = "topology.kubernetes.io/zone"
LOCAL_DISKS_DIR = "/mnt/k8s-disks"  # where nodeadm's Mount strategy mounts each NVMe disk
PROVISIONER_NAME = "local-static-provisioner"
# What the Kubernetes provider waits for on a claim bound to its volume from the start: `Bound`, whatever the
# class's binding mode. Its own wait expects `Pending` on a WaitForFirstConsumer class, and never ends when
# the binding is faster than its watch (pulumi-kubernetes pkg/await/awaiters.go; seen under load).
PROVIDER_WAIT_FOR = "pulumi.com/waitFor"


def deny_network(name: str, namespace: str, *, allow_egress: bool) -> Manifest:
    """A NetworkPolicy for the pods labelled `name`: no ingress, and no egress unless they need the API."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata(name, namespace),
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "policyTypes": ["Ingress"] if allow_egress else ["Ingress", "Egress"],
        },
    }


def training_namespace(name: str) -> list[Manifest]:
    """The training namespace: Pod Security baseline (trainers' images often run as root, which
    restricted refuses; baseline still refuses privileged pods and host access), everything denied but
    DNS, traffic among its own pods (multi-node collectives use ports of their choosing), and HTTPS out
    (datasets in S3, the registry, STS)."""
    among_itself = network_policy(
        "training",
        name,
        {},
        ingress=[{"from": [{"podSelector": {}}]}],
        egress=[{"to": [{"podSelector": {}}]}, {"ports": [{"port": 443, "protocol": "TCP"}]}],
    )
    return [namespace(name, "baseline"), *namespace_baseline(name), among_itself]


def volume_tags(cost_tags: dict[str, str]) -> dict[str, str]:
    """EBS CSI `tagSpecification_<n>` parameters: the stack's cost tags (the budget counts volumes by them)
    and the claim's namespace and name, filled in by the driver (extra-create-metadata, on in the EKS
    add-on), so a volume says whose it is, and a retained one whose it was."""
    tags = {**cost_tags, "kubernetes-namespace": "{{ .PVCNamespace }}", "kubernetes-claim": "{{ .PVCName }}"}
    return {f"tagSpecification_{index}": f"{key}={value}" for index, (key, value) in enumerate(tags.items(), 1)}


def volume_parameters(decision: SizingDecision) -> dict[str, str]:
    """What a claim of the checkpoint class gets, and is billed by besides its size: type and performance."""
    volume = decision.chosen
    return {
        "type": volume.volume_type,
        "iops": str(volume.iops),
        **({"throughput": str(volume.throughput_mibps)} if volume.throughput_mibps else {}),
    }


def checkpoint_storage_class(
    name: str, decision: SizingDecision, kms_key_arn: Passed, cost_tags: dict[str, str]
) -> Manifest:
    volume = decision.chosen
    parameters = {
        **volume_parameters(decision),
        "encrypted": "true",
        "kmsKeyId": kms_key_arn,
        "csi.storage.k8s.io/fstype": "xfs",
        **volume_tags(cost_tags),
    }
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": metadata(name, annotations={"seedance.io/claim-at-least": f"{volume.size_gib}Gi"}),
        "provisioner": EBS_CSI,
        "parameters": parameters,
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
        "reclaimPolicy": "Retain",  # checkpoints outlive the pods and claims that wrote them
    }


def history_storage_class(name: str, kms_key_arn: Passed, cost_tags: dict[str, str]) -> Manifest:
    """gp3 at its included 3,000 IOPS and 125 MiB/s, encrypted with the stack key, made where its first pod
    is scheduled; Delete: what it holds (metrics history) is worth less than a volume left behind."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": metadata(name),
        "provisioner": EBS_CSI,
        "parameters": {"type": "gp3", "encrypted": "true", "kmsKeyId": kms_key_arn, **volume_tags(cost_tags)},
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
        "reclaimPolicy": "Delete",
    }


def volume_claim(name: str, namespace: str, storage_class: str, size_gib: int) -> Manifest:
    """A dynamically provisioned claim of one node's volume."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(name, namespace),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": f"{size_gib}Gi"}},
        },
    }


def static_checkpoint_volume(
    name: str, volume_id: Passed, zone: str, size_gib: int, storage_class: str, namespace: str, node_group: str
) -> list[Manifest]:
    """A PersistentVolume over a pre-provisioned EBS volume and the claim bound to it. The volume's node
    affinity names its zone and its GPU group (a single-zone group launching there): the scheduler and the
    cluster autoscaler's simulation both hold a pod to it, so scale-from-zero starts that group."""
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": metadata(name),
        "spec": {
            "capacity": {"storage": f"{size_gib}Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": storage_class,
            "csi": {"driver": EBS_CSI, "volumeHandle": volume_id, "fsType": "xfs"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE_LABEL, "operator": "In", "values": [zone]},
                                {"key": NODE_GROUP_LABEL, "operator": "In", "values": [node_group]},
                            ]
                        }
                    ]
                }
            },
            "claimRef": {"namespace": namespace, "name": name},
        },
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata(name, namespace, annotations={PROVIDER_WAIT_FOR: "jsonpath={.status.phase}=Bound"}),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "volumeName": name,
            "resources": {"requests": {"storage": f"{size_gib}Gi"}},
        },
    }
    return [volume, claim]


def fio_checkpoint_test(
    storage_class: str, size_gib: int, namespace: str, node_selector: dict[str, str], tolerations: list[dict[str, Any]]
) -> list[Manifest]:
    """The source's checkpoint write test against a fresh claim of the class, as a Job."""
    name = "fio-checkpoint-test"
    claim = volume_claim(name, namespace, storage_class, size_gib)
    fio = [
        "fio",
        "--name=checkpoint-write",
        "--directory=/data",
        "--rw=write",
        "--bs=128k",
        "--direct=1",
        "--iodepth=64",
        "--numjobs=8",
        "--ioengine=libaio",
        "--size=1G",
        "--runtime=300",
        "--time_based",
        "--group_reporting",
        "--output-format=json",
    ]
    job: Manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(name, namespace),
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "nodeSelector": node_selector,
                    "tolerations": tolerations,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 10001,
                        "runAsGroup": 10001,
                        "fsGroup": 10001,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "fio",
                            # Pin by digest in production (checkov CKV_K8S_43); the tag is pinned here.
                            "image": "docker.io/xridge/fio:3.38",
                            "imagePullPolicy": "Always",
                            "command": fio,
                            "resources": {
                                "requests": {"cpu": "2", "memory": "2Gi"},
                                "limits": {"cpu": "4", "memory": "4Gi"},
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": name}}],
                },
            },
        },
    }
    job["metadata"]["annotations"] = checkov_skips(
        CKV_K8S_43="a one-off verification job; pin the digest your registry mirror serves",
    )
    return [claim, job, deny_network(name, namespace, allow_egress=False)]


def local_storage_class(name: str, zones: list[str]) -> Manifest:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": metadata(name),
        "provisioner": NO_PROVISIONER,
        "volumeBindingMode": "WaitForFirstConsumer",  # bind only once the pod has a node
        "reclaimPolicy": "Delete",  # the provisioner wipes a released disk and offers it again
        "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE_LABEL, "values": sorted(zones)}]}],
    }


def provisioner_role() -> Manifest:
    """What the local provisioner does: creates and deletes the PersistentVolumes of its nodes' disks."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(PROVISIONER_NAME),
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["persistentvolumes"],
                "verbs": ["get", "list", "watch", "create", "delete"],
            },
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
            {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
        ],
    }


def provisioner_subject(namespace: str) -> dict[str, str]:
    return {"kind": "ServiceAccount", "name": PROVISIONER_NAME, "namespace": namespace}


def local_provisioner(
    storage_class: str, namespace: str, image: str, tags: Mapping[str, str] | None = None
) -> list[Manifest]:
    """sig-storage-local-static-provisioner: one PV per NVMe mount, on the nodes that have them."""
    name = PROVISIONER_NAME
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(f"{name}-config", namespace),
        "data": {
            "storageClassMap": (
                f"{storage_class}:\n"
                f"  hostDir: {LOCAL_DISKS_DIR}\n"
                f"  mountDir: {LOCAL_DISKS_DIR}\n"
                # No fsType: it applies to block devices only; nodeadm has already formatted and mounted
                # each disk (sig-storage-local-static-provisioner docs).
                "  volumeMode: Filesystem\n"
                '  namePattern: "*"\n'
            )
        },
    }
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(name, namespace),
        "automountServiceAccountToken": True,
    }
    role = provisioner_role()
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [provisioner_subject(namespace)],
    }
    daemon = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(
            name,
            namespace,
            annotations=checkov_skips(
                CKV_K8S_23="wipes released volumes, whose files belong to the pods' users: runs as root",
                CKV_K8S_40="runs as root (see CKV_K8S_23)",
                CKV_K8S_22="the upstream image is not built or tested for a read-only root filesystem",
                CKV_K8S_25="DAC_OVERRIDE and FOWNER only: root removing files other users own",
                CKV_K8S_43="tag pinned in config; pin by digest through your registry mirror",
                CKV_K8S_38="talks to the API server to create and delete PVs",
                CKV_K8S_8="the upstream image serves no health endpoint",
                CKV_K8S_9="the upstream image serves no readiness endpoint",
            ),
        ),
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": cost_labels(tags or {}, name)},
                "spec": {
                    "serviceAccountName": name,
                    "priorityClassName": "system-node-critical",
                    "nodeSelector": {LOCAL_NVME_LABEL: "true"},
                    "tolerations": AGENT_TOLERATIONS,
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [
                        {
                            "name": "provisioner",
                            "image": image,
                            "imagePullPolicy": "Always",
                            # Filesystem mode: it discovers the mounts nodeadm made (HostToContainer propagation
                            # needs no privilege) and empties released ones; block devices (/dev) are not its job.
                            "securityContext": {
                                "privileged": False,
                                "allowPrivilegeEscalation": False,
                                "runAsUser": 0,
                                "capabilities": {"drop": ["ALL"], "add": ["DAC_OVERRIDE", "FOWNER"]},
                            },
                            "env": [
                                {"name": "MY_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
                            ],
                            "resources": {
                                "requests": {"cpu": "50m", "memory": "128Mi"},
                                "limits": {"cpu": "200m", "memory": "256Mi"},
                            },
                            "volumeMounts": [
                                {"name": "config", "mountPath": "/etc/provisioner/config", "readOnly": True},
                                {
                                    "name": "local-disks",
                                    "mountPath": LOCAL_DISKS_DIR,
                                    "mountPropagation": "HostToContainer",
                                },
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "config", "configMap": {"name": f"{name}-config"}},
                        {"name": "local-disks", "hostPath": {"path": LOCAL_DISKS_DIR, "type": "DirectoryOrCreate"}},
                    ],
                },
            },
        },
    }
    return [account, role, binding, config, daemon, deny_network(name, namespace, allow_egress=True)]


PV_POLICY = "seedance-persistent-volumes"


def provisioner_user(namespace: str) -> str:
    """The local provisioner's identity as the API server names it (its service account)."""
    return f"system:serviceaccount:{namespace}:{PROVISIONER_NAME}"


def persistent_volume_policy(provisioner: str | None) -> list[Manifest]:
    """Pod Security Admission never looks at PersistentVolumes, so whoever creates one decides what a pod
    that binds it mounts: a `hostPath: /` volume is host root. Here a PV is an EBS CSI volume or one of the
    provisioner's local disks: never hostPath or another source; local only from the provisioner (whose
    token is on the nodes with disks), only under its disk directory, each pinned to one node; and the
    provisioner makes nothing else. Creation only: a PV's source and node affinity are immutable, and its
    updates (binding by the PV controller or the scheduler, finalizers) must pass.
    `provisioner`: its user (provisioner_user), None when no group has disks."""
    local_from = json.dumps(provisioner or "")
    spec = "object.spec"
    one_node = (
        f"has({spec}.nodeAffinity) && has({spec}.nodeAffinity.required) && "
        f"size({spec}.nodeAffinity.required.nodeSelectorTerms) == 1 && "
        f"has({spec}.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions) && "
        f"{spec}.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions.exists(e, "
        "e.key == 'kubernetes.io/hostname' && e.operator == 'In' && size(e.values) == 1)"
    )
    return admission_policy(
        PV_POLICY,
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["persistentvolumes"]}],
        [
            {"expression": f"!has({spec}.hostPath)", "message": "no hostPath PersistentVolume, from anyone"},
            {
                "expression": f"(has({spec}.csi) && {spec}.csi.driver == {json.dumps(EBS_CSI)}) || has({spec}.local)",
                "message": f"a PersistentVolume is an EBS volume ({EBS_CSI}) or a local disk of the provisioner",
            },
            {
                "expression": (
                    f"!has({spec}.local) || ({local_from} != '' && request.userInfo.username == {local_from})"
                ),
                "message": "only the local provisioner creates local PersistentVolumes",
            },
            # One entry of the directory (a disk's mount), never the directory itself nor a way out of it.
            {
                "expression": f"!has({spec}.local) || ({spec}.local.path.matches("
                f"{json.dumps('^' + LOCAL_DISKS_DIR + '/[A-Za-z0-9][A-Za-z0-9_.-]*$')}) && "
                f"!{spec}.local.path.contains('..'))",
                "message": f"a local PersistentVolume is one disk under {LOCAL_DISKS_DIR}/",
            },
            {
                "expression": f"!has({spec}.local) || ({one_node})",
                "message": "a local PersistentVolume is pinned to exactly one node (kubernetes.io/hostname In [one])",
            },
            {
                "expression": f"request.userInfo.username != {local_from} || has({spec}.local)",
                "message": "the local provisioner creates local PersistentVolumes only",
            },
        ],
    )
