"""The real Kueue decides (issue 51, item 8): its controller, built from its module at the chart's version, on a
real API server, over the queues the program derives for two teams sharing one flavor of 8 GPUs, 4 each.
A team's job beyond its quota borrows the other's idle GPUs; the other team's job within its quota takes
them back by preempting the borrower; a gang larger than the cohort is admitted in no part."""

from __future__ import annotations

import time

import pytest

from components.tenancy.config import QueuesConfig, TenantConfig
from components.tenancy.manifests import TENANT_LABEL
from components.tenancy.queues import QUEUE_LABEL, Flavor, queue_manifests
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


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kueue")
    with control_plane(folder / "plane", "1.35") as plane:
        for crd in (o for o in _rendered() if o["kind"] == "CustomResourceDefinition"):
            assert plane.kube.apply(crd).allowed
            established(plane.kube, crd["metadata"]["name"])
        for team in TEAMS:
            ns = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": team.name, "labels": {TENANT_LABEL: team.name}},
            }
            assert plane.kube.apply(ns).allowed
        manifests = queue_manifests(TEAMS, {t.name: ["batch"] for t in TEAMS}, [Flavor("batch", "batch", "spot", 8)])
        for manifest in manifests:
            answer = plane.kube.apply(manifest)
            assert answer.allowed, answer.message
        with running_kueue(plane, folder / "kueue", QueuesConfig()):
            yield plane.kube


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
