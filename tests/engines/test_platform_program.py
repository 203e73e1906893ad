"""The platform program, unchanged, under the real engine (tests/engines/platform_program.py): `pulumi up` of
dev (1.36) and prod (1.35) from a project folder, by the built CLI and Python language host, the real
Kubernetes provider creating every Kubernetes object and Helm release on a control plane of the stack's
version, the AWS half answered by stand-ins. Shown: the run succeeds and registers what the offline plan
declares; every workload, the Helm releases' own among them, becomes ready on the pools' nodes; every
release is the cached chart at its pinned version; a second run changes nothing; and `pulumi preview
--policy-pack policies` judges as `seedance check` does, failing where it fails."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from pulumi import automation as auto

from components.capacity.lock import lock_path
from components.cluster.provisioning import BEST_EFFORT_ATOMIC, PROVISIONING_GROUP
from components.compute.labels import HOSTNAME_LABEL, NETWORK_NODE_LAYER, NODE_GROUP_LABEL, pool_taint
from components.compute.node_images import images_path
from components.compute.priority import PRIORITY_CLASS
from components.plan.diff import plan_diff
from components.tenancy.queues import GANG_CHECK, KUEUE_API
from seedance.charts import chart_cache
from seedance.check_command import plan_resources
from seedance.cli import offline_plan
from seedance_client.contract import GPU_RESOURCE, QUEUE_LABEL
from seedance_client.engine import Plan
from tests.conftest import _stack_plan
from tests.engines.chart_proxy import ChartProxy, cached_charts
from tests.engines.cluster import DEPLOYER, ControlPlane, restart_at, start_control_plane, wait_until
from tests.engines.kube import EVERY_NAMESPACE
from tests.engines.kueue import kueue_playing_its_pods
from tests.engines.platform_program import (
    SEEDANCE,
    decide_lock,
    pin_images,
    platform_home,
    platform_project,
    platform_stack,
)
from tests.engines.stack_objects import register_nodes
from tests.engines.volumes import VolumeProvisioner
from tests.stacks import REPO, stack_config

STACKS = ("dev", "prod")
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
RELEASE = "kubernetes:helm.sh/v3:Release"
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")


@dataclass
class Deployed:
    name: str
    plane: ControlPlane
    project: Path
    stack: auto.Stack
    result: auto.UpResult
    plan: Plan
    charts: ChartProxy
    volumes: VolumeProvisioner
    running: contextlib.ExitStack  # the chart proxy, the volume provisioner and Kueue

    def close(self) -> None:
        self.running.close()
        self.plane.stop()  # the plane it runs on now (a version step restarts it)

    def state(self) -> list[dict]:
        return (self.stack.export_stack().deployment or {})["resources"]


_deployed: dict[str, Deployed] = {}
_failed: dict[str, str] = {}


@pytest.fixture(scope="module")
def deployed(engine_dir):
    """A stack's first `pulumi up`, once (a failed one fails every test that needs it, without a rerun). One
    stack's program runs at a time, as its tests run together (tests/engines/conftest.py): Kueue plays its
    chart's pods at this host's address, on the chart's port."""

    def up(name: str) -> Deployed:
        if name in _failed:
            pytest.fail(f"the first `pulumi up` of {name} failed: {_failed[name]}")
        if name not in _deployed:
            for done in _deployed.values():
                done.close()
            _deployed.clear()
            try:
                _deployed[name] = _first_up(engine_dir, name)
            except Exception as error:
                _failed[name] = str(error)[-2000:]
                raise
        return _deployed[name]

    yield up
    for done in _deployed.values():
        done.close()
    _deployed.clear()
    _failed.clear()


