"""The teams' pod rules written once (seedance_client/pod_admission.py): the client's Python verdict and the
platform's CEL (evaluated by cel-python as the API server would) deny the same pods with the same messages,
and the rules a team's client rebuilds from the platform's contract are the policy the platform declares.
The same cases meet the real API server in tests/engines/test_tenants.py."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedance_client.contract import read_contract
from seedance_client.pod_admission import (
    POOL_TAINT_KEY,
    SYSTEM_TAINT_KEY,
    PodRules,
    cost_label_refusals,
    cost_label_validation,
    pod_policy,
    pod_refusals,
)
from seedance_client.team_rules import tenant_pod_rules
from tests.admission import denials
from tests.infra.test_contract import _outputs
from tests.infra.test_tenant_isolation import POD_CASES, policy_spec

CLASSES = {"online": "seedance-online", "batch": "seedance-batch"}
RULES = PodRules("video-ml", CLASSES, ("batch", "online"), {"batch": "batch", "train": "batch", "serve": "online"})
CREATE = {"operation": "CREATE", "userInfo": {"username": "system:serviceaccount:kube-system:job-controller"}}


def stored(value):
    """A pod as the API server hands it to admission: null fields and empty strings (the pod's string fields
    are `omitempty`) are not there (a review of stop 63 found `operator: ""` judged apart)."""
    if isinstance(value, dict):
        return {k: stored(v) for k, v in value.items() if v is not None and v != ""}
    if isinstance(value, list):
        return [stored(v) if v is not None else {} for v in value]
    return value


def cel_refusals(rules: PodRules, spec: dict) -> list[str]:
    variables, validations = pod_policy(rules)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": stored(spec)}
    found = denials({"variables": variables, "validations": validations}, CREATE, pod)
    assert found is not None
    return found


@pytest.mark.parametrize("pod, allowed", POD_CASES)
def test_the_client_and_the_policy_judge_the_isolation_cases_alike(pod, allowed):
    rules = PodRules("video-ml", CLASSES, ("batch",), {"batch": "batch", "train": "batch"})
    assert pod_refusals(rules, pod["spec"]) == cel_refusals(rules, pod["spec"])
    assert (pod_refusals(rules, pod["spec"]) == []) is allowed


KEYS = st.sampled_from([None, "", SYSTEM_TAINT_KEY, POOL_TAINT_KEY, "nvidia.com/gpu", "example.com/other"])
TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": KEYS,
        "operator": st.sampled_from(["Equal", "Exists", "", None]),
        "value": st.sampled_from(["batch", "train", "serve", "h100", "true", ""]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
    },
)
SPEC = st.fixed_dictionaries(
    {"containers": st.just([{"name": "c", "image": "x"}])},
    optional={
        "priorityClassName": st.sampled_from(["seedance-batch", "seedance-online", "seedance-platform", "other"]),
        "tolerations": st.lists(TOLERATION, max_size=3),
        "nodeName": st.sampled_from(["", "ip-10-0-0-1.ec2.internal"]),
    },
)


@settings(max_examples=150, deadline=None)
@given(SPEC, st.sampled_from([("batch",), ("online",), ("batch", "online"), ()]))
def test_every_pod_gets_the_same_verdict_and_messages_from_both(spec, classes):
    rules = PodRules("t", CLASSES, classes, dict(RULES.pools))
    assert pod_refusals(rules, spec) == cel_refusals(rules, spec)


def test_an_online_pod_tolerates_online_pools_and_a_batch_pod_the_rest():
    assert pod_refusals(RULES, {"priorityClassName": "seedance-online", "tolerations": [_pool("serve")]}) == []
    assert pod_refusals(RULES, {"priorityClassName": "seedance-batch", "tolerations": [_pool("train")]}) == []
    assert pod_refusals(RULES, {"priorityClassName": "seedance-online", "tolerations": [_pool("train")]}) == [
        RULES.toleration_message()
    ]
    assert pod_refusals(RULES, {"priorityClassName": "seedance-batch", "tolerations": [_pool("serve")]}) == [
        RULES.toleration_message()
    ]


def _pool(name):
    return {"key": POOL_TAINT_KEY, "operator": "Equal", "value": name, "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "labels, namespace_team, allowed",
    [({"team": "video-ml"}, "video-ml", True), ({"team": "speech-ml"}, "video-ml", False), ({}, "video-ml", False)],
)
def test_the_cost_label_is_judged_alike(labels, namespace_team, allowed):
    tenant_label = "seedance.io/tenant"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": labels}, "spec": {}}
    namespace = {"metadata": {"labels": {tenant_label: namespace_team}}}
    cel = denials({"validations": [cost_label_validation(tenant_label)]}, CREATE, pod, namespace_object=namespace)
    assert cost_label_refusals(namespace_team, labels) == cel
    assert (cel == []) is allowed


def test_the_rules_a_team_reads_from_the_contract_are_the_policy_the_platform_declares(plan_of):
    plan = plan_of("prod")  # the stack with tenants
    contract = read_contract(_outputs(plan), "prod")
    assert contract.tenants
    for tenant in contract.tenants:
        declared = policy_spec(plan, f"seedance-tenant-{tenant.name}-pods")
        variables, validations = pod_policy(tenant_pod_rules(contract, tenant.name))
        assert (declared["variables"], declared["validations"]) == (variables, validations), tenant.name


def test_a_contract_before_1_5_gives_the_platforms_default_pools(plan_of):
    """Contract 1.4 had no tenant pools: the client takes every pool of the classes the team has GPUs in."""
    plan = plan_of("prod")
    outputs = _outputs(plan)
    older = {**outputs, "tenants": [{k: v for k, v in t.items() if k != "pools"} for t in outputs["tenants"]]}
    contract = read_contract(older, "prod")
    for tenant in contract.tenants:
        rules = tenant_pod_rules(contract, tenant.name)
        assert set(rules.pools) == {p.name for p in contract.gpu_pools if p.workload_class in rules.classes}


def test_a_tenants_own_pool_list_in_the_contract_narrows_its_pods(plan_of):
    outputs = _outputs(plan_of("prod"))
    batch = sorted(p["name"] for p in outputs["gpu_pools"] if p["workload_class"] == "batch")
    assert len(batch) > 1
    narrowed = {**outputs, "tenants": [{**t, "pools": batch[:1]} for t in outputs["tenants"]]}
    contract = read_contract(narrowed, "prod")
    rules = tenant_pod_rules(contract, contract.tenants[0].name)
    assert pod_refusals(rules, {"priorityClassName": "seedance-batch", "tolerations": [_pool(batch[0])]}) == []
    assert pod_refusals(rules, {"priorityClassName": "seedance-batch", "tolerations": [_pool(batch[1])]}) == [
        rules.toleration_message()
    ]
