"""`CheckpointStorage` (an EBS CSI class sized for training checkpoints, optional pre-provisioned
volumes) and `LocalStorage` (local PersistentVolumes over NVMe instance store)."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.common.k8s_objects import declare
from components.storage.checkpoint_sizing import IO2_REASON_TAG, SizingDecision
from components.storage.config import CheckpointStorageConfig, LocalStorageConfig
from components.storage.manifests import (
    checkpoint_storage_class,
    local_provisioner,
    local_storage_class,
    persistent_volume_policy,
    provisioner_user,
    static_checkpoint_volume,
    training_namespace,
)


def io2_reason(decision: SizingDecision) -> dict[str, str]:
    """Why a volume is io2 rather than the cheaper gp3, as a tag the over-provisioning policy reads."""
    gp3 = decision.candidates[0]
    if decision.chosen.volume_type != "io2" or gp3.meets:
        return {}
    return {IO2_REASON_TAG: "latency" if "latency" in gp3.why_not else "iops or throughput beyond gp3"}


class CheckpointStorage(pulumi.ComponentResource):
    storage_class_name: str
    claim_names: list[str]

    def __init__(
        self,
        name: str,
        config: CheckpointStorageConfig,
        decision: SizingDecision,
        *,
        kms_key_arn: pulumi.Input[str],
        zone: str,
        provider: k8s.Provider,
        csi_driver: pulumi.Resource,
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:storage:CheckpointStorage", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[csi_driver])
        declare(
            checkpoint_storage_class(config.storage_class_name, decision, kms_key_arn, dict(tags)),
            f"{name}-class",
            in_cluster,
        )
        self.storage_class_name = config.storage_class_name
        self.claim_names = []
        # The training namespace: teams run their jobs here, with or without pre-provisioned volumes.
        namespace_manifest, *policies = training_namespace(config.namespace)
        namespace = declare(namespace_manifest, f"{name}-namespace", in_cluster)
        for policy in policies:
            declare(
                policy,
                f"{name}-networkpolicy-{policy['metadata']['name']}",
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
            )
        if config.preprovisioned_volumes:
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
                for manifest in static_checkpoint_volume(
                    claim, ebs.id, zone, volume.size_gib, config.storage_class_name, config.namespace, config.node_group
                ):
                    declare(
                        manifest,
                        f"{name}-{index}-{manifest['kind'].lower()}",
                        pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
                    )
                self.claim_names.append(claim)
        self.register_outputs({"storage_class_name": self.storage_class_name})


class VolumeGuard(pulumi.ComponentResource):
    """The admission policy that holds every PersistentVolume to an EBS volume or a provisioner's disk."""

    def __init__(
        self,
        name: str,
        *,
        local_namespace: str | None,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:storage:VolumeGuard", name, None, opts)
        user = provisioner_user(local_namespace) if local_namespace else None
        for manifest in persistent_volume_policy(user):
            declare(
                manifest, f"{name}-{manifest['kind'].lower()}", pulumi.ResourceOptions(parent=self, provider=provider)
            )
        self.register_outputs({})


class LocalStorage(pulumi.ComponentResource):
    storage_class_name: str

    def __init__(
        self,
        name: str,
        config: LocalStorageConfig,
        *,
        zones: list[str],
        provider: k8s.Provider,
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:storage:LocalStorage", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        declare(local_storage_class(config.storage_class_name, zones), f"{name}-class", in_cluster)
        for manifest in local_provisioner(config.storage_class_name, config.namespace, config.provisioner_image, tags):
            declare(manifest, f"{name}-{manifest['kind'].lower()}", in_cluster)
        self.storage_class_name = config.storage_class_name
        self.register_outputs({"storage_class_name": self.storage_class_name})
