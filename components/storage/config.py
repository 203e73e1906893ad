"""The storage slice of the stack config: checkpoint volumes and local NVMe classes. Pure."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from components.storage.checkpoint_sizing import CheckpointProfile

_DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"


class CheckpointStorageConfig(BaseModel):
    """Checkpoint volumes of the training jobs (config `storage.checkpoints`)."""

    model_config = ConfigDict(extra="forbid")

    profile: CheckpointProfile
    node_group: str = Field(
        "batch", description="The GPU group the training pods run on (its types must carry the IOPS)."
    )
    storage_class_name: str = Field("checkpoints", pattern=_DNS_LABEL, description="StorageClass name.")
    namespace: str = Field(
        "training",
        pattern=_DNS_LABEL,
        description="The training namespace: teams' jobs, their claims, and the pre-provisioned ones.",
    )
    preprovisioned_volumes: int = Field(
        0, ge=0, le=16, description="io2/gp3 volumes made now, each with a bound claim."
    )


class LocalStorageConfig(BaseModel):
    """Local PersistentVolumes over NVMe disks of groups with `local_storage: true` (config `storage.local`)."""

    model_config = ConfigDict(extra="forbid")

    storage_class_name: str = Field("local-nvme", pattern=_DNS_LABEL, description="StorageClass name.")
    namespace: str = Field("kube-system", pattern=_DNS_LABEL, description="Namespace of the provisioner.")
    provisioner_image: str = Field(
        "registry.k8s.io/sig-storage/local-volume-provisioner:v2.7.0",
        pattern=r"^[\w./-]+:[\w.-]+$",
        description="sig-storage-local-static-provisioner image, with a pinned tag (not latest).",
    )

    @field_validator("provisioner_image")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if value.endswith(":latest"):
            raise ValueError("must pin a version tag, not latest")
        return value


class StorageConfig(BaseModel):
    """Storage for training: checkpoint volumes (io2 or gp3, sized from the profile) and local NVMe classes."""

    model_config = ConfigDict(extra="forbid")

    checkpoints: CheckpointStorageConfig | None = None
    local: LocalStorageConfig = Field(default_factory=LocalStorageConfig)