def _first_up(engine_dir: Path, name: str) -> Deployed:
    """The stack's first `pulumi up` on a control plane of its own (the nodes its groups launch registered by
    their kubelets first, as the groups come up before the add-ons), Kueue's controller playing its chart's
    pods where the stack queues GPUs (tests/engines/kueue.py)."""
    config = stack_config(name)
    folder = engine_dir / f"program-{name}"
    plane = start_control_plane(folder / "plane", config.cluster.kubernetes_version)
    try:
        with contextlib.ExitStack() as running:
            charts = ChartProxy(folder / "charts", cached_charts(chart_cache())).start()
            running.callback(charts.stop)
            volumes = running.enter_context(VolumeProvisioner(plane.kube))
            if config.queues.enabled:
                running.enter_context(kueue_playing_its_pods(plane, folder / "kueue", config.queues))
            plan = _stack_plan(name)
            register_nodes(plane, plan, config)
            project = platform_project(folder, name)
            stack = platform_stack(platform_home(folder / "pulumi", plane, DEPLOYER), project, name, plane, charts)
            result = stack.up(color="never", on_output=lambda _line: None)
            return Deployed(name, plane, project, stack, result, plan, charts, volumes, running.pop_all())
    except BaseException:
        plane.stop()
        raise


def _kubernetes_resources(types_and_names) -> set[tuple[str, str]]:
    return {(t, n) for t, n in types_and_names if t.startswith("kubernetes:")}


@pytest.mark.parametrize("stack", STACKS)
def test_the_program_runs_unchanged_and_registers_what_the_offline_plan_declares(deployed, stack):
    done = deployed(stack)
    assert done.result.summary.result == "succeeded"
    real = _kubernetes_resources((r["type"], r["urn"].rsplit("::", 1)[-1]) for r in done.state())
    offline = _kubernetes_resources((r.type, r.name) for r in done.plan.resources)
    assert real and real == offline


def _ready(kind: str, live: dict) -> bool:
    status, spec = live.get("status", {}), live["spec"]
    if status.get("observedGeneration") != live["metadata"]["generation"]:
        return False
    if kind == "DaemonSet":
        return status.get("numberReady") == status.get("desiredNumberScheduled")
    return status.get("readyReplicas", 0) == spec.get("replicas", 1) == status.get("updatedReplicas", 0)


def _workloads(kube) -> dict[tuple[str, str, str], dict]:
    return {
        (kind, w["metadata"]["namespace"], w["metadata"]["name"]): w
        for kind in WORKLOADS
        for w in kube.list("apps/v1", kind, namespace=EVERY_NAMESPACE)
    }


def _target(workloads: dict, scaler: dict) -> dict:
    ref = scaler["spec"]["scaleTargetRef"]
    return workloads[(ref["kind"], scaler["metadata"]["namespace"], ref["name"])]


def _not_ready(kube) -> list[tuple[str, str, str]]:
    return sorted(key for key, w in _workloads(kube).items() if not _ready(key[0], w))


@pytest.mark.parametrize("stack", STACKS)
def test_every_workload_the_releases_included_is_ready_on_the_pools_nodes(deployed, stack):
    done = deployed(stack)
    kube = done.plane.kube
    released = {
        key
        for key, w in _workloads(kube).items()
        if w["metadata"].get("labels", {}).get("app.kubernetes.io/managed-by") == "Helm"
    }
    assert released, "no release installed a workload"
    scalers = kube.list("autoscaling/v2", "HorizontalPodAutoscaler", namespace=EVERY_NAMESPACE)
    assert len(scalers) == sum(r.type.endswith(":HorizontalPodAutoscaler") for r in done.plan.resources)

    def below_minimum() -> list[str]:
        workloads = _workloads(kube)
        return [
            s["metadata"]["name"]
            for s in scalers
            if _target(workloads, s)["spec"]["replicas"] < s["spec"]["minReplicas"]
        ]

    # Triton's Deployment leaves its replicas to its autoscaler, which raises them to its minimum (within its
    # 15 s sync) after `pulumi up` has seen the first pod ready: that, and the added pods ready, get a while.
    with contextlib.suppress(TimeoutError):
        wait_until(
            done.plane, "autoscaled and ready", lambda: not below_minimum() and not _not_ready(kube), timeout=180
        )
    assert below_minimum() == []
    assert _not_ready(kube) == []
    # Pods on the nodes the groups launched, never left pending.
    pods = kube.list("v1", "Pod", namespace=EVERY_NAMESPACE)
    assert pods and all(p["spec"].get("nodeName") for p in pods)


