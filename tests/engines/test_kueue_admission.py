"""The real Kueue decides (issue 51, item 8): its controller, built from its module at the chart's version, on a
real API server, over the queues the program derives for two teams sharing one flavor of 8 GPUs, 4 each.
A team's job beyond its quota borrows the other's idle GPUs; the other team's job within its quota takes
them back by preempting the borrower; a gang larger than the cohort is admitted in no part."""

from __future__ import annotations

import contextlib
import time

import pytest

from components.tenancy.config import QueuesConfig, TenantConfig
from components.tenancy.demand import read_demand
from components.tenancy.manifests import TENANT_LABEL
from components.tenancy.queues import Flavor, queue_manifests
from components.tenancy.replay import Quota, Sharing, replay
from seedance_client.contract import QUEUE_LABEL
from tests.engines.cluster import control_plane
from tests.engines.kueue import running_kueue
from tests.engines.stack_objects import established
from tests.engines.test_queues import _rendered

PEOPLE = "arn:aws:iam::123456789012:role/people"
TEAMS = [
    TenantConfig(name="vision", principal_arns=[PEOPLE], gpus={"batch": 4}),
    TenantConfig(name="speech", principal_arns=[PEOPLE], gpus={"batch": 4}),
]
WORKLOADS = ("kueue.x-k8s.io/v1beta2", "Workload")


def _job(namespace: str, name: str, pods: int) -> dict:
    """A team's job as Kueue's mutating webhook would leave it: suspended, naming the team's queue."""
    container = {
        "name": "train",
        "image": "busybox",
        "resources": {"requests": {"nvidia.com/gpu": "1", "cpu": "100m"}, "limits": {"nvidia.com/gpu": "1"}},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: "batch"}},
        "spec": {
            "suspend": True,
            "parallelism": pods,
            "completions": pods,
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        },
    }


def _workload(kube, namespace: str, job: str) -> dict | None:
    for workload in kube.list(*WORKLOADS, namespace=namespace):
        owners = workload["metadata"].get("ownerReferences") or []
        if any(o["kind"] == "Job" and o["name"] == job for o in owners):
            return workload
    return None


def _condition(workload: dict | None, kind: str) -> dict:
    for condition in ((workload or {}).get("status") or {}).get("conditions") or []:
        if condition["type"] == kind:
            return condition
    return {}


def _until(check, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"not within {seconds:.0f} s: {check.__doc__}")


@contextlib.contextmanager
def _kueue_over(folder, teams: list[TenantConfig]):
    """A control plane with Kueue's CRDs, the teams' namespaces and their queues over one flavor of 8 GPUs,
    and Kueue's controller running: its client."""
    with control_plane(folder / "plane", "1.35") as plane:
        for crd in (o for o in _rendered() if o["kind"] == "CustomResourceDefinition"):
            assert plane.kube.apply(crd).allowed
            established(plane.kube, crd["metadata"]["name"])
        for team in teams:
            ns = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": team.name, "labels": {TENANT_LABEL: team.name}},
            }
            assert plane.kube.apply(ns).allowed
        manifests = queue_manifests(teams, {t.name: ["batch"] for t in teams}, [Flavor("batch", "batch", "spot", 8)])
        for manifest in manifests:
            answer = plane.kube.apply(manifest)
            assert answer.allowed, answer.message
        with running_kueue(plane, folder / "kueue", QueuesConfig()):
            yield plane.kube


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    with _kueue_over(tmp_path_factory.mktemp("kueue"), TEAMS) as kube:
        yield kube


def test_a_team_borrows_idle_quota_and_the_owner_takes_it_back_by_preemption(cohort):
    kube = cohort
    assert kube.create(_job("vision", "big", 6)).allowed  # 4 of its own and 2 of speech's idle ones

    def admitted_big():
        """vision's 6-GPU job admitted"""
        return _condition(_workload(kube, "vision", "big"), "Admitted").get("status") == "True"

    _until(admitted_big)
    assert kube.create(_job("speech", "own", 4)).allowed  # within speech's nominal 4: only 2 are free

    def reclaimed():
        """vision's borrower evicted by preemption, and speech's job admitted"""
        evicted = _condition(_workload(kube, "vision", "big"), "Evicted")
        own = _condition(_workload(kube, "speech", "own"), "Admitted")
        return evicted.get("status") == "True" and own.get("status") == "True" and evicted

    evicted = _until(reclaimed)
    assert evicted["reason"] == "Preempted", evicted


