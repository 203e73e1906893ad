"""docs/security.md's tenant table against the real authorizer (RBAC, Node) and admission
(ValidatingAdmissionPolicy, NodeRestriction) of the prod stack at its Kubernetes version: each foothold's
attempts made as that identity, with the cases the cel-python tests use (tests/infra/test_tenant_isolation.py),
allowed and denied, and each denial traced to the control the table names."""

from __future__ import annotations

import contextlib

import pytest

from components.compute.labels import NODE_GROUP_LABEL, POOL_TAINT_KEY
from components.compute.pool_identity import POLICY_NAME as POOL_IDENTITY_POLICY
from components.storage.manifests import PV_POLICY
from components.tenancy.manifests import TENANT_ROLE
from seedance_client.contract import read_contract
from seedance_client.pod_admission import cost_label_refusals, pod_refusals
from seedance_client.team_rules import tenant_pod_rules
from tests.engines.kube import Identity
from tests.engines.stack_objects import kubelet, node_object, team_people
from tests.infra.test_tenant_isolation import (
    ISOLATION_CASES,
    POD_CASES,
    PV_CASES,
    SERVICE_CASES,
    WORKLOAD_CASES,
    _service,
)

TEAM = "video-ml"
PEOPLE = team_people(TEAM)
JOB_CONTROLLER = Identity(
    "system:serviceaccount:kube-system:job-controller",
    ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"),
)


@pytest.fixture(scope="module")
def prod(applied):
    result = applied("prod")
    assert result.refused() == {}
    return result


def _split(resource: str) -> tuple[str, str]:
    name, _, sub = resource.partition("/")
    return name, sub


@pytest.mark.parametrize("verb, resource, group", ISOLATION_CASES)
def test_a_teams_people_cannot_touch_their_isolation(prod, verb, resource, group):
    name, sub = _split(resource)
    for namespace in ("video-api", "video-train"):
        assert not prod.plane.kube.can(PEOPLE, verb, name, namespace=namespace, group=group, subresource=sub)


@pytest.mark.parametrize("verb, resource, group", WORKLOAD_CASES)
def test_a_teams_people_run_and_debug_their_workloads(prod, verb, resource, group):
    name, sub = _split(resource)
    assert prod.plane.kube.can(PEOPLE, verb, name, namespace="video-train", group=group, subresource=sub)
    assert not prod.plane.kube.can(PEOPLE, verb, name, namespace="kube-system", group=group, subresource=sub)


@pytest.mark.parametrize("spec, allowed", SERVICE_CASES)
def test_a_teams_services_stay_inside_the_cluster(prod, spec, allowed):
    answer = prod.plane.kube.create(_service(**spec), identity=PEOPLE, dry_run=True)
    assert answer.allowed is allowed, answer.message
    assert allowed or answer.denied_by(f"{TENANT_ROLE}-services"), answer.message


@pytest.mark.parametrize("pod, allowed", POD_CASES)
def test_a_teams_pods_name_their_class_and_tolerate_their_pools_only(prod, pod, allowed):
    # With the team's cost label, which another policy asks of every team pod (seedance-tenant-cost-labels).
    labelled = {**pod, "metadata": {**pod["metadata"], "labels": {"team": TEAM}}}
    answer = prod.plane.kube.create(labelled, identity=JOB_CONTROLLER, dry_run=True)
    assert answer.allowed is allowed, answer.message
    assert allowed or answer.denied_by(f"{TENANT_ROLE}-{TEAM}-pods"), answer.message
    # A team's `seedance check` says what the API server said, from the contract the platform exports.
    rules = tenant_pod_rules(read_contract(dict(prod.plan.outputs), "prod"), TEAM)
    client = pod_refusals(rules, labelled["spec"]) + cost_label_refusals(TEAM, labelled["metadata"]["labels"])
    assert (client == []) is answer.allowed
    assert allowed or client[0] in answer.message, (client, answer.message)  # the server names the first


