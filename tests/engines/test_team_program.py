"""A team's program under the real engine: examples/training-job, unchanged, reads the platform's contract
through a real StackReference on the same file backend, and the real Kubernetes provider applies its objects
as the team's people to the prod stack's control plane, where the platform's RBAC and admission judge them
and the Job's pods. The platform stack here exports the prod plan's contract with the cluster facts of the
local control plane (its endpoint, its CA): the AWS half that would write them stays under mocks."""

from __future__ import annotations

import time

import pytest

from tests.engines.pulumi_engine import engine_home, exporting, kubeconfig_for, running, stack
from tests.engines.stack_objects import team_people
from tests.stacks import REPO

TEAM = "video-ml"
NAMESPACE = "video-train"


@pytest.fixture(scope="module")
def platform(applied, engine_dir):
    prod = applied("prod")
    assert prod.refused() == {}
    home = engine_home(engine_dir / "pulumi", prod.plane, team_people(TEAM))
    outputs = dict(prod.plan.outputs)
    outputs["cluster_endpoint"] = prod.plane.server
    outputs["kubeconfig"] = type(outputs["kubeconfig"])(
        kubeconfig_for(prod.plane, prod.config.cluster_name, prod.config.region)
    )
    platform_stack = stack(home, "seedance-gpu", "prod", exporting(outputs))
    platform_stack.up(on_output=lambda _: None)
    return prod, home


def _team_stack(home):
    return stack(
        home,
        "training-job",
        "prod",
        running(REPO / "examples" / "training-job"),
        {
            "training-job:platform_stack": "organization/seedance-gpu/prod",
            "training-job:image": "nvcr.io/nvidia/pytorch:25.10-py3",
            "training-job:gpus": "1",
            "training-job:team": TEAM,
            "training-job:cost_center": "cc-video-7100",
            "training-job:pool": "train",
            "training-job:namespace": NAMESPACE,
        },
    )


def test_a_teams_job_deploys_through_the_platforms_contract_and_admission(platform):
    prod, home = platform
    team = _team_stack(home)
    result = team.up(on_output=lambda _: None)
    assert result.summary.result == "succeeded"
    assert result.outputs["job"].value == f"{NAMESPACE}/train"
    kube = prod.plane.kube
    assert kube.get("batch/v1", "Job", "train", namespace=NAMESPACE) is not None
    # The job controller's pod passes the platform's pod policies (class, pools, cost label) or the Job
    # says why not.
    deadline = time.monotonic() + 60
    pods: list = []
    while not pods and time.monotonic() < deadline:
        pods = [
            p
            for p in kube.list("v1", "Pod", namespace=NAMESPACE)
            if p["metadata"].get("labels", {}).get("job-name") == "train"
        ]
        time.sleep(1)
    events = [e["message"] for e in kube.list("v1", "Event", namespace=NAMESPACE) if e["reason"] == "FailedCreate"]
    assert pods, events


def test_a_second_up_of_the_teams_program_changes_nothing(platform):
    _, home = platform
    team = _team_stack(home)
    team.up(on_output=lambda _: None)
    again = team.up(on_output=lambda _: None)
    assert set(again.summary.resource_changes) == {"same"}, again.summary.resource_changes
