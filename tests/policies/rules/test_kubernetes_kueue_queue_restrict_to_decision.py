"""Kueue's objects over staging's own plan (its flavors, from its pools' decisions) with a team's queues as the
program derives them: they pass; a quota beyond what the pool runs, a flavor that tolerates another pool or
the system nodes, and a queue open to any namespace fail."""

import copy
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from components.plan.resources import (
    HELM_RELEASE,
    KUEUE_ADMISSION_CHECK,
    KUEUE_CLUSTER_QUEUE,
    KUEUE_FLAVOR,
    KUEUE_PROVISIONING_CONFIG,
    KUEUE_TOPOLOGY,
)
from components.stack.capacity import RunMode, table_zones
from components.stack.derivation import derive
from components.tenancy.config import TenantConfig
from components.tenancy.manifests import TENANT_LABEL
from policies.expectations import stack_policy_config
from policies.rules.kubernetes_kueue_queue_restrict_to_decision import RULE
from seedance.charts import type_token
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.policies.spellings import resource
from tests.stacks import stack_config

TEAM = TenantConfig(name="vision", principal_arns=["arn:aws:iam::123456789012:role/people"], gpus={"batch": 8})


def _staging():
    """Staging's plan (Kueue and its pools' flavors) with team vision's namespace and queues, as derived."""
    config = stack_config("staging", tenants=[TEAM])
    derived = derive(config, "staging", table_zones(config), Path("stacks"), datetime.now(UTC), RunMode.offline_plan())
    queues = [m for m in derived.queues if m["kind"] != "ResourceFlavor"]  # the plan declares the flavors
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "vision", "labels": {TENANT_LABEL: "vision"}},
    }
    added = [resource(type_token(m), m, f"{m['kind']}-{i}") for i, m in enumerate([namespace, *queues])]
    return [*plan_resources(_stack_plan("staging")), *added]


def _expectations():
    """What the gate judges the queues against: the stack config's (staging with team vision)."""
    return stack_policy_config(stack_config("staging", tenants=[TEAM]))[RULE.name]


def _findings(resources, config=None):
    return [message for _, message in RULE.check_stack(resources, {**RULE.defaults(), **(config or {})})]


def _edited(resources, type_, edit, found=None):
    """The plan with a resource (the first of the type) edited (a deep copy: the cached plan stays as it is)."""
    found = found or next(r for r in resources if r.type == type_)
    changed = replace(found, props=copy.deepcopy(found.props))
    edit(changed.props)
    return [changed if r is found else r for r in resources]


def test_stagings_flavors_and_a_teams_derived_queues_stay_within_its_pools():
    resources = _staging()
    assert any(r.type == KUEUE_CLUSTER_QUEUE for r in resources)
    assert _findings(resources) == []