def test_a_team_cannot_mint_a_service_account_token(prod):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t", "namespace": "video-api"}}
    token = {
        **secret,
        "type": "kubernetes.io/service-account-token",
        "metadata": {**secret["metadata"], "annotations": {"kubernetes.io/service-account.name": "default"}},
    }
    minted = prod.plane.kube.create(token, identity=PEOPLE, dry_run=True)
    assert minted.denied_by(f"{TENANT_ROLE}-token-secrets"), minted.message
    assert prod.plane.kube.create({**secret, "type": "Opaque"}, identity=PEOPLE, dry_run=True).allowed


@contextlib.contextmanager
def _grown_rbac(prod, namespace: str, subject: dict | None = None):
    """The team's group (or `subject`) bound to cluster-admin in one of its namespaces: RBAC grown past the
    tenant role."""
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "grown", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [
            subject or {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": f"seedance-tenant-{TEAM}"}
        ],
    }
    assert prod.plane.kube.apply(binding).allowed
    try:
        yield
    finally:
        prod.plane.kube.delete("rbac.authorization.k8s.io/v1", "RoleBinding", "grown", namespace=namespace)


def test_the_platforms_objects_in_a_teams_namespace_are_beyond_the_team_even_with_grown_rbac(prod):
    kube = prod.plane.kube
    (policy,) = kube.list("networking.k8s.io/v1", "NetworkPolicy", namespace="video-api")[:1] or [None]
    assert policy is not None, "the team namespace has no network policy to protect"
    name = policy["metadata"]["name"]
    with _grown_rbac(prod, "video-api"):
        assert kube.can(PEOPLE, "delete", "networkpolicies", namespace="video-api", group="networking.k8s.io")
        deleted = kube.delete(
            "networking.k8s.io/v1", "NetworkPolicy", name, namespace="video-api", identity=PEOPLE, dry_run=True
        )
        patched = kube.patch(
            "networking.k8s.io/v1",
            "NetworkPolicy",
            name,
            {"spec": {"ingress": [{}]}},
            namespace="video-api",
            identity=PEOPLE,
            dry_run=True,
        )
        quota = {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "more", "namespace": "video-api"},
            "spec": {"hard": {"requests.nvidia.com/gpu": "64"}},
        }
        created = kube.create(quota, identity=PEOPLE, dry_run=True)
    for answer in (deleted, patched, created):
        assert answer.denied_by(f"{TENANT_ROLE}-platform-objects"), answer.message
    # A team's pods' service account, given the same grown RBAC: the team's too (issue 53 item 4).
    runner = Identity(
        "system:serviceaccount:video-api:runner",
        ("system:serviceaccounts", "system:serviceaccounts:video-api", "system:authenticated"),
    )
    with _grown_rbac(prod, "video-api", subject={"kind": "ServiceAccount", "name": "runner", "namespace": "video-api"}):
        assert kube.can(runner, "delete", "networkpolicies", namespace="video-api", group="networking.k8s.io")
        by_account = kube.delete(
            "networking.k8s.io/v1", "NetworkPolicy", name, namespace="video-api", identity=runner, dry_run=True
        )
    assert by_account.denied_by(f"{TENANT_ROLE}-platform-objects"), by_account.message
    # The deployer keeps them.
    assert kube.delete("networking.k8s.io/v1", "NetworkPolicy", name, namespace="video-api", dry_run=True).allowed


@pytest.mark.parametrize("user, pv, allowed", PV_CASES)
def test_a_persistent_volume_is_an_ebs_volume_or_a_provisioners_disk(prod, user, pv, allowed):
    # Authorised as cluster-admin, so that only admission decides, judged by the user's name.
    identity = Identity(user, ("system:masters", "system:authenticated"))
    answer = prod.plane.kube.create(pv, identity=identity, dry_run=True)
    assert answer.allowed is allowed, answer.message
    # A few shapes the API server's own validation refuses before admission (a '..' in a local path, a local
    # volume without node affinity): the policy is the second line there.
    assert allowed or answer.denied_by(PV_POLICY) or answer.reason == "Invalid", answer.message


def _with_pool_taint(node: dict, pool, **changed) -> dict:
    """The node with its pool's taint changed (its value or effect), the other taints as the pool has them."""
    node["spec"]["taints"] = [t if t["key"] != POOL_TAINT_KEY else {**t, **changed} for t in pool.taints]
    return node


