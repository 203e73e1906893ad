"""`seedance images pin --stack <env>`: pin each GPU group's node image to the one AWS recommends now.

Reads the EKS-optimised NVIDIA AMI's SSM parameter for the stack's Kubernetes version (the same
parameter the program used to read at every `up`) and the image's name from EC2, and writes
`stacks/node-images.<env>.json`. Nothing else moves an image: review the file's change with
`seedance diff`, which shows the paced roll it starts. Read-only on the account.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from components.compute.node_bootstrap import ami_ssm_parameter
from components.compute.node_images import (
    NodeImage,
    NodeImageError,
    NodeImagesDocument,
    group_image_key,
    images_path,
    pinned_images,
    read_node_images,
    render_node_images,
)
from components.pricing.live import boto3_clients
from seedance.stack_input import load_stack
from seedance_client.errors import InputError
from seedance_client.files import write_text

# Tests replace this to answer with recorded API responses.
clients: Callable[[str, str], Any] = boto3_clients


class ImagesError(InputError):
    """The account could not be read or the file could not be written: one line, exit code 2."""


def recommended_image(ssm: Any, ec2: Any, parameter: str, now: datetime) -> NodeImage:
    image_id = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
    images = ec2.describe_images(ImageIds=[image_id])["Images"]
    if not images:
        raise ImagesError(f"{parameter} names {image_id}, which EC2 does not list in this region")
    return NodeImage(image_id=image_id, name=images[0].get("Name", ""), parameter=parameter, pinned_at=now)


def run(args: argparse.Namespace) -> int:
    project, config = load_stack(args.program, args.stack, args.stack_file)
    path = images_path(project.stack_config_dir, args.stack)
    try:
        previous = read_node_images(path)
    except NodeImageError as error:
        print(f"{error}\n(the file is replaced: every image is pinned afresh)")
        previous = None
    version = config.cluster.kubernetes_version
    # A file for another Kubernetes version pins nothing worth keeping (the images are built per version).
    kept = previous.images if previous and previous.kubernetes_version == version else {}
    ssm, ec2 = clients("ssm", config.region), clients("ec2", config.region)
    now = datetime.now(UTC)
    images = {}
    for group in config.gpu_node_groups:
        key = group_image_key(group)
        if key in images:
            continue
        parameter = ami_ssm_parameter(group.ami_family, version, group.arch)
        try:
            latest = recommended_image(ssm, ec2, parameter, now)
        except (ClientError, BotoCoreError) as error:
            raise ImagesError(f"reading {parameter} in {config.region}: {error}; nothing written") from None
        old = kept.get(key)
        if old is not None and old.image_id == latest.image_id:
            images[key] = old
            print(f"{key}: {old.image_id} ({old.name}) is still the recommended image")
        else:
            images[key] = latest
            moved = f"{old.image_id} ({old.name}) -> " if old else ""
            print(f"{key}: {moved}{latest.image_id} ({latest.name})")
    document = NodeImagesDocument(
        images_version=1, stack=args.stack, region=config.region, kubernetes_version=version, images=images
    )
    write_text(path, render_node_images(document), "node images file")
    print(f"{path}: written; `seedance diff` shows which nodes a changed image replaces, and at what pace")
    return 0


def check(args: argparse.Namespace) -> int:
    """Read-only, against the account: each pinned image exists in the region and is published by the
    owner of the image AWS recommends (a hand edit naming someone's AMI fails here), and whether a newer one
    is recommended. Exit 1 on a missing pin or a failed check, 0 otherwise."""
    project, config = load_stack(args.program, args.stack, args.stack_file)
    try:
        document = read_node_images(images_path(project.stack_config_dir, args.stack))
        pinned, missing = pinned_images(
            document, args.stack, config.region, config.cluster.kubernetes_version, config.gpu_node_groups
        )
    except NodeImageError as error:
        raise ImagesError(str(error)) from None
    ssm, ec2 = clients("ssm", config.region), clients("ec2", config.region)
    failed = [f"{key}: not pinned; run `seedance images pin --stack {args.stack}`" for key in missing]
    seen = set()
    for group in config.gpu_node_groups:
        key = group_image_key(group)
        if group.name not in pinned or key in seen:
            continue
        seen.add(key)
        parameter = ami_ssm_parameter(group.ami_family, config.cluster.kubernetes_version, group.arch)
        try:
            latest = recommended_image(ssm, ec2, parameter, datetime.now(UTC))
            owners = {
                i["ImageId"]: i.get("OwnerId")
                for i in ec2.describe_images(ImageIds=sorted({pinned[group.name], latest.image_id}))["Images"]
            }
        except (ClientError, BotoCoreError) as error:
            raise ImagesError(f"reading {key}'s images in {config.region}: {error}") from None
        image = pinned[group.name]
        if image not in owners:
            failed.append(f"{key}: {image} is not in {config.region} (deregistered, or another region's)")
        elif owners[image] != owners.get(latest.image_id):
            failed.append(
                f"{key}: {image} is owned by {owners[image]}, not by the publisher of AWS's recommended "
                f"image ({owners.get(latest.image_id)}); pin again"
            )
        elif image != latest.image_id:
            print(
                f"{key}: {image} is pinned; AWS now recommends {latest.image_id} ({latest.name}): `seedance "
                f"images pin` and a paced roll when you choose"
            )
        else:
            print(f"{key}: {image} is pinned and recommended")
    for line in failed:
        print(f"FAILED  {line}")
    return 1 if failed else 0


def register(commands: Any, stack_arguments: Callable) -> None:
    images = commands.add_parser("images", help="the GPU node images a stack deploys")
    verbs = images.add_subparsers(dest="verb", required=True)
    pin = verbs.add_parser("pin", help="pin each GPU group's image to the one AWS recommends now")
    stack_arguments(pin)
    pin.set_defaults(run=run)
    checked = verbs.add_parser(
        "check",
        help="read-only: the pinned images exist, come from AWS's publisher, and whether newer ones are recommended",
    )
    stack_arguments(checked)
    checked.set_defaults(run=check)
