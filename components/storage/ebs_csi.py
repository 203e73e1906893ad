"""A StorageClass of the EBS CSI driver as the driver reads it. Pure.

The driver's CreateVolume (aws-ebs-csi-driver, pkg/driver/controller.go; docs/parameters.md) matches
parameter names in any letter case (`switch strings.ToLower(key)`), makes a gp3 volume when no `type` is
given, encrypts only when `encrypted` is exactly "true", and takes IOPS from `iops` or from `iopsPerGB`
times the volume's size. A StorageClass's parameters are a map, so `type` and `Type` can both be there;
which one the driver takes is Go's map order, so a reader judges every value given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.plan.resources import K8S_STORAGE_CLASS, K8S_VOLUME_ATTRIBUTES_CLASSES, PlanResource

EBS_CSI = "ebs.csi.aws.com"
DEFAULT_VOLUME_TYPE = "gp3"  # the driver's, when a class names none


def class_parameters(resource: PlanResource) -> Mapping[str, Any] | None:
    """A StorageClass's parameters when the EBS CSI driver provisions its volumes (None for any other)."""
    if resource.type == K8S_STORAGE_CLASS and resource.props.get("provisioner") == EBS_CSI:
        return resource.props.get("parameters") or {}
    return None


def modified_parameters(resource: PlanResource) -> Mapping[str, Any] | None:
    """A VolumeAttributesClass's parameters when the EBS CSI driver applies them: a claim naming the class
    has its live volume modified to them (docs/modify-volume.md: `type`, `iops`, `throughput`, tags)."""
    if resource.type in K8S_VOLUME_ATTRIBUTES_CLASSES and resource.props.get("driverName") == EBS_CSI:
        return resource.props.get("parameters") or {}
    return None


def given(parameters: Mapping[str, Any], name: str) -> list[Any]:
    """Every value `parameters` give the driver's parameter `name` (lower case), however its name is spelled;
    only those values are read (another parameter may be unknown until apply)."""
    return [parameters[key] for key in parameters if str(key).lower() == name]


def volume_types(parameters: Mapping[str, Any]) -> list[str]:
    """The volume types a claim of the class may get, in lower case (EC2 knows no other spelling)."""
    return [str(value).lower() for value in given(parameters, "type")] or [DEFAULT_VOLUME_TYPE]


def encrypts(parameters: Mapping[str, Any]) -> bool:
    """Whether every volume of the class is encrypted: each `encrypted` given is exactly "true"."""
    values = given(parameters, "encrypted")
    return bool(values) and all(value == "true" for value in values)


def kms_keys(parameters: Mapping[str, Any]) -> list[Any]:
    """The KMS keys the class's volumes may be encrypted with (none given: the account's AWS-managed key)."""
    return given(parameters, "kmskeyid")