def test_a_nominal_quota_beyond_the_pools_maximum_fails():
    def grow(props):
        props["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 10_000

    assert any("more than the" in m for m in _findings(_edited(_staging(), KUEUE_CLUSTER_QUEUE, grow)))


@pytest.mark.parametrize(
    "toleration, problem",
    [
        ({"key": "seedance.io/pool", "operator": "Equal", "value": "online", "effect": "NoSchedule"}, "other than"),
        ({"key": "seedance.io/pool", "operator": "Exists", "effect": "NoSchedule"}, "other than"),
        ({"key": "CriticalAddonsOnly", "operator": "Exists"}, "system nodes"),
        ({"operator": "Exists"}, "without a key"),
    ],
)
def test_a_flavor_that_lets_admitted_pods_past_their_pool_fails(toleration, problem):
    def loosen(props):
        props["spec"]["nodeLabels"] = {"seedance.io/node-group": "batch"}
        props["spec"]["tolerations"].append(toleration)

    assert any(problem in m for m in _findings(_edited(_staging(), KUEUE_FLAVOR, loosen)))


@pytest.mark.parametrize(
    "selector",
    [{}, {"matchExpressions": [{"key": "seedance.io/tenant", "operator": "Exists"}]}, {"matchLabels": {}}],
)
def test_a_queue_any_namespace_may_point_at_fails(selector):
    def open_up(props):
        props["spec"]["namespaceSelector"] = selector

    assert any("not one team's" in m for m in _findings(_edited(_staging(), KUEUE_CLUSTER_QUEUE, open_up)))


def test_with_the_stack_config_the_derived_queues_pass_and_kueues_release_is_the_platforms():
    assert _findings(_staging(), _expectations()) == []


@pytest.mark.parametrize(
    "edit, problem",
    [
        # Within the pool, but not the team's 8.
        (lambda p: p["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(nominalQuota=5), "holds 5"),
        # GPUs never counted: the queue covers CPU only.
        (lambda p: p["spec"].update(resourceGroups=[]), "holds 0"),
        (lambda p: p["spec"].update(cohortName="seedance-online"), "not the queue the platform builds"),
        (lambda p: p["spec"]["preemption"].update(borrowWithinCohort={"policy": "LowerPriority"}), "not the queue"),
        # Held: admits nothing, and its nominal GPUs idle for the cohort's borrowers only.
        (lambda p: p["spec"].update(stopPolicy="Hold"), "not the queue"),
        (lambda p: p["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(lendingLimit="0"), "not the"),
        (lambda p: p["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(nominalQuota="1k"), "whole"),
        (lambda p: p["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(nominalQuota=-8), "whole"),
        (
            lambda p: p["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(name="nvidia.com/GPU"),
            "counts",
        ),
    ],
)
def test_with_the_stack_config_a_queue_is_exactly_the_teams(edit, problem):
    messages = _findings(_edited(_staging(), KUEUE_CLUSTER_QUEUE, edit), _expectations())
    assert any(problem in m for m in messages), messages


def test_with_the_stack_config_a_flavor_gives_no_toleration_but_its_pools():
    def loosen(props):
        props["spec"]["tolerations"].append({"key": "node.kubernetes.io/unreachable", "operator": "Exists"})

    messages = _findings(_edited(_staging(), KUEUE_FLAVOR, loosen), _expectations())
    assert any("not a flavor the platform builds" in m for m in messages), messages


def test_with_the_stack_config_kueues_values_are_the_platforms():
    def swap_image(props):
        props["values"]["controllerManager"]["manager"]["image"]["repository"] = "evil.example/kueue"

    plan = _staging()
    releases = [r for r in plan if r.type == HELM_RELEASE and str(r.props.get("chart")).endswith("/kueue")]
    assert releases
    messages = _findings(_edited(plan, HELM_RELEASE, swap_image, releases[0]), _expectations())
    assert any("values are not the platform's" in m for m in messages), messages


def test_a_whole_number_written_as_a_plan_file_writes_it_is_a_count_of_gpus():
    """A plan file's JSON numbers read back as floats (8.0): the same count, not a finding."""

    def as_float(props):
        limits = props["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
        limits["nominalQuota"] = float(limits["nominalQuota"])

    assert _findings(_edited(_staging(), KUEUE_CLUSTER_QUEUE, as_float), _expectations()) == []


@pytest.mark.parametrize(
    "respell",
    [
        # A local path: Helm looks there before the repository, and the platform's values were never compared.
        lambda p: p.update(chart="./kueue", repositoryOpts={"repo": "oci://registry.k8s.io/kueue/charts"}),
        lambda p: p.update(chart="kueue", repositoryOpts={"repo": "oci://registry.k8s.io/kueue/charts"}),
        lambda p: p.update(chart="oci://registry.k8s.io/kueue/charts/kueue/"),
    ],
)
def test_with_the_stack_config_kueue_comes_from_its_chart_as_the_platform_writes_it(respell):
    plan = _staging()
    (release,) = [r for r in plan if r.type == HELM_RELEASE and r.props.get("namespace") == "kueue-system"]
    messages = _findings(_edited(plan, HELM_RELEASE, respell, release), _expectations())
    assert any("as written" in m for m in messages), messages


def _prod():
    """Prod's plan: its EFA pool `train` is multi-node, its flavor behind the gang check."""
    return plan_resources(_stack_plan("prod")), stack_policy_config(stack_config("prod"))[RULE.name]


def test_prods_gang_check_passes_and_a_queue_that_drops_it_from_the_multi_node_flavor_fails():
    resources, expected = _prod()
    assert _findings(resources, expected) == []
    queue = next(r for r in resources if r.type == KUEUE_CLUSTER_QUEUE)
    assert queue.props["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] == [
        "train-on-demand-topology-3"
    ]
    unchecked = _edited(resources, KUEUE_CLUSTER_QUEUE, lambda p: p["spec"].pop("admissionChecksStrategy"))
    assert any("not the queue the platform builds" in m for m in _findings(unchecked, expected))


@pytest.mark.parametrize(
    ("type_", "edit", "problem"),
    [
        (
            KUEUE_ADMISSION_CHECK,
            lambda p: p["spec"].update(controllerName="example.com/admits-anything"),
            "other than Kueue's provisioning check",
        ),
        (
            KUEUE_ADMISSION_CHECK,
            lambda p: p["spec"]["parameters"].update(name="elsewhere"),
            "other than Kueue's provisioning check",
        ),
        (
            KUEUE_PROVISIONING_CONFIG,
            lambda p: p["spec"].update(provisioningClassName="queued-provisioning.gke.io"),
            "asks for nodes in a class other than",
        ),
        (
            KUEUE_PROVISIONING_CONFIG,
            lambda p: p["spec"].update(
                podSetUpdates={"nodeSelector": [{"key": "x", "valueFromProvisioningClassDetail": "y"}]}
            ),
            "rewrites the node selectors",
        ),
    ],
)
def test_an_admission_check_that_is_not_kueues_provisioning_check_fails_without_the_config(type_, edit, problem):
    resources, _ = _prod()
    assert any(problem in m for m in _findings(_edited(resources, type_, edit)))


def test_with_the_stack_config_the_gang_check_is_there_exactly_when_the_config_has_multi_node_pools():
    resources, expected = _prod()
    without = [r for r in resources if r.type != KUEUE_PROVISIONING_CONFIG]
    assert any("has no ProvisioningRequestConfig gang-nodes" in m for m in _findings(without, expected))
    retried = _edited(
        resources, KUEUE_PROVISIONING_CONFIG, lambda p: p["spec"]["retryStrategy"].update(backoffLimitCount=0)
    )
    assert any("not the gang check or topology the platform builds" in m for m in _findings(retried, expected))
    single = {**expected, "gang_pools": []}
    assert any("not the gang check or topology the platform builds" in m for m in _findings(resources, single))


def test_with_the_stack_config_a_multi_node_pools_topology_is_the_platforms():
    """Prod's train reports EC2's three network layers: its flavor names that topology; a changed topology, or
    the pool's flavor without it, fails."""
    resources, expected = _prod()
    assert expected["gang_topologies"] == {"train": 3}
    changed = _edited(resources, KUEUE_TOPOLOGY, lambda p: p["spec"]["levels"].pop(0))
    assert any("not the gang check or topology the platform builds" in m for m in _findings(changed, expected))
    flavor = next(r for r in resources if r.type == KUEUE_FLAVOR and "topologyName" in r.props["spec"])
    unplaced = _edited(resources, KUEUE_FLAVOR, lambda p: p["spec"].pop("topologyName"), found=flavor)
    assert any("not a flavor the platform builds" in m for m in _findings(unplaced, expected))


def test_a_depth_the_pack_reads_as_a_float_is_the_same_topology():
    """Under `pulumi preview` the pack's config comes as JSON numbers, read as floats: 3.0 is depth 3 (the real
    engine's policy host raised on it before)."""
    resources, expected = _prod()
    assert _findings(resources, {**expected, "gang_topologies": {"train": 3.0}}) == []


def test_with_the_stack_config_a_local_queue_is_exactly_the_configs_and_gangs_have_their_api():
    """A LocalQueue's spec whole (a stopPolicy holds or drains the team's jobs); with multi-node pools, the
    ProvisioningRequest API their check asks through."""
    resources, expected = _prod()
    local = next(r for r in resources if r.type == "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")
    held = _edited(resources, local.type, lambda p: p["spec"].update(stopPolicy="HoldAndDrain"), found=local)
    assert any("not a LocalQueue the config gives" in m for m in _findings(held, expected))
    without = [r for r in resources if r.type != "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"]
    assert any("no CustomResourceDefinition provisioningrequests" in m for m in _findings(without, expected))
