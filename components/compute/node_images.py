"""The GPU node images a stack deploys, pinned in `stacks/node-images.<stack>.json`. Pure.

An image moves only when this file does: `seedance images pin` reads the EKS-optimised NVIDIA AMI
that AWS recommends now (the SSM parameter `ami_ssm_parameter` names) and writes it here, and the
change is reviewed in a pull request, where `seedance diff` shows the paced roll it starts. The file
is untrusted input like a lock: read bounded, validated strictly, refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from components.compute.config import GpuNodeGroupConfig
from components.compute.node_bootstrap import AMI_FAMILIES, ami_ssm_parameter
from seedance_client.files import InputFileError, load_json

IMAGES_VERSION = 1
AMI_ID = r"^ami-[0-9a-f]{8}(?:[0-9a-f]{9})?$"
ARCHITECTURES = ("x86_64", "arm64")
IMAGE_KEYS = frozenset(f"{family}/{arch}" for family in AMI_FAMILIES for arch in ARCHITECTURES)


class NodeImage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    image_id: str = Field(pattern=AMI_ID)
    name: str = Field(pattern=r"^[\x20-\x7e]{0,128}$", description="The AMI's name, which carries its release.")
    parameter: str = Field(pattern=r"^/aws/service/[\w./-]{1,200}$", description="The SSM parameter it was read from.")
    pinned_at: AwareDatetime


class NodeImagesDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    images_version: Literal[1]
    stack: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    region: str = Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")
    kubernetes_version: str = Field(pattern=r"^1\.\d{2}$")
    images: dict[str, NodeImage] = Field(max_length=8)  # "<family>/<arch>"

    @field_validator("images")
    @classmethod
    def _keys(cls, images: dict[str, NodeImage]) -> dict[str, NodeImage]:
        unknown = sorted(set(images) - IMAGE_KEYS)
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: allowed keys: {', '.join(sorted(IMAGE_KEYS))}")
        return images


class NodeImageError(Exception):
    """The images file is unreadable, invalid or pinned for another cluster; names the key."""


def images_path(stacks_dir: Path, stack: str) -> Path:
    return stacks_dir / f"node-images.{stack}.json"


def image_key(family: str, arch: str) -> str:
    return f"{family}/{arch}"


def group_image_key(group: GpuNodeGroupConfig) -> str:
    return image_key(group.ami_family, group.arch)


def read_node_images(path: Path) -> NodeImagesDocument | None:
    """The pinned images, or None when the stack has no file yet."""
    if not path.exists():
        return None
    try:
        document = load_json(path, "node images file")
    except InputFileError as error:
        raise NodeImageError(str(error)) from None
    try:
        return NodeImagesDocument.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise NodeImageError(
            f"{path}: {key}: {first['msg']}; this file is written by `seedance images pin`: restore "
            "it from git or pin again"
        ) from None


def pinned_images(
    document: NodeImagesDocument | None,
    stack: str,
    region: str,
    kubernetes_version: str,
    groups: list[GpuNodeGroupConfig],
) -> tuple[dict[str, str], list[str]]:
    """(group name -> pinned AMI id, image keys no file pins). A file for another stack, region or
    Kubernetes version pins nothing here: an image is built for one Kubernetes minor version, so a
    cluster upgrade needs a new pin, which the upgrade's pull request carries."""
    if document is not None:
        for key, mine in (("stack", stack), ("region", region), ("kubernetes_version", kubernetes_version)):
            if getattr(document, key) != mine:
                raise NodeImageError(
                    f"node-images.{stack}.json: {key} = {getattr(document, key)!r}, but the stack "
                    f"has {mine!r}; run `seedance images pin --stack {stack}` to pin images for it"
                )
    images = document.images if document else {}
    for group in groups:
        pinned = images.get(group_image_key(group))
        expected = ami_ssm_parameter(group.ami_family, kubernetes_version, group.arch)
        if pinned is not None and pinned.parameter != expected:
            # A hand edit, or a pin for another family: only what `seedance images pin` read from AWS's
            # parameter for this group's image is deployed.
            raise NodeImageError(
                f"node-images.{stack}.json: images.{group_image_key(group)}.parameter = "
                f"{pinned.parameter!r}, not {expected!r}; run `seedance images pin --stack {stack}`"
            )
    chosen = {g.name: images[group_image_key(g)].image_id for g in groups if group_image_key(g) in images}
    missing = sorted({group_image_key(g) for g in groups} - set(images))
    return chosen, missing


def render_node_images(document: NodeImagesDocument) -> str:
    return document.model_dump_json(indent=2) + "\n"
