"""Helm releases rendered with Helm's own engine (helm-python-sdk, no binary) from pinned chart sources,
as a cluster of the stack's version gets them: its Kubernetes version and the API versions it serves are
the engine's capabilities. The gate judges what a release installs, not only its values.

Charts come from $SEEDANCE_CHART_CACHE, else ../shared/charts beside the project when it exists, else
.charts in the project (`make charts` fills it): one folder per chart, `<chart>-<version>`; a chart that
is not there is reported, never skipped.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
from pathlib import Path
from typing import Any

import yaml

from components.plan.resources import HELM_RELEASE, PlanResource, reveal_secrets
from seedance_client.errors import InputError

# libyaml's loader where PyYAML was built with it (its wheels are): a chart's CRDs are megabytes of YAML, which
# the pure-Python loader reads ten times slower, on every check.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# What every supported cluster version serves beyond the core groups, which charts test for.
API_VERSIONS = [
    "apiregistration.k8s.io/v1",
    "policy/v1",
    "autoscaling/v2",
    "networking.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
    "scheduling.k8s.io/v1",
    "apps/v1",
    "batch/v1",
]
# Kinds Helm gives the release's namespace when a template names none.
CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "PriorityClass",
        "StorageClass",
        "PersistentVolume",
        "APIService",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "PodSecurityPolicy",
    }
)


class ChartMissingError(LookupError):
    """The release's chart source is not in the chart cache."""


def chart_cache(project: Path | None = None) -> Path:
    if os.environ.get("SEEDANCE_CHART_CACHE"):
        return Path(os.environ["SEEDANCE_CHART_CACHE"])
    project = project or Path(__file__).resolve().parents[1]
    shared = project.parent / "shared" / "charts"
    return shared if shared.is_dir() else project / ".charts"


def pinned_sources() -> dict[str, str]:
    """Chart name -> the one source (repository URL or OCI reference) a release of it may name: the platform's
    own releases'. The gate renders `<chart>-<version>` from its cache, so a release naming the same chart
    and version from another source would install what the gate never judged."""
    from components.cluster.autoscaling import CHART_REPOSITORY as AUTOSCALER
    from components.cluster.descheduler import CHART_REPOSITORY as DESCHEDULER
    from components.compute.device_plugin import CHART_REPOSITORY as DEVICE_PLUGIN
    from components.compute.efa import EFA_PLUGIN_CHART, EFA_PLUGIN_REPOSITORY
    from components.compute.spot_interruptions import NTH_CHART
    from components.monitoring.metrics_pipeline import (
        COMMUNITY_CHARTS,
        DCGM_CHARTS,
        GRAFANA_CHARTS,
        METRICS_SERVER_CHARTS,
        OPENCOST_CHARTS,
    )
    from components.tenancy.queues import KUEUE_CHART

    return {
        "cluster-autoscaler": AUTOSCALER,
        "descheduler": DESCHEDULER,
        "nvidia-device-plugin": DEVICE_PLUGIN,
        EFA_PLUGIN_CHART: EFA_PLUGIN_REPOSITORY,
        NTH_CHART.rsplit("/", 1)[-1]: NTH_CHART,
        KUEUE_CHART.rsplit("/", 1)[-1]: KUEUE_CHART,
        "prometheus": COMMUNITY_CHARTS,
        "prometheus-adapter": COMMUNITY_CHARTS,
        "dcgm-exporter": DCGM_CHARTS,
        "grafana": GRAFANA_CHARTS,
        "metrics-server": METRICS_SERVER_CHARTS,
        "opencost": OPENCOST_CHARTS,
    }


def source_of(inputs: dict[str, Any]) -> str:
    """Where Helm takes a release's chart from (a trailing / aside): an OCI reference, or a path, as written (Helm
    looks for a local chart before any repository, whatever the repository options say: helm v3.18
    pkg/action/install.go `LocateChart`; a `repo/chart` name is a locally added repository's); else the
    repository the options name."""
    chart = str(inputs.get("chart"))
    written = "/" in chart or "\\" in chart or chart.startswith((".", "~"))
    source = chart if written else str((inputs.get("repositoryOpts") or {}).get("repo") or chart)
    return source.rstrip("/")


def foreign_source(inputs: dict[str, Any], pinned: dict[str, str]) -> str | None:
    """Why a release of one of the platform's charts names another source than the pinned one (None if not)."""
    name, source = str(inputs.get("chart")).rsplit("/", 1)[-1], source_of(inputs)
    if name in pinned and source != pinned[name].rstrip("/"):
        return f"its chart comes from {source}, not {pinned[name]}, the source the platform pins for {name}"
    return None