@pytest.mark.parametrize("stack", STACKS)
def test_every_release_is_the_cached_chart_at_its_pinned_version(deployed, stack):
    done = deployed(stack)
    releases = [r for r in done.state() if r["type"] == RELEASE]
    assert releases
    for release in releases:
        outputs = release["outputs"]
        assert outputs["status"]["status"] == "deployed", release["urn"]
        chart = outputs["chart"].rsplit("/", 1)[-1]
        assert outputs["status"]["version"] == outputs["version"]
        fetched = [
            path
            for path in done.charts.requests
            if path.endswith((f"/{chart}-{outputs['version']}.tgz", f"/manifests/{outputs['version']}"))
        ]
        assert fetched, f"{chart} {outputs['version']} was not fetched from its repository"


@pytest.mark.parametrize("stack", STACKS)
def test_kueues_own_webhooks_judged_the_programs_queues(deployed, stack):
    """Kueue's webhooks, as its chart declares them (failing closed), are served by its controller: the
    program's flavors and queues went through them, after the release, and they refuse what Kueue refuses
    beyond its schemas (a flavor's taint twice)."""
    done = deployed(stack)
    kube = done.plane.kube
    flavors = kube.list(KUEUE_API, "ResourceFlavor")
    assert flavors and len(flavors) == sum(r.type.endswith(":ResourceFlavor") for r in done.plan.resources)
    taint = {"key": "seedance.io/twice", "value": "x", "effect": "NoSchedule"}
    twice = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": "twice"}}
    refused = kube.create({**twice, "spec": {"nodeTaints": [taint, taint]}}, dry_run=True)
    assert not refused.allowed
    assert "vresourceflavor.kb.io" in refused.message and "taints must be unique" in refused.message
    assert kube.create({**twice, "spec": {"nodeTaints": [taint]}}, dry_run=True).allowed


@pytest.mark.parametrize("stack", STACKS)
def test_a_second_run_changes_nothing(deployed, stack):
    done = deployed(stack)
    preview = done.stack.preview(color="never", on_output=lambda _line: None)
    assert set(preview.change_summary) == {"same"}