def test_a_gang_larger_than_the_cohort_is_admitted_in_no_part(cohort):
    kube = cohort
    assert kube.create(_job("vision", "gang", 10)).allowed

    def pending():
        """the 10-pod gang's workload exists and holds no quota"""
        workload = _workload(kube, "vision", "gang")
        return workload is not None and _condition(workload, "QuotaReserved").get("status") == "False" and workload

    workload = _until(pending)
    assert not (workload.get("status") or {}).get("admission")
    job = kube.get("batch/v1", "Job", "gang", namespace="vision")
    assert job["spec"]["suspend"] is True


# The replay's model (components/tenancy/replay.py) against the controller: two teams of 4 GPUs sharing 8,
# each step every team's demand as 1-GPU jobs, created in order (fewer: the latest go, admitted ones first).
SCRIPT = [
    {"north": 6, "south": 0},  # north borrows south's idle 2
    {"north": 6, "south": 4},  # south reclaims them: 2 of north's borrowed GPUs preempted
    {"north": 2, "south": 4},
    {"north": 2, "south": 7},  # south borrows north's idle 2; one of its jobs waits
]
SCRIPT_TEAMS = [TenantConfig(name=name, principal_arns=[PEOPLE], gpus={"batch": 4}) for name in SCRIPT[0]]


def _replayed(steps: int) -> tuple[dict[str, float], float]:
    """Each team's GPU-hours served and the GPUs preempted over the script's first `steps` steps (an hour each),
    as the replay's model says."""
    if steps == 0:
        return dict.fromkeys(SCRIPT[0], 0.0), 0.0
    rows = ["time,tenant,class,gpus"]
    rows += [f"{i * 3600},{team},batch,{gpus}" for i, step in enumerate(SCRIPT[:steps]) for team, gpus in step.items()]
    quotas = {team.name: Quota(4) for team in SCRIPT_TEAMS}
    result = replay(read_demand("\n".join(rows) + "\n", "script"), {"batch": Sharing(True, quotas, 8, 0, 0.0)})
    return {team: outcome.gpu_hours_served for team, outcome in result.teams.items()}, result.total.preemptions


def _admitted(kube) -> dict[str, int]:
    return {
        team: sum(1 for w in kube.list(*WORKLOADS, namespace=team) if _condition(w, "Admitted").get("status") == "True")
        for team in SCRIPT[0]
    }


def _preempted(kube) -> set[str]:
    return {
        w["metadata"]["name"]
        for team in SCRIPT[0]
        for w in kube.list(*WORKLOADS, namespace=team)
        if _condition(w, "Evicted").get("reason") == "Preempted" or _condition(w, "Preempted").get("status") == "True"
    }


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    with _kueue_over(tmp_path_factory.mktemp("kueue-script"), SCRIPT_TEAMS) as kube:
        yield kube


def test_the_replays_model_of_admission_is_what_kueue_decides_on_a_scripted_history(scripted):
    kube = scripted
    jobs: dict[str, list[str]] = {team: [] for team in SCRIPT[0]}
    made = 0
    preempted: set[str] = set()
    for step, demand in enumerate(SCRIPT, start=1):
        for team, wanted in demand.items():
            while len(jobs[team]) < wanted:
                made += 1
                jobs[team].append(f"job-{made}")
                assert kube.create(_job(team, jobs[team][-1], 1)).allowed
            admitted = {
                next(o["name"] for o in w["metadata"]["ownerReferences"] if o["kind"] == "Job")
                for w in kube.list(*WORKLOADS, namespace=team)
                if _condition(w, "Admitted").get("status") == "True"
            }
            while len(jobs[team]) > wanted:
                leaving = next((j for j in reversed(jobs[team]) if j in admitted), jobs[team][-1])
                jobs[team].remove(leaving)
                assert kube.delete("batch/v1", "Job", leaving, namespace=team, dependents=True).allowed
        (served, expected_preempted), (before, _) = _replayed(step), _replayed(step - 1)
        expected = {team: round(served[team] - before[team]) for team in served}  # this step's hour

        def settled(expected=expected):
            """Kueue's admitted GPUs per team equal to the model's, and still so a moment later"""
            if _admitted(kube) != expected:
                return False
            time.sleep(3)
            return _admitted(kube) == expected

        try:
            _until(settled, 60)
        except AssertionError:
            raise AssertionError(
                f"step {step}: Kueue admitted {_admitted(kube)}, the model serves {expected}"
            ) from None
        preempted |= _preempted(kube)
        assert len(preempted) == round(expected_preempted), (step, preempted, expected_preempted)