def unpinned(inputs: dict[str, Any], pinned: dict[str, str]) -> str | None:
    """Why the gate may not render a release's chart from its cache (None if it may): no source is pinned
    for it, and the cache holds charts by name and version, which says nothing of what another repository
    serves under that name."""
    name = str(inputs.get("chart")).rsplit("/", 1)[-1]
    if name in pinned:
        foreign = foreign_source(inputs, pinned)
        return f"{foreign} (the gate renders the pinned chart)" if foreign else None
    return (
        f"no source is pinned for the chart {name} ({source_of(inputs)}): the gate renders only the charts the "
        "platform pins (seedance/charts.py pinned_sources)"
    )


def chart_folder(inputs: dict[str, Any]) -> Path:
    """`<cache>/<chart>-<version>` (an OCI reference's last part names the chart)."""
    folder = chart_cache() / f"{str(inputs.get('chart')).rsplit('/', 1)[-1]}-{inputs.get('version')}"
    if not folder.is_dir():
        raise ChartMissingError(
            f"chart {inputs.get('chart')} {inputs.get('version')} is not in {chart_cache()}: "
            "`make charts` pulls the pinned charts there (or point SEEDANCE_CHART_CACHE at a "
            "folder that has them)"
        )
    return folder


def render(inputs: dict[str, Any], kubernetes_version: str, values: dict | None = None) -> list[dict]:
    """The objects a release with these inputs installs (with `values` instead of its own): each call its own
    copy, rendered once per process for the same chart, values and version."""
    folder = chart_folder(inputs)
    options = {
        "name": inputs["name"],
        "namespace": inputs["namespace"],
        "is_install": True,
        "kube_version": f"v{kubernetes_version}.0",
        "api_versions": API_VERSIONS,
    }
    given = reveal_secrets(inputs.get("values") or {}) if values is None else values
    return pickle.loads(_rendered(str(folder), json.dumps(given, sort_keys=True), json.dumps(options)))


@functools.lru_cache(maxsize=64)  # the gate's callers check plan after plan with the same releases
def _rendered(folder: str, values: str, options: str) -> bytes:
    from helm_python import Chart, _native  # the native engine loads only when a chart is rendered

    chart = Chart.load(Path(folder))
    rendered = json.loads(_native.call_string("helm_render", chart._raw(), values, options))
    return pickle.dumps(
        [
            document
            for path, text in sorted(rendered.items())
            if path.endswith((".yaml", ".yml"))
            for document in yaml.load_all(text, Loader=SAFE_LOADER)
            if isinstance(document, dict)
        ]
    )


def type_token(manifest: dict) -> str:
    api_version = str(manifest.get("apiVersion", "v1"))
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{manifest.get('kind')}"


def rendered_resources(release: PlanResource, kubernetes_version: str) -> list[PlanResource]:
    """A release's objects as plan resources, children of the release, in the namespace Helm puts them."""
    found = []
    for manifest in render(release.props, kubernetes_version):
        metadata = dict(manifest.get("metadata") or {})
        if manifest.get("kind") not in CLUSTER_SCOPED:
            metadata.setdefault("namespace", release.props.get("namespace"))
        props = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind")} | {"metadata": metadata}
        type_ = type_token(manifest)
        name = f"{release.name}/{manifest.get('kind')}/{metadata.get('name')}"
        found.append(
            PlanResource(urn=f"{release.urn}${type_}::{name}", type=type_, name=name, props=props, parent=release.urn)
        )
    return found


# --- Fetching the pinned charts a plan's releases name (`seedance charts pull`) ---

CHART_LAYERS = ("application/vnd.cncf.helm.chart.content.v1.tar+gzip", "application/tar+gzip")
MANIFESTS = "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json"
MAX_DOWNLOAD_BYTES = 64 << 20  # a repository index or a chart archive
MAX_CHART_BYTES = 100 << 20  # unpacked, as Helm's own loader caps it


class ChartFetchError(InputError):
    """A chart that could not be fetched or did not match its digest: exit 2, one line."""


def pinned_charts(resources: list[PlanResource]) -> list[dict[str, str]]:
    """(chart, version, repository) of each release, once each."""
    found = {}
    for release in resources:
        if release.type == HELM_RELEASE:
            props = release.props
            entry = {
                "chart": str(props.get("chart")),
                "version": str(props.get("version")),
                "repo": str((props.get("repositoryOpts") or {}).get("repo") or ""),
            }
            found[(entry["chart"], entry["version"])] = entry
    return list(found.values())


def _get(opener, url: str, deadline: float, headers: dict[str, str] | None = None, bearer: str | None = None) -> bytes:
    import time
    import urllib.request

    request = urllib.request.Request(url, headers=headers or {})
    if bearer:  # not carried to a redirect's storage URL, which refuses a second way to authenticate
        request.add_unredirected_header("Authorization", f"Bearer {bearer}")
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise ChartFetchError(f"{url}: out of time")
    try:
        with opener(request, timeout=remaining) as response:
            data = response.read(MAX_DOWNLOAD_BYTES + 1)
    except OSError as error:
        raise ChartFetchError(f"{url}: {error}") from None
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise ChartFetchError(f"{url}: larger than {MAX_DOWNLOAD_BYTES >> 20} MiB")
    return data