def _check_findings(project: Path, stack: str, extra_args: tuple[str, ...] = ()) -> tuple[int, list[tuple[str, str]]]:
    """`seedance check` of the project's stack: its exit code and its mandatory findings (rule, resource)."""
    done = subprocess.run(
        [*SEEDANCE, "check", "--stack", stack, "--program", str(project / "infra"), "--format", "json", *extra_args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    report = json.loads(done.stdout)
    found = [
        (v["policy"], (v["urn"] or "").rsplit("::", 1)[-1]) for v in report["violations"] if v["level"] == "mandatory"
    ]
    return done.returncode, sorted(found)


def _preview_findings(done: Deployed) -> tuple[bool, list[tuple[str, str]]]:
    """`pulumi preview --policy-pack policies` of the stack: whether it passed, and its mandatory findings."""
    events: list = []
    try:
        done.stack.preview(
            color="never", on_output=lambda _line: None, on_event=events.append, policy_packs=[str(REPO / "policies")]
        )
        passed = True
    except auto.CommandError:
        passed = False
    found = [
        (e.policy_event.policy_name, _resource_name(e.policy_event.resource_urn))
        for e in events
        if e.policy_event is not None and e.policy_event.enforcement_level == "mandatory"
    ]
    return passed, sorted(found)


def _resource_name(urn: str | None) -> str:
    """The finding's resource, none for the stack (the engine names its Stack, `check` nothing)."""
    return "" if not urn or "::pulumi:pulumi:Stack::" in urn else urn.rsplit("::", 1)[-1]


@pytest.mark.parametrize("stack", ["prod"])
def test_the_policy_pack_under_the_real_engine_judges_prod_as_seedance_check_does(deployed, stack):
    done = deployed(stack)
    code, checked = _check_findings(done.project, "prod")
    passed, previewed = _preview_findings(done)
    assert (code, checked) == (0, [])
    assert (passed, previewed) == (True, checked)


@pytest.mark.parametrize("stack", ["prod"])
def test_where_check_fails_the_preview_fails_with_the_same_findings(deployed, stack):
    done = deployed(stack)
    stack_file = done.project / "stacks" / "Pulumi.prod.yaml"
    original = stack_file.read_text()
    document = yaml.safe_load(original)
    document["config"]["seedance-gpu:budget"]["monthly_usd"] = 1000  # far below what prod's GPUs cost
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    try:
        code, checked = _check_findings(done.project, "prod")
        passed, previewed = _preview_findings(done)
    finally:
        stack_file.write_text(original)
    assert code != 0 and checked
    assert {rule for rule, _ in checked} >= {"budget-monthly-cost-limit"}
    assert (passed, previewed) == (False, checked)


def _kubernetes_changes(changes) -> dict[str, str]:
    return {name: op for typ, name, op in changes if typ.startswith("kubernetes:")}


def _predicted(project: Path, stack: str, before: dict[Path, str], after: dict[Path, str]) -> dict[str, str]:
    """What `seedance diff` says the change does, from offline plans of the project's files before and after
    (left as before)."""
    stack_file = project / "stacks" / f"Pulumi.{stack}.yaml"
    plans = []
    try:
        for files in (before, after):
            for path, text in files.items():
                path.write_text(text)
            plans.append(plan_resources(offline_plan(stack, project / "infra", stack_file)[0]))
    finally:
        for path, text in before.items():
            path.write_text(text)
    return _kubernetes_changes((c.resource.type, c.resource.name, c.action) for c in plan_diff(*plans))


def _previewed(done: Deployed) -> dict[str, str]:
    """What `pulumi preview --diff` against the live state says it will do, by resource."""
    events: list = []
    done.stack.preview(color="never", diff=True, on_output=lambda _line: None, on_event=events.append)
    steps = [e.resource_pre_event.metadata for e in events if e.resource_pre_event is not None]
    replacing = {"replace", "create-replacement", "delete-replaced"}
    return _kubernetes_changes(
        (s.type, s.urn.rsplit("::", 1)[-1], "replace" if s.op in replacing else s.op)
        for s in steps
        if s.op not in ("same", "read")
    )


def _with_config(text: str, change) -> str:
    document = yaml.safe_load(text)
    change(document["config"])
    return yaml.safe_dump(document, sort_keys=False)


def _day_two(project: Path, stack: str, change, *, redecide: bool = False, version: str | None = None):
    """The project's files before and after a change as its pull request carries it: the stack file edited,
    the capacity lock decided again when holdings moved, node images pinned for a new Kubernetes version.
    The folder is left as it was."""
    stacks = project / "stacks"
    stack_file = stacks / f"Pulumi.{stack}.yaml"
    before = {path: path.read_text() for path in (stack_file, lock_path(stacks, stack), images_path(stacks, stack))}
    try:
        stack_file.write_text(change(before[stack_file]))
        if redecide:
            decide_lock(project, stack)
        if version:
            pin_images(stacks, stack, version)
        after = {path: path.read_text() for path in before}
    finally:
        for path, text in before.items():
            path.write_text(text)
    return before, after


def _quota_raised(config: dict) -> None:
    config["seedance-gpu:tenants"][0]["gpus"].update(batch=24)


def _reserved_bought(config: dict) -> None:
    """A mix change: more Reserved Instances, so the online group's On-Demand base and the GPU price move."""
    config["seedance-gpu:capacity"]["reserved"][0]["count"] = 12


def _second_team(config: dict) -> None:
    config["seedance-gpu:tenants"].append(
        {
            "name": "speech-ml",
            "namespaces": ["speech-train"],
            "gpus": {"batch": 8, "online": 0},
            "principal_arns": ["arn:aws:iam::210987654321:role/speech-ml-engineers"],
        }
    )


def _stepped_to_1_36(text: str) -> str:
    stepped = text.replace('kubernetes_version: "1.35"', 'kubernetes_version: "1.36"')
    assert stepped != text
    return stepped


def _preview_of(done: Deployed, after: dict[Path, str]) -> dict[str, str]:
    """`_previewed` with the project's files as the change leaves them, restored after."""
    before = {path: path.read_text() for path in after}
    try:
        for path, text in after.items():
            path.write_text(text)
        return _previewed(done)
    finally:
        for path, text in before.items():
            path.write_text(text)


@pytest.mark.parametrize(
    ("change", "redecide"),
    [(_quota_raised, False), (_second_team, False), (_reserved_bought, True)],
    ids=["quota-changed", "team-added", "mix-changed"],
)
@pytest.mark.parametrize("stack", ["prod"])
def test_day_two_the_real_preview_does_what_seedance_diff_predicted(deployed, stack, change, redecide):
    done = deployed(stack)
    before, after = _day_two(done.project, "prod", lambda text: _with_config(text, change), redecide=redecide)
    predicted = _predicted(done.project, "prod", before, after)
    assert predicted
    assert _preview_of(done, after) == predicted


@pytest.mark.parametrize("stack", ["prod"])
def test_day_two_a_kubernetes_version_step_previews_as_predicted_and_applies(deployed, stack):
    """Last in the module: prod's control plane moves to 1.36 on the same etcd and address, as an EKS
    upgrade does, and the stack file and node images move with it. The real preview against the upgraded
    server does what `seedance diff` predicted (the releases whose versions follow the cluster's), and
    `pulumi up` applies it: every workload ready again, then nothing left to change."""
    done = deployed(stack)
    before, after = _day_two(done.project, "prod", _stepped_to_1_36, version="1.36")
    predicted = _predicted(done.project, "prod", before, after)
    assert {"seedance-prod-autoscaler-release", "seedance-prod-descheduler-release"} <= set(predicted)
    done.plane = restart_at(done.plane, "1.36")
    assert done.plane.kube.get_raw("/version").count('"minor": "36"') == 1
    assert _preview_of(done, after) == predicted
    for path, text in after.items():
        path.write_text(text)
    result = done.stack.up(color="never", on_output=lambda _line: None)
    assert result.summary.result == "succeeded"
    assert _previewed(done) == {}
    unready = [
        (kind, live["metadata"]["name"])
        for kind in WORKLOADS
        for live in done.plane.kube.list("apps/v1", kind, namespace=EVERY_NAMESPACE)
        if not _ready(kind, live)
    ]
    assert unready == []


def _condition(obj: dict | None, kind: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def _gang_job(namespace: str, pods: int, gpus: int) -> dict:
    """A team's multi-node job on the EFA pool (its node selector leaves Kueue that pool's flavor only), its
    pods under one network node of the bottom layer (Kueue's Topology Aware Scheduling)."""
    container = {
        "name": "train",
        "image": "busybox",
        "resources": {
            "requests": {GPU_RESOURCE: str(gpus), "cpu": "1", "memory": "1Gi"},
            "limits": {GPU_RESOURCE: str(gpus), "cpu": "1", "memory": "1Gi"},
        },
    }
    pod = {
        "restartPolicy": "Never",
        "priorityClassName": PRIORITY_CLASS["batch"],
        "terminationGracePeriodSeconds": 60,
        "nodeSelector": {NODE_GROUP_LABEL: "train"},
        "containers": [container],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "gang", "namespace": namespace, "labels": {QUEUE_LABEL: "batch"}},
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "template": {"metadata": {"annotations": {REQUIRED_TOPOLOGY: f"{NETWORK_NODE_LAYER}3"}}, "spec": pod},
        },
    }


def _placed_by_network(kube, pool: str) -> list[str]:
    """What EKS's cloud controller does for a type that reports its topology: each node of the pool labelled
    with its network nodes (here all under one spine, each node under a leaf of its own)."""
    nodes = [n for n in kube.list("v1", "Node") if n["metadata"]["labels"].get(NODE_GROUP_LABEL) == pool]
    for index, node in enumerate(nodes):
        layers = {f"{NETWORK_NODE_LAYER}1": "nn-spine", f"{NETWORK_NODE_LAYER}2": "nn-block"}
        layers[f"{NETWORK_NODE_LAYER}3"] = f"nn-leaf-{index}"
        assert kube.patch("v1", "Node", node["metadata"]["name"], {"metadata": {"labels": layers}}).allowed
    return [n["metadata"]["name"] for n in nodes]


def _assigned_hosts(slice_: dict) -> list[str]:
    """A topology assignment slice's node names (Kueue 0.19 writes one value for all, or prefix, roots, suffix)."""
    (level,) = slice_["valuesPerLevel"]
    if "universal" in level:
        return [level["universal"]] * slice_["domainCount"]
    named = level["individual"]
    return [named.get("prefix", "") + root + named.get("suffix", "") for root in named["roots"]]


@pytest.mark.parametrize("stack", ["prod"])
def test_a_multi_node_job_is_admitted_once_the_autoscaler_took_its_nodes_as_one_request(deployed, stack):
    """Prod's EFA pool: the real Kueue, started after the program applied the ProvisioningRequest API, runs its
    gang check; a two-pod job on the pool (1 GPU each: video-ml's nominal quota on the pool's flavor is 3) gets
    its quota, then waits suspended while Kueue asks for both pods' nodes in one best-effort-atomic request (its
    PodTemplate with the pool's selector and tolerations), and starts once the autoscaler (played here) marks
    the request Provisioned and Kueue has placed its pods under one network node of the pool's topology."""
    plane = deployed(stack).plane
    kube = plane.kube
    hosts = _placed_by_network(kube, "train")
    wait_until(
        plane,
        "Kueue's gang check active (its provisioning controller found the API at start)",
        lambda: _condition(kube.get(KUEUE_API, "AdmissionCheck", GANG_CHECK), "Active").get("status") == "True",
        60,
    )
    namespace = "video-train"
    created = kube.create(_gang_job(namespace, pods=2, gpus=1))
    assert created.allowed, created.message
    try:
        requests: list[dict] = []

        def asked() -> bool:
            requests[:] = kube.list(f"{PROVISIONING_GROUP}/v1", "ProvisioningRequest", namespace=namespace)
            return bool(requests)

        wait_until(plane, "Kueue's ProvisioningRequest for the job", asked, 60)
        (request,) = requests
        assert request["spec"]["provisioningClassName"] == BEST_EFFORT_ATOMIC
        (pod_set,) = request["spec"]["podSets"]
        assert pod_set["count"] == 2
        template = kube.get("v1", "PodTemplate", pod_set["podTemplateRef"]["name"], namespace=namespace)
        assert template["template"]["spec"]["nodeSelector"][NODE_GROUP_LABEL] == "train"
        assert pool_taint("train")["key"] in {t["key"] for t in template["template"]["spec"]["tolerations"]}
        job = kube.get("batch/v1", "Job", "gang", namespace=namespace)
        assert job["spec"]["suspend"] is True  # quota reserved, not admitted: the check is pending
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        provisioned = {
            "type": "Provisioned",
            "status": "True",
            "reason": "Provisioned",
            "message": "played by the test",
            "lastTransitionTime": now,
        }
        answer = kube.patch(
            f"{PROVISIONING_GROUP}/v1",
            "ProvisioningRequest",
            request["metadata"]["name"],
            {"status": {"conditions": [provisioned]}},
            namespace=namespace,
            subresource="status",
        )
        assert answer.allowed, answer.message
        wait_until(
            plane,
            "the job started once its nodes were provisioned",
            lambda: kube.get("batch/v1", "Job", "gang", namespace=namespace)["spec"]["suspend"] is False,
            60,
        )
        (workload,) = [
            w
            for w in kube.list(KUEUE_API, "Workload", namespace=namespace)
            if any(o["name"] == "gang" for o in w["metadata"].get("ownerReferences") or [])
        ]
        (assigned,) = workload["status"]["admission"]["podSetAssignments"]
        assert assigned["flavors"][GPU_RESOURCE] == "train-on-demand-topology-3"
        placed = assigned["topologyAssignment"]
        assert placed["levels"] == [HOSTNAME_LABEL]  # the topology's lowest level: the pods' nodes by name
        (slice_,) = placed["slices"]
        assert slice_["domainCount"] == 1  # both pods on one node of the pool: under one leaf
        assert set(_assigned_hosts(slice_)) <= set(hosts), (slice_, hosts)
    finally:
        kube.delete("batch/v1", "Job", "gang", namespace=namespace, dependents=True)
