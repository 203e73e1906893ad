"""The EBS CSI driver's provisioner, played: a claim the scheduler has given a node (WaitForFirstConsumer
sets `volume.kubernetes.io/selected-node`) on a class the driver provisions gets a volume in that node's
zone, bound to it, as the driver's external provisioner would create it. The classes, claims and the
binding itself stay the real server's and controller manager's."""

from __future__ import annotations

import hashlib
import threading

import requests

from tests.engines.kube import EVERY_NAMESPACE, Kube

EBS_DRIVER = "ebs.csi.aws.com"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
ZONE = "topology.kubernetes.io/zone"


def provisioned_volume(claim: dict, storage_class: dict, node: dict) -> dict:
    meta = claim["metadata"]
    handle = f"vol-{hashlib.sha256(meta['uid'].encode()).hexdigest()[:17]}"
    zone = node["metadata"]["labels"][ZONE]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": f"pvc-{meta['uid']}", "annotations": {"pv.kubernetes.io/provisioned-by": EBS_DRIVER}},
        "spec": {
            "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]},
            "accessModes": claim["spec"]["accessModes"],
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
            "storageClassName": storage_class["metadata"]["name"],
            "claimRef": {"namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]},
            "csi": {"driver": EBS_DRIVER, "volumeHandle": handle, "fsType": "ext4"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]
                }
            },
        },
    }


class VolumeProvisioner:
    def __init__(self, kube: Kube, interval: float = 1.0):
        self.kube = kube
        self.interval = interval
        self.provisioned: list[str] = []  # namespace/name of each claim given a volume
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> VolumeProvisioner:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.provision_pending()
            except requests.ConnectionError:
                continue  # the API server restarting (a version step): a real provisioner retries too

    def provision_pending(self) -> None:
        for claim in self.kube.list("v1", "PersistentVolumeClaim", namespace=EVERY_NAMESPACE):
            meta = claim["metadata"]
            node_name = meta.get("annotations", {}).get(SELECTED_NODE)
            if claim.get("status", {}).get("phase") != "Pending" or node_name is None:
                continue
            storage_class = self.kube.get("storage.k8s.io/v1", "StorageClass", claim["spec"]["storageClassName"])
            node = self.kube.get("v1", "Node", node_name)
            if storage_class is None or node is None or storage_class.get("provisioner") != EBS_DRIVER:
                continue
            if self.kube.create(provisioned_volume(claim, storage_class, node)).allowed:
                self.provisioned.append(f"{meta['namespace']}/{meta['name']}")
