"""The real Pulumi engine for the engine tests: the CLI and the Kubernetes provider from `make engines`,
driven through the Automation API (inline programs run in this process's language server, so no language
plugin is needed) on a `file://` backend, talking to a control plane of tests/engines/cluster.py."""

from __future__ import annotations

import base64
import json
import os
import runpy
from collections.abc import Callable, Mapping
from pathlib import Path

import pulumi
from pulumi import automation as auto

from components.cluster.kubeconfig import render_kubeconfig
from seedance_client.engine import Secret
from tests.engines.cluster import ControlPlane, engine_manifest
from tests.engines.kube import Identity

PASSPHRASE = "seedance-engine-tests"


def engine_home(folder: Path, plane: ControlPlane, identity: Identity) -> Path:
    """A folder whose bin/ holds the CLI, the Kubernetes provider (found on PATH, as the CLI finds
    providers) and `aws`, answering `aws eks get-token` with a token of `identity` for this control plane,
    as EKS's authenticator would name the caller."""
    engines = engine_manifest()
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, target in (
        ("pulumi", engines["pulumi"]["pulumi"]),
        ("pulumi-resource-kubernetes", engines["pulumi-kubernetes"]["pulumi-resource-kubernetes"]),
    ):
        link = bin_dir / name
        if not link.exists():
            link.symlink_to(target)
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": plane.webhook.token_for(identity)},
    }
    aws = bin_dir / "aws"
    aws.write_text(f"#!/bin/sh\nprintf '%s' '{json.dumps(credential)}'\n")
    aws.chmod(0o755)
    return folder


def kubeconfig_for(plane: ControlPlane, cluster_name: str, region: str) -> str:
    """The platform's kubeconfig (the program's own renderer) for this control plane."""
    ca_data = base64.b64encode(plane.certificates.ca_file.read_bytes()).decode()
    return json.dumps(render_kubeconfig(cluster_name, plane.server, ca_data, region))


def stack(
    home: Path,
    project: str,
    stack_name: str,
    program: Callable[[], None],
    config: Mapping[str, str] | None = None,
) -> auto.Stack:
    """A stack of an inline program on the folder's file backend, run by the built CLI."""
    state = home / "state"
    state.mkdir(exist_ok=True)
    work_dir = home / "projects" / project
    work_dir.mkdir(parents=True, exist_ok=True)
    settings = auto.ProjectSettings(name=project, runtime="python", backend=auto.ProjectBackend(url=f"file://{state}"))
    env = {
        "PATH": f"{home / 'bin'}:{os.environ['PATH']}",
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
    }
    options = auto.LocalWorkspaceOptions(
        work_dir=str(work_dir),
        pulumi_home=str(home / "pulumi-home"),
        project_settings=settings,
        env_vars=env,
        pulumi_command=auto.PulumiCommand(root=str(home), skip_version_check=True),
    )
    created = auto.create_or_select_stack(stack_name, project, program, opts=options)
    created.set_all_config({key: auto.ConfigValue(value) for key, value in (config or {}).items()})
    return created


def exporting(outputs: Mapping[str, object]) -> Callable[[], None]:
    """A program that exports these outputs (secrets kept secret)."""

    def program() -> None:
        for key, value in outputs.items():
            pulumi.export(key, pulumi.Output.secret(value.value) if isinstance(value, Secret) else value)

    return program


def running(program_dir: Path) -> Callable[[], None]:
    """A program directory run as the language host runs it."""

    def program() -> None:
        runpy.run_path(str(program_dir / "__main__.py"), run_name="__main__")

    return program
