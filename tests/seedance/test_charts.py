"""The gate's charts: fetched from a repository's index or an OCI registry, checked against the digest the
source publishes, unpacked only when the archive is one chart folder; rendered from the cache, and a
release whose chart is missing or whose values a plan file masks is a finding, not a pass."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import tarfile
import urllib.request

import pytest
import yaml

from components.plan.resources import PlanResource
from components.tenancy.config import QueuesConfig
from components.tenancy.queues import KUEUE_CHART, kueue_values
from seedance import charts, check_command
from seedance.check_command import rendered_releases


def archive(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


CHART = archive(
    {
        "demo/Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.2.3\n",
        "demo/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
    }
)


class Served:
    """A fake network: URL -> bytes, recording each request."""

    def __init__(self, pages: dict[str, bytes]):
        self.pages = pages
        self.requests: list[urllib.request.Request] = []

    def __call__(self, request, timeout):
        self.requests.append(request)
        if request.full_url not in self.pages:
            raise OSError(f"404 {request.full_url}")
        return io.BytesIO(self.pages[request.full_url])


def release(chart="demo", version="1.2.3", repo="https://charts.example.com/stable", values=None):
    return PlanResource(
        "urn:pulumi:prod::p::kubernetes:helm.sh/v3:Release::r",
        "kubernetes:helm.sh/v3:Release",
        "r",
        {
            "chart": chart,
            "version": version,
            "name": "demo",
            "namespace": "apps",
            "repositoryOpts": {"repo": repo},
            "values": values or {},
        },
    )


def index(url: str, digest: str) -> bytes:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "entries": {
                "demo": [
                    {"version": "1.2.2", "urls": ["other.tgz"], "digest": "0" * 64},
                    {"version": "1.2.3", "urls": [url], "digest": digest},
                ]
            },
        }
    ).encode()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty chart cache, where the demo chart's repository is pinned as the platform's are."""
    monkeypatch.setenv("SEEDANCE_CHART_CACHE", str(tmp_path / "charts"))
    pinned = {**charts.pinned_sources(), "demo": "https://charts.example.com/stable"}
    monkeypatch.setattr(check_command, "pinned_sources", lambda: pinned)
    return tmp_path / "charts"


