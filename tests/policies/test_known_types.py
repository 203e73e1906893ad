"""The gate's list of the types it can judge: each entry true to the rules it names, and every type the
stacks deploy (their charts' objects included) on it."""

import pytest

from policies.known_types import KNOWN_TYPES, NOTHING_TO_JUDGE, REMOVED_API_VERSIONS, kubernetes_api, removed_in
from policies.rules import ALL_RULES
from seedance.check_command import plan_resources, rendered_releases
from tests.conftest import _stack_plan
from tests.stacks import stack_config

RULES = {rule.name: rule for rule in ALL_RULES}


def test_each_entry_names_rules_that_judge_its_type_or_says_why_nothing_needs_to():
    for token, names in KNOWN_TYPES.items():
        assert names or token in NOTHING_TO_JUDGE, token
        for name in names:
            rule = RULES[name]
            if rule.check_resource is not None and rule.narrowed:
                assert rule.judges(token), f"{name} does not judge {token}"
            else:
                assert rule.check_stack is not None, f"{name} judges no type by itself"
    assert set(NOTHING_TO_JUDGE) == {token for token, names in KNOWN_TYPES.items() if not names}


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_type_the_stacks_deploy_is_on_the_list(stack):
    resources = plan_resources(_stack_plan(stack))
    rendered, unrendered = rendered_releases(resources, stack_config(stack).cluster.kubernetes_version)
    assert unrendered == []
    assert sorted({r.type for r in (*resources, *rendered)} - set(KNOWN_TYPES)) == []


def test_a_removed_api_version_is_served_until_its_minor_and_not_from_it():
    assert REMOVED_API_VERSIONS[("policy/v1beta1", "PodDisruptionBudget")][0] == "1.25"
    assert removed_in("kubernetes:policy/v1beta1:PodDisruptionBudget", "1.24") is None
    assert removed_in("kubernetes:policy/v1beta1:PodDisruptionBudget", "1.25") == ("1.25", "policy/v1")
    assert removed_in("kubernetes:flowcontrol.apiserver.k8s.io/v1beta3:FlowSchema", "1.31") is None
    assert removed_in("kubernetes:flowcontrol.apiserver.k8s.io/v1beta3:FlowSchema", "1.36")[0] == "1.32"
    assert removed_in("kubernetes:policy/v1:PodDisruptionBudget", "1.36") is None


def test_core_kinds_are_read_as_their_api_version():
    assert kubernetes_api("kubernetes:core/v1:Pod") == ("v1", "Pod")
    assert kubernetes_api("kubernetes:apps/v1:Deployment") == ("apps/v1", "Deployment")
    assert kubernetes_api("aws:s3/bucket:Bucket") is None


def test_the_engines_default_provider_of_every_package_the_stacks_use_is_on_the_list():
    """The real engine registers a default provider per package (the mock runtime shows none): found by
    `pulumi preview --policy-pack` on the real engine."""
    packages = {r.type.split(":")[0] for stack in ("dev", "prod") for r in _stack_plan(stack).resources}
    packages -= {"pulumi", "seedance"}
    assert packages >= {"aws", "kubernetes", "random", "tls"}
    assert {f"pulumi:providers:{package}" for package in packages} <= set(KNOWN_TYPES)