def _from_repository(opener, entry: dict[str, str], deadline: float) -> bytes:
    from urllib.parse import urljoin

    base = entry["repo"].rstrip("/") + "/"
    index = yaml.safe_load(_get(opener, urljoin(base, "index.yaml"), deadline))
    versions = ((index or {}).get("entries") or {}).get(entry["chart"]) or []
    # Helm reads versions as semver, a leading v aside: eks-charts publishes `v0.5.30` for a release's `0.5.30`.
    found = next((v for v in versions if str(v.get("version")).removeprefix("v") == entry["version"]), None)
    if found is None or not found.get("urls"):
        raise ChartFetchError(f"{entry['repo']}: no {entry['chart']} {entry['version']} in its index")
    data = _get(opener, urljoin(base, found["urls"][0]), deadline)
    digest = str(found.get("digest") or "").split(":")[-1]
    if not digest:
        raise ChartFetchError(f"{entry['repo']}: {entry['chart']} {entry['version']} has no digest to check")
    return _checked(data, digest, entry)


def _from_registry(opener, entry: dict[str, str], deadline: float) -> bytes:
    reference = entry["chart"].removeprefix("oci://")
    host, _, path = reference.partition("/")
    token = json.loads(_get(opener, f"https://{host}/token/?service={host}&scope=repository:{path}:pull", deadline))[
        "token"
    ]
    manifest = json.loads(
        _get(
            opener,
            f"https://{host}/v2/{path}/manifests/{entry['version'].replace('+', '_')}",
            deadline,
            {"Accept": MANIFESTS},
            token,
        )
    )
    layer = next((found for found in manifest.get("layers") or [] if found.get("mediaType") in CHART_LAYERS), None)
    if layer is None:
        raise ChartFetchError(f"{entry['chart']} {entry['version']}: the manifest has no chart layer")
    data = _get(opener, f"https://{host}/v2/{path}/blobs/{layer['digest']}", deadline, bearer=token)
    return _checked(data, str(layer["digest"]).split(":")[-1], entry)


def _checked(data: bytes, digest: str, entry: dict[str, str]) -> bytes:
    import hashlib

    if hashlib.sha256(data).hexdigest() != digest.lower():
        raise ChartFetchError(f"{entry['chart']} {entry['version']}: the archive does not match its digest {digest}")
    return data


def _unpack(data: bytes, chart: str, destination: Path) -> None:
    """The archive's one top-level folder (the chart) as `destination`, or nothing at all."""
    import io
    import shutil
    import tarfile
    import tempfile

    destination.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=destination.parent) as scratch:
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
                if sum(m.size for m in archive.getmembers()) > MAX_CHART_BYTES:
                    raise ChartFetchError(f"{chart}: unpacks to more than {MAX_CHART_BYTES >> 20} MiB")
                archive.extractall(scratch, filter="data")  # refuses absolute paths, `..` and links out
        except (tarfile.TarError, OSError) as error:
            raise ChartFetchError(f"{chart}: not a chart archive Helm would load: {error}") from None
        folders = [p for p in Path(scratch).iterdir()]
        if len(folders) != 1 or not (folders[0] / "Chart.yaml").is_file():
            raise ChartFetchError(f"{chart}: the archive is not one chart folder")
        if destination.exists():
            shutil.rmtree(destination)
        folders[0].replace(destination)


def pull(resources: list[PlanResource], timeout_seconds: float = 300, opener=None) -> list[Path]:
    """Every chart the plan's releases pin, into the chart cache (kept when already there), checked against
    its repository's digest; one overall deadline."""
    import time
    import urllib.request

    opener = opener or urllib.request.urlopen
    deadline = time.monotonic() + timeout_seconds
    pulled, pinned = [], pinned_sources()
    for entry in pinned_charts(resources):
        name = entry["chart"].rsplit("/", 1)[-1]
        destination = chart_cache() / f"{name}-{entry['version']}"
        if (destination / "Chart.yaml").is_file():
            continue
        foreign = foreign_source({"chart": entry["chart"], "repositoryOpts": {"repo": entry["repo"]}}, pinned)
        if foreign:  # the cache is by name: never fill it from elsewhere
            raise ChartFetchError(f"{entry['chart']} {entry['version']}: {foreign}")
        fetch = _from_registry if entry["chart"].startswith("oci://") else _from_repository
        if not entry["chart"].startswith("oci://") and not entry["repo"].startswith("https://"):
            raise ChartFetchError(f"{entry['chart']} {entry['version']}: no https repository to fetch it from")
        _unpack(fetch(opener, entry, deadline), entry["chart"], destination)
        pulled.append(destination)
    return pulled
