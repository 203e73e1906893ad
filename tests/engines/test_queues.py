"""The teams' queues on a real API server, with Kueue's CRDs from its pinned chart rendered by Helm's engine:
every flavor, ClusterQueue and LocalQueue the program derives is admitted by the CRDs' own schemas and CEL
rules, and Kueue's webhooks, as the chart renders them with the platform's values, fail closed in team
namespaces only. (Kueue's controller itself does not run here: its admission decisions are issue 51's
next step.)"""

from __future__ import annotations

import time

import pytest
import yaml

from components.compute.priority import PRIORITY_CLASS, priority_classes
from components.tenancy.config import QueuesConfig, TenantConfig
from components.tenancy.manifests import TENANT_LABEL
from components.tenancy.queues import (
    JOB_CONTROLLER,
    KUEUE_CHART,
    KUEUE_NAMESPACE,
    QUEUED_JOBS_POLICY,
    QUEUED_PODS_POLICY,
    Flavor,
    kueue_configuration,
    kueue_values,
    queue_admission_policies,
    queue_manifests,
)
from seedance import charts
from seedance_client.contract import GPU_RESOURCE, QUEUE_LABEL
from tests.engines.kube import Identity
from tests.engines.stack_objects import POLICY, established, type_checked

MINOR = "1.35"
PEOPLE = "arn:aws:iam::123456789012:role/people"


def _rendered() -> list[dict]:
    release = {"name": "kueue", "namespace": KUEUE_NAMESPACE, "chart": KUEUE_CHART, "version": "0.19.2"}
    return charts.render({**release, "values": kueue_values(QueuesConfig(), provisioning=False)}, MINOR)


def test_kueue_renders_the_platforms_configuration_and_fails_closed_in_team_namespaces_only():
    rendered = _rendered()
    config_map = next(
        o for o in rendered if o["kind"] == "ConfigMap" and "controller_manager_config.yaml" in o.get("data", {})
    )
    configured = yaml.safe_load(config_map["data"]["controller_manager_config.yaml"])
    # The chart adds its own certificate management (the webhook's service and secret names) and keeps the rest.
    assert configured.pop("internalCertManagement")["enable"] is True
    assert configured == kueue_configuration(QueuesConfig())
    team_selector = {"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]}
    hooks = {
        hook["name"]: hook
        for o in rendered
        if o["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        for hook in o["webhooks"]
    }
    for name in ("mjob.kb.io", "vjob.kb.io", "mjobset.kb.io", "vjobset.kb.io"):
        assert hooks[name]["failurePolicy"] == "Fail", name
        assert hooks[name]["namespaceSelector"] == team_selector, name
    deployment = next(o for o in rendered if o["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["priorityClassName"] == "system-cluster-critical"
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.k8s.io/kueue/kueue:v0.19.2"


def test_the_teams_queues_are_admitted_by_kueues_own_schemas(plane_of):
    kube = plane_of(MINOR).kube
    for crd in (o for o in _rendered() if o["kind"] == "CustomResourceDefinition"):
        assert kube.apply(crd).allowed, crd["metadata"]["name"]
        established(kube, crd["metadata"]["name"])
    tenants = [
        TenantConfig(name="vision", principal_arns=[PEOPLE], namespaces=["vision-a", "vision-b"], gpus={"batch": 12}),
        TenantConfig(
            name="speech", principal_arns=[PEOPLE], gpus={"batch": 8, "online": 2}, gpu_lending_limits={"batch": 4}
        ),
    ]
    offered = [
        Flavor("batch", "batch", "reserved", 8),
        Flavor("batch", "batch", "spot", 16),
        Flavor("online", "online", "on-demand", 4),
    ]
    for tenant in tenants:
        for namespace in tenant.namespace_names:
            ns = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace, "labels": {TENANT_LABEL: tenant.name}},
            }
            assert kube.apply(ns).allowed
    manifests = queue_manifests(tenants, {"vision": ["batch"], "speech": ["batch", "online"]}, offered)
    assert {m["kind"] for m in manifests} == {"ResourceFlavor", "ClusterQueue", "LocalQueue"}
    for manifest in manifests:
        answer = kube.apply(manifest, strict=True)  # a field Kueue's v1beta2 does not know is refused too
        assert answer.allowed, (manifest["kind"], manifest["metadata"]["name"], answer.message)


def test_kueues_schemas_refuse_what_they_would_refuse_from_anyone(plane_of):
    """The same server refuses a flavor whose toleration has no key but is not Exists (the CRD's CEL rule):
    the objects above were judged, not waved through."""
    kube = plane_of(MINOR).kube
    for crd in (o for o in _rendered() if o["kind"] == "CustomResourceDefinition"):
        kube.apply(crd)
        established(kube, crd["metadata"]["name"])
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "loose"},
        "spec": {"tolerations": [{"operator": "Equal", "value": "x", "effect": "NoSchedule"}]},
    }
    answer = kube.apply(flavor)
    assert not answer.allowed and "Exists" in answer.message
    # And a v1beta1 spelling in a v1beta2 queue (`cohort`, renamed `cohortName`) is an unknown field.
    queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "old"}}
    answer = kube.apply({**queue, "spec": {"cohort": "seedance-batch"}}, strict=True)
    assert not answer.allowed and "cohort" in answer.message


