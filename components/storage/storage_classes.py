"""`CheckpointStorage` (an EBS CSI class sized for training checkpoints, optional pre-provisioned
volumes) and `LocalStorage` (local PersistentVolumes over NVMe instance store)."""

from __future__ import annotations

from typing import Mapping

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import BaseModel, ConfigDict, Field, field_validator

from components.storage.checkpoint_sizing import IO2_REASON_TAG, CheckpointProfile, SizingDecision
from components.common.k8s_objects import declare
from components.storage.manifests import (checkpoint_storage_class, local_provisioner, local_storage_class,
                                          static_checkpoint_volume)

_DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"


class CheckpointStorageConfig(BaseModel):
    """Checkpoint volumes of the training jobs (config `storage.checkpoints`)."""

    model_config = ConfigDict(extra="forbid")

    profile: CheckpointProfile
    node_group: str = Field("batch", description="The GPU group the training pods run on (its types must carry the IOPS).")
    storage_class_name: str = Field("checkpoints", pattern=_DNS_LABEL, description="StorageClass name.")
    namespace: str = Field("training", pattern=_DNS_LABEL, description="Namespace of the pre-provisioned claims.")
    preprovisioned_volumes: int = Field(0, ge=0, le=16, description="io2/gp3 volumes made now, each with a bound claim.")


class LocalStorageConfig(BaseModel):
    """Local PersistentVolumes over NVMe disks of groups with `local_storage: true` (config `storage.local`)."""

    model_config = ConfigDict(extra="forbid")

    storage_class_name: str = Field("local-nvme", pattern=_DNS_LABEL, description="StorageClass name.")
    namespace: str = Field("kube-system", pattern=_DNS_LABEL, description="Namespace of the provisioner.")
    provisioner_image: str = Field(
        "registry.k8s.io/sig-storage/local-volume-provisioner:v2.7.0", pattern=r"^[\w./-]+:[\w.-]+$",
        description="sig-storage-local-static-provisioner image, with a pinned tag (not latest).")

    @field_validator("provisioner_image")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if value.endswith(":latest"):
            raise ValueError("must pin a version tag, not latest")
        return value


class StorageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checkpoints: CheckpointStorageConfig | None = None
    local: LocalStorageConfig = Field(default_factory=LocalStorageConfig)


def io2_reason(decision: SizingDecision) -> dict[str, str]:
    """Why a volume is io2 rather than the cheaper gp3, as a tag the over-provisioning policy reads."""
    gp3 = decision.candidates[0]
    if decision.chosen.volume_type != "io2" or gp3.meets:
        return {}
    return {IO2_REASON_TAG: "latency" if "latency" in gp3.why_not else "iops or throughput beyond gp3"}


class CheckpointStorage(pulumi.ComponentResource):
    storage_class_name: str
    claim_names: list[str]

    def __init__(self, name: str, config: CheckpointStorageConfig, decision: SizingDecision, *,
                 kms_key_arn: pulumi.Input[str], zone: str, provider: k8s.Provider, csi_driver: pulumi.Resource,
                 tags: Mapping[str, str], opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:storage:CheckpointStorage", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[csi_driver])
        declare(checkpoint_storage_class(config.storage_class_name, decision, kms_key_arn), f"{name}-class", in_cluster)
        self.storage_class_name = config.storage_class_name
        self.claim_names = []
        if config.preprovisioned_volumes:
            namespace = declare({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": config.namespace}},
                                f"{name}-namespace", in_cluster)
            volume = decision.chosen
            for index in range(config.preprovisioned_volumes):
                claim = f"{config.storage_class_name}-{index}"
                ebs = aws.ebs.Volume(
                    f"{name}-{index}",
                    availability_zone=zone,
                    type=volume.volume_type,
                    size=volume.size_gib,
                    iops=volume.iops,
                    throughput=volume.throughput_mibps,
                    encrypted=True,
                    kms_key_id=kms_key_arn,
                    tags={**tags, "Name": claim, **io2_reason(decision)},
                    # A checkpoint volume survives `pulumi destroy` and a replacement: delete it by hand.
                    opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
                )
                for manifest in static_checkpoint_volume(claim, ebs.id, zone, volume.size_gib,
                                                         config.storage_class_name, config.namespace):
                    declare(manifest, f"{name}-{index}-{manifest['kind'].lower()}",
                            pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]))
                self.claim_names.append(claim)
        self.register_outputs({"storage_class_name": self.storage_class_name})


class LocalStorage(pulumi.ComponentResource):
    storage_class_name: str

    def __init__(self, name: str, config: LocalStorageConfig, *, zones: list[str], provider: k8s.Provider,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:storage:LocalStorage", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        declare(local_storage_class(config.storage_class_name, zones), f"{name}-class", in_cluster)
        for manifest in local_provisioner(config.storage_class_name, config.namespace, config.provisioner_image):
            declare(manifest, f"{name}-{manifest['kind'].lower()}", in_cluster)
        self.storage_class_name = config.storage_class_name
        self.register_outputs({"storage_class_name": self.storage_class_name})
