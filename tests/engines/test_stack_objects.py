"""The stacks' Kubernetes objects on a real API server at the stack's Kubernetes version: every object
admitted (schema, defaults, RBAC escalation checks, admission), every admission policy type-checked by the
controller manager with no warning, every workload ready on the pools' nodes."""

from __future__ import annotations

import time

import pytest

from tests.engines.stack_objects import object_key, type_checked

STACKS = ("dev", "prod")


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_of_the_stack_is_admitted(applied, stack):
    result = applied(stack)
    assert result.answers, "the plan declares no Kubernetes object"
    assert result.refused() == {}


@pytest.mark.parametrize("stack", STACKS)
def test_every_pool_registers_its_node_under_its_own_role(applied, stack):
    result = applied(stack)
    assert set(result.nodes) == {g.name for g in result.config.gpu_node_groups}
    for pool, node in result.nodes.items():
        labels = result.plane.kube.get("v1", "Node", node)["metadata"]["labels"]
        assert labels["seedance.io/node-group"] == pool


@pytest.mark.parametrize("stack", STACKS)
def test_every_admission_policy_type_checks_without_warnings(applied, stack):
    result = applied(stack)
    names = [
        r.inputs["metadata"]["name"]
        for r in result.plan.of_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    ]
    assert names
    warnings = {
        name: type_checked(result.plane.kube, name, 90)["typeChecking"].get("expressionWarnings") for name in names
    }
    assert {name: found for name, found in warnings.items() if found} == {}


def _ready(kube, manifest: dict) -> bool:
    live = kube.get(
        manifest["apiVersion"],
        manifest["kind"],
        manifest["metadata"]["name"],
        namespace=manifest["metadata"].get("namespace"),
    )
    status = live.get("status", {}) if live else {}
    if manifest["kind"] == "Deployment":
        wanted = live["spec"].get("replicas", 1)
        return status.get("observedGeneration") == live["metadata"]["generation"] and status.get(
            "readyReplicas", 0
        ) == wanted == status.get("updatedReplicas", 0)
    return status.get("desiredNumberScheduled") is not None and status.get("numberReady") == status.get(
        "desiredNumberScheduled"
    )


@pytest.mark.parametrize("stack", STACKS)
def test_every_workload_becomes_ready_on_the_pools_nodes(applied, stack):
    result = applied(stack)
    workloads = [
        m
        for m in (r.inputs for r in result.plan.resources if r.type.startswith("kubernetes:apps/v1:"))
        if m.get("kind") in ("Deployment", "DaemonSet")
    ]
    assert workloads
    deadline = time.monotonic() + 120
    waiting = list(workloads)
    while waiting and time.monotonic() < deadline:
        waiting = [m for m in waiting if not _ready(result.plane.kube, m)]
        time.sleep(1)
    assert [object_key(m) for m in waiting] == []