def test_a_chart_no_source_is_pinned_for_is_not_rendered_even_from_the_cache(cache, monkeypatch):
    """The cache holds charts by name and version; another repository may serve anything under them."""
    (cache / "demo-1.2.3").mkdir(parents=True)
    (cache / "demo-1.2.3" / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 1.2.3\n")
    monkeypatch.setattr(check_command, "pinned_sources", charts.pinned_sources)
    for repo in ("https://charts.example.com/stable", "https://charts.example-attacker.net"):
        rendered, unrendered = rendered_releases([release(repo=repo)], "1.35")
        assert rendered == []
        assert [entry["reason"] for entry in unrendered] == [
            f"no source is pinned for the chart demo ({repo}): the gate renders only the charts the platform "
            "pins (seedance/charts.py pinned_sources)"
        ]


def test_a_repository_chart_is_fetched_by_its_relative_url_checked_and_rendered(cache):
    served = Served(
        {
            "https://charts.example.com/stable/index.yaml": index("demo-1.2.3.tgz", hashlib.sha256(CHART).hexdigest()),
            "https://charts.example.com/stable/demo-1.2.3.tgz": CHART,
        }
    )
    assert charts.pull([release()], opener=served) == [cache / "demo-1.2.3"]
    assert (cache / "demo-1.2.3" / "Chart.yaml").is_file()
    rendered, unrendered = rendered_releases([release()], "1.35")
    assert unrendered == [] and [(r.type, r.props["metadata"]) for r in rendered] == [
        ("kubernetes:core/v1:ConfigMap", {"name": "demo", "namespace": "apps"})
    ]
    assert charts.pull([release()], opener=Served({})) == []  # already in the cache: nothing fetched


def test_a_chart_its_repository_lists_as_v_version_is_the_same_version(cache):
    """Helm reads `v1.2.3` in an index as 1.2.3 (the EFA device plugin's chart is listed so)."""
    listed = yaml.safe_load(index("demo-1.2.3.tgz", hashlib.sha256(CHART).hexdigest()))
    listed["entries"]["demo"][1]["version"] = "v1.2.3"
    served = Served(
        {
            "https://charts.example.com/stable/index.yaml": yaml.safe_dump(listed).encode(),
            "https://charts.example.com/stable/demo-1.2.3.tgz": CHART,
        }
    )
    assert charts.pull([release()], opener=served) == [cache / "demo-1.2.3"]


@pytest.mark.parametrize("case", ["digest", "escape", "two-folders", "missing-version", "http"])
def test_a_chart_that_is_not_what_its_source_publishes_is_refused_and_nothing_is_written(cache, case):
    data = {
        "escape": archive({"demo/Chart.yaml": "name: demo", "../evil": "x"}),
        "two-folders": archive({"demo/Chart.yaml": "name: demo", "other/Chart.yaml": "name: other"}),
    }.get(case, CHART)
    digest = "f" * 64 if case == "digest" else hashlib.sha256(data).hexdigest()
    version = "9.9.9" if case == "missing-version" else "1.2.3"
    repo = "http://charts.example.com/stable" if case == "http" else "https://charts.example.com/stable"
    served = Served(
        {
            "https://charts.example.com/stable/index.yaml": index("https://cdn.example.com/demo.tgz", digest),
            "https://cdn.example.com/demo.tgz": data,
        }
    )
    with pytest.raises(charts.ChartFetchError):
        charts.pull([release(version=version, repo=repo)], opener=served)
    assert not (cache / f"demo-{version}").exists()


def test_an_oci_chart_is_pulled_with_a_token_that_never_follows_a_redirect(cache):
    digest = "sha256:" + hashlib.sha256(CHART).hexdigest()
    base = "https://public.ecr.aws"
    path = "aws-ec2/helm/demo"
    served = Served(
        {
            f"{base}/token/?service=public.ecr.aws&scope=repository:{path}:pull": json.dumps({"token": "t0k"}).encode(),
            f"{base}/v2/{path}/manifests/1.2.3": json.dumps(
                {
                    "layers": [
                        {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": "sha256:" + "1" * 64},
                        {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digest},
                    ]
                }
            ).encode(),
            f"{base}/v2/{path}/blobs/{digest}": CHART,
        }
    )
    charts.pull([release(chart=f"oci://public.ecr.aws/{path}", repo="")], opener=served)
    assert (cache / "demo-1.2.3" / "Chart.yaml").is_file()
    blob = served.requests[-1]
    assert blob.unredirected_hdrs == {"Authorization": "Bearer t0k"} and "Authorization" not in blob.headers


def test_one_deadline_covers_every_download(cache):
    with pytest.raises(charts.ChartFetchError, match="out of time"):
        charts.pull([release()], timeout_seconds=0, opener=Served({}))


def test_a_release_the_gate_cannot_render_is_named_with_why(cache):
    _, unrendered = rendered_releases([release(), release(values="[secret]")], "1.35")
    reasons = [entry["reason"] for entry in unrendered]
    assert "is not in" in reasons[0] and "[secret] in the plan file" in reasons[1]


def test_the_cache_is_the_variable_else_the_shared_folder_beside_the_clone_else_the_clones_own(tmp_path, monkeypatch):
    """A lone clone (nothing beside it) keeps its charts in .charts, which `make charts` fills."""
    monkeypatch.delenv("SEEDANCE_CHART_CACHE", raising=False)
    clone = tmp_path / "clone"
    clone.mkdir()
    assert charts.chart_cache(clone) == clone / ".charts"
    (tmp_path / "shared" / "charts").mkdir(parents=True)
    assert charts.chart_cache(clone) == tmp_path / "shared" / "charts"
    monkeypatch.setenv("SEEDANCE_CHART_CACHE", str(tmp_path / "mine"))
    assert charts.chart_cache(clone) == tmp_path / "mine"


@pytest.mark.parametrize(
    "chart, repo",
    [
        ("cluster-autoscaler", "https://charts.example-attacker.net"),
        ("oci://ghcr.io/someone-else/aws-node-termination-handler", None),
        ("prometheus", "https://grafana-community.github.io/helm-charts"),  # a real repository, not prometheus'
        # Helm installs a local chart of that path before it asks any repository (LocateChart), or a locally
        # added repository's: the pinned repository beside it changes nothing.
        ("./vendor/cluster-autoscaler", "https://kubernetes.github.io/autoscaler"),
        ("autoscaler/cluster-autoscaler", "https://kubernetes.github.io/autoscaler"),
    ],
)
def test_a_platform_chart_from_another_source_is_neither_rendered_nor_pulled(cache, chart, repo):
    """The cache is by chart name: a release naming the platform's chart from elsewhere would install what
    the gate never rendered, and pulling it would put it where the platform's own release is rendered from."""
    foreign = release(chart=chart, version="9.9.9", repo=repo)
    rendered, unrendered = rendered_releases([foreign], "1.35")
    name = chart.rsplit("/", 1)[-1]
    assert rendered == [] and unrendered == [
        {
            "urn": foreign.urn,
            "reason": (
                f"its chart comes from {chart if '/' in chart else repo}, not {charts.pinned_sources()[name]}, the "
                "source the "
                f"platform pins for {name} (the gate renders the pinned chart)"
            ),
        }
    ]
    served = Served({})
    with pytest.raises(charts.ChartFetchError, match=f"the source the platform pins for {name}"):
        charts.pull([foreign], opener=served)
    assert served.requests == [] and not (cache / f"{name}-9.9.9").exists()


def test_the_platform_names_its_charts_from_their_pinned_sources(plan_of):
    from seedance.check_command import plan_resources

    releases = [
        r
        for stack in ("dev", "staging", "prod")
        for r in plan_resources(plan_of(stack))
        if r.type == "kubernetes:helm.sh/v3:Release"
    ]
    pinned = charts.pinned_sources()
    assert {str(r.props["chart"]).rsplit("/", 1)[-1] for r in releases} == set(pinned)
    assert all(
        charts.source_of(r.props) == pinned[str(r.props["chart"]).rsplit("/", 1)[-1]].rstrip("/") for r in releases
    )


def test_a_release_rendered_again_is_the_same_objects_and_each_caller_its_own_copy():
    """Rendered once per process for the same chart, values and version: a caller that changes what it got
    changes nothing another caller gets, and other values render anew."""
    release = {"name": "kueue", "namespace": "kueue-system", "chart": KUEUE_CHART, "version": "0.19.2"}
    values = kueue_values(QueuesConfig(), provisioning=False)
    first = charts.render({**release, "values": values}, "1.35")
    deployment = next(o for o in first if o["kind"] == "Deployment")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "evil.example/kueue"
    again = charts.render({**release, "values": values}, "1.35")
    assert again == charts.render({**release, "values": copy.deepcopy(values)}, "1.35")
    assert (
        next(o for o in again if o["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
        == image
    )
    values["controllerManager"]["replicas"] = 3
    other = charts.render({**release, "values": values}, "1.35")
    assert next(o for o in other if o["kind"] == "Deployment")["spec"]["replicas"] == 3