def test_a_kubelet_registers_its_node_only_as_its_own_pool(prod):
    batch, online = prod.pools["batch"], prod.pools["online"]
    kube = prod.plane.kube
    # A batch node's kubelet calling its node online (Triton's pool), by labels or by taint.
    as_online = node_object("prod-batch-posing", online)
    answer = kube.create(as_online, identity=kubelet("prod-batch-posing", batch.role_arn), dry_run=True)
    assert answer.denied_by(POOL_IDENTITY_POLICY), answer.message
    taint_only = _with_pool_taint(node_object("prod-batch-tainted", batch), batch, value="online")
    answer = kube.create(taint_only, identity=kubelet("prod-batch-tainted", batch.role_arn), dry_run=True)
    assert answer.denied_by(POOL_IDENTITY_POLICY), answer.message
    # The same node under its own role registers.
    own = node_object("prod-online-new", online)
    assert kube.create(own, identity=kubelet("prod-online-new", online.role_arn), dry_run=True).allowed


def test_a_kubelet_cannot_call_its_node_another_pool_through_the_status_subresource(prod):
    """A one-line bug review found no engine test sending the kubelet's own status route: the pool identity
    policy must judge `nodes/status` too, or a batch node relabels itself online and draws Triton's pods."""
    batch_node, batch = prod.nodes["batch"], prod.pools["batch"]
    answer = prod.plane.kube.patch(
        "v1",
        "Node",
        batch_node,
        {"metadata": {"labels": {NODE_GROUP_LABEL: "online"}}},
        identity=kubelet(batch_node, batch.role_arn),
        dry_run=True,
        subresource="status",
    )
    assert answer.denied_by(POOL_IDENTITY_POLICY), answer.message


def test_a_pool_node_keeps_its_taint_at_no_schedule(prod):
    """docs/security.md: a pool's node keeps its taint. Softened to PreferNoSchedule, other classes' pods land
    there; no test caught that before the review."""
    batch = prod.pools["batch"]
    for effect in ("PreferNoSchedule", "NoExecute"):
        node = _with_pool_taint(node_object("prod-batch-soft", batch), batch, effect=effect)
        answer = prod.plane.kube.create(node, identity=kubelet("prod-batch-soft", batch.role_arn), dry_run=True)
        assert answer.denied_by(POOL_IDENTITY_POLICY), (effect, answer.message)


def test_a_team_reads_no_secret_of_the_triton_namespaces_it_observes(prod):
    """A publishing team sees its Triton set's pods, never its Secrets (the admin key among them)."""
    kube = prod.plane.kube
    namespaces = [
        n["metadata"]["name"] for n in kube.list("v1", "Namespace") if n["metadata"]["name"].startswith("triton-")
    ]
    assert any(kube.can(PEOPLE, "get", "pods", namespace=ns) for ns in namespaces), "the team observes no Triton set"
    for namespace in namespaces:
        for verb in ("get", "list", "watch"):
            assert not kube.can(PEOPLE, verb, "secrets", namespace=namespace), (verb, namespace)


def test_a_kubelet_with_no_pool_role_carries_no_pool(prod):
    kube = prod.plane.kube
    system = Identity("system:node:prod-system-1", ("system:nodes", "system:authenticated"))
    plain = node_object("prod-system-1", prod.pools["batch"])
    plain["metadata"]["labels"] = {"kubernetes.io/hostname": "prod-system-1"}
    plain["spec"]["taints"] = []
    assert kube.create(plain, identity=system, dry_run=True).allowed
    posing = node_object("prod-system-1", prod.pools["batch"])
    answer = kube.create(posing, identity=system, dry_run=True)
    assert answer.denied_by(POOL_IDENTITY_POLICY), answer.message


def test_a_kubelet_cannot_relabel_another_pools_node(prod):
    """NodeRestriction: a kubelet writes its own Node only."""
    batch_node, online = prod.nodes["batch"], prod.pools["online"]
    answer = prod.plane.kube.patch(
        "v1",
        "Node",
        batch_node,
        {"metadata": {"labels": {"x": "y"}}},
        identity=kubelet("prod-online-0", online.role_arn),
        dry_run=True,
    )
    assert not answer.allowed and answer.status == 403, answer.message