JOB_CONTROLLER_IDENTITY = Identity(JOB_CONTROLLER, ("system:serviceaccounts", "system:authenticated"))
# RBAC lets a team's people create pods in its namespaces; here, any pod's maker the authorizer lets through.
PERSON = Identity("alice", ("system:masters", "system:authenticated"))


def _gpu_job(namespace: str, queue: str | None) -> dict:
    pod = {
        "metadata": {"labels": {"app": "train"}},
        "spec": {
            "restartPolicy": "Never",
            "priorityClassName": PRIORITY_CLASS["batch"],
            "containers": [{"name": "t", "image": "trainer:1", "resources": {"limits": {GPU_RESOURCE: "1"}}}],
        },
    }
    labels = {QUEUE_LABEL: queue} if queue else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": namespace, "labels": labels},
        "spec": {"template": pod},
    }


QUEUED = "queued-team"


@pytest.fixture
def queue_guards(plane_of):
    """The queue guards on the shared control plane, over a team namespace of their own; removed after (they
    bind every team namespace, and later tests apply stacks without queues on the same server)."""
    kube = plane_of(MINOR).kube
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": QUEUED, "labels": {TENANT_LABEL: QUEUED}},
    }
    guards = queue_admission_policies()
    for manifest in [namespace, *priority_classes(), *guards]:
        assert kube.apply(manifest).allowed, manifest["metadata"]["name"]
    yield kube
    for manifest in [*guards, namespace]:
        kube.delete(manifest["apiVersion"], manifest["kind"], manifest["metadata"]["name"])
    deadline = time.monotonic() + 30
    while kube.get("v1", "Namespace", QUEUED) is not None or any(
        kube.get(*POLICY, name) for name in (QUEUED_JOBS_POLICY, QUEUED_PODS_POLICY)
    ):
        assert time.monotonic() < deadline, "the guards or their namespace outlived the test"
        time.sleep(0.5)


def test_a_teams_jobs_name_their_queues_and_its_batch_gpu_pods_are_the_job_controllers(queue_guards):
    """The queues' admission policies on the server's own CEL: type-checked without warnings, a Job without a
    queue refused and one with a queue admitted, a batch GPU pod refused from a person and admitted from the
    Job controller (what runs a Job Kueue admitted)."""
    kube, namespace = queue_guards, QUEUED
    for name in (QUEUED_JOBS_POLICY, QUEUED_PODS_POLICY):
        assert type_checked(kube, name, 90)["typeChecking"].get("expressionWarnings") is None, name
    # The server enforces a policy once it has seen it and its binding: the first refusal is waited for.
    deadline = time.monotonic() + 30
    while not (refused := kube.create(_gpu_job(namespace, None), dry_run=True)).denied_by(QUEUED_JOBS_POLICY):
        assert time.monotonic() < deadline, refused.message
        time.sleep(0.5)
    assert kube.create(_gpu_job(namespace, "batch"), dry_run=True).allowed
    assert kube.create(_gpu_job(namespace, "another-teams"), dry_run=True).denied_by(QUEUED_JOBS_POLICY)
    owned = _gpu_job(namespace, "batch")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": "Job", "name": "small", "uid": "3f1c2a9e-0000-4000-8000-000000000001"}
    ]
    assert kube.create(owned, dry_run=True).denied_by(QUEUED_JOBS_POLICY)  # Kueue would leave it to its owner
    pod = {"apiVersion": "v1", "kind": "Pod", **_gpu_job(namespace, "batch")["spec"]["template"]}
    pod["metadata"] = {"name": "direct", "namespace": namespace}
    while not (direct := kube.create(pod, identity=PERSON, dry_run=True)).denied_by(QUEUED_PODS_POLICY):
        assert time.monotonic() < deadline, direct.message
        time.sleep(0.5)
    assert kube.create(pod, identity=JOB_CONTROLLER_IDENTITY, dry_run=True).allowed
