"""Helm releases of a plan rendered with Helm's own engine (helm-python-sdk, no binary) from the pinned
chart sources in ../shared/charts (or $SEEDANCE_CHART_CACHE), as a cluster of the stack's version would
get them: its Kubernetes version and the API versions it serves are the engine's capabilities."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from helm_python import Chart, _native

from seedance.engine import Secret
from tests.stacks import REPO

CHARTS = Path(os.environ.get("SEEDANCE_CHART_CACHE") or REPO.parent / "shared" / "charts")
# What every supported cluster version serves beyond the core groups, which charts test for.
API_VERSIONS = ["apiregistration.k8s.io/v1", "policy/v1", "autoscaling/v2", "networking.k8s.io/v1",
                "rbac.authorization.k8s.io/v1", "scheduling.k8s.io/v1", "apps/v1", "batch/v1"]


def values_of(release) -> dict:
    """A release's values as the chart gets them (the plan keeps values holding a secret secret)."""
    values = release.inputs.get("values") or {}
    return values.value if isinstance(values, Secret) else values


def chart_of(release) -> Chart:
    inputs = release.inputs
    folder = CHARTS / f"{inputs['chart'].rsplit('/', 1)[-1]}-{inputs['version']}"  # an OCI reference's last part
    if not folder.is_dir():
        raise AssertionError(f"chart {inputs['chart']} {inputs['version']} is not in {CHARTS}: add its source there "
                             "(or point SEEDANCE_CHART_CACHE at a folder that has it)")
    return Chart.load(folder)


def render_release(release, kubernetes_version: str, values: dict | None = None) -> list[dict]:
    """The objects a `kubernetes:helm.sh/v3:Release` of a plan installs (with `values` instead of its own)."""
    inputs = release.inputs
    chart = chart_of(release)
    options = {"name": inputs["name"], "namespace": inputs["namespace"], "is_install": True,
               "kube_version": f"v{kubernetes_version}.0", "api_versions": API_VERSIONS}
    rendered = json.loads(_native.call_string("helm_render", chart._raw(), json.dumps(values_of(release) if values is None else values),
                                              json.dumps(options)))
    return [document for path, text in sorted(rendered.items()) if path.endswith((".yaml", ".yml"))
            for document in yaml.safe_load_all(text) if document]
