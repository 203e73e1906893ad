"""The platform program itself under the real engine: `infra/` run from a project folder by the built CLI and
Python language host, its Kubernetes objects created by the real Kubernetes provider on a local control
plane, its AWS, TLS and random resources answered by stand-in providers (tests/engines/standin_provider.py)
with what the mock runtime answers `seedance plan`.

A real run refuses what an offline plan lists (placeholders, a missing capacity lock), so the project folder
holds a copy of the committed stack file with each placeholder replaced by a value of the same kind, and the
lock `seedance decide --source snapshot` writes for it. Nothing in the program knows it is tested."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pulumi
from pulumi import automation as auto

from components.compute.node_bootstrap import ami_ssm_parameter
from components.compute.node_images import (
    NodeImage,
    NodeImagesDocument,
    group_image_key,
    images_path,
    render_node_images,
)
from seedance.offline_cloud import OfflineCloud
from tests.engines.chart_proxy import ChartProxy
from tests.engines.cluster import ControlPlane, engine_manifest
from tests.engines.kube import Identity
from tests.engines.pulumi_engine import PASSPHRASE, engine_home
from tests.engines.standin_provider import STANDIN_CLUSTER
from tests.stacks import REPO, stack_config

SEEDANCE = (sys.executable, "-m", "seedance.cli")

STANDIN_PACKAGES = ("aws", "tls", "random")
# Each placeholder kind of components/stack/placeholders.py, and a value of the same kind that is none.
PLACEHOLDER_VALUES = {
    "123456789012": "210987654321",
    "tgw-0123456789EXAMPLE": "tgw-0a1b2c3d4e5f60718",
    "203.0.113.0/26": "52.94.76.0/26",
    "@example.com": "@seedance-tests.dev",
}


def platform_home(folder: Path, plane: ControlPlane, deployer: Identity) -> Path:
    """engine_home, with the language host and the stand-in providers on PATH."""
    home = engine_home(folder, plane, deployer)
    bin_dir = home / "bin"
    language = engine_manifest()["pulumi-language-python"]
    for name in ("pulumi-language-python", "pulumi-language-python-exec"):
        link = bin_dir / name
        if not link.exists():
            link.symlink_to(Path(language["pulumi-language-python"]).parent / name)
    for package in STANDIN_PACKAGES:
        script = bin_dir / f"pulumi-resource-{package}"
        script.write_text(
            f'#!/bin/sh\ncd {REPO} && exec {sys.executable} -m tests.engines.standin_provider {package} "$@"\n'
        )
        script.chmod(0o755)
    return home


def platform_project(folder: Path, stack: str) -> Path:
    """A project folder running the repository's program on a placeholder-free copy of the stack's config,
    with the capacity lock decided for it from the bundled prices."""
    project = folder / f"project-{stack}"
    (project / "infra").mkdir(parents=True, exist_ok=True)
    (project / "stacks").mkdir(exist_ok=True)
    shutil.copy2(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    # A copy, not a link: the program finds its stacks/ beside its own folder.
    shutil.copy2(REPO / "infra" / "__main__.py", project / "infra" / "__main__.py")
    venv = project / ".venv"
    if not venv.exists():
        venv.symlink_to(REPO / ".venv")
    text = (REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    for placeholder, value in PLACEHOLDER_VALUES.items():
        text = text.replace(placeholder, value)
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)
    decide_lock(project, stack)
    pin_images(project / "stacks", stack)
    return project


def decide_lock(project: Path, stack: str) -> None:
    """The capacity lock for the project's stack file as it is now, decided from the bundled prices."""
    subprocess.run(
        [*SEEDANCE, "decide", "--stack", stack, "--source", "snapshot", "--program", str(project / "infra")],
        cwd=REPO,
        check=True,
        capture_output=True,
    )


def pin_images(stacks_dir: Path, stack: str, version: str | None = None) -> None:
    """The node images file `seedance images pin` writes (for the stack's Kubernetes version, or the one a
    version step moves to), naming the images the stand-in's SSM answers."""
    config = stack_config(stack)
    version = version or config.cluster.kubernetes_version
    cloud = OfflineCloud(config.region)
    images = {}
    for group in config.gpu_node_groups:
        parameter = ami_ssm_parameter(group.ami_family, version, group.arch)
        answer = cloud.call(pulumi.runtime.MockCallArgs("aws:ssm/getParameter:getParameter", {"name": parameter}, ""))
        images[group_image_key(group)] = NodeImage(
            image_id=answer["value"], name=f"stand-in {parameter}", parameter=parameter, pinned_at=datetime.now(UTC)
        )
    document = NodeImagesDocument(
        images_version=1, stack=stack, region=config.region, kubernetes_version=version, images=images
    )
    images_path(stacks_dir, stack).write_text(render_node_images(document))


def platform_stack(home: Path, project: Path, stack: str, plane: ControlPlane, charts: ChartProxy) -> auto.Stack:
    """The project's stack on the home's file backend, run by the built CLI, its charts from `charts`."""
    state = home / "state"
    state.mkdir(exist_ok=True)
    ca = base64.b64encode(plane.certificates.ca_file.read_bytes()).decode()
    env = {
        "PATH": f"{home / 'bin'}:{os.environ['PATH']}",
        "PULUMI_BACKEND_URL": f"file://{state}",
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        STANDIN_CLUSTER: json.dumps({"endpoint": plane.server, "ca": ca}),
        "PYTHONPATH": str(REPO),
        **charts.env(),
    }
    options = auto.LocalWorkspaceOptions(
        pulumi_home=str(home / "pulumi-home"),
        env_vars=env,
        pulumi_command=auto.PulumiCommand(root=str(home), skip_version_check=True),
    )
    return auto.create_or_select_stack(stack, work_dir=str(project), opts=options)
