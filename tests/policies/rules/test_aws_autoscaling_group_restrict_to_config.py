"""Pools' groups over prod's plan with the stack config: the program's groups pass; another type, a raised
maximum or minimum, a pool the config lacks, a suspended Terminate and an instance lifetime fail."""

import copy
from dataclasses import replace

import pytest

from components.plan.resources import ASG
from policies.expectations import stack_policy_config
from policies.rules.aws_autoscaling_group_restrict_to_config import RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config


def _prod():
    return plan_resources(_stack_plan("prod")), stack_policy_config(stack_config("prod"))[RULE.name]


def _findings(resources, config=None):
    return [message for _, message in RULE.check_stack(resources, {**RULE.defaults(), **(config or {})})]


def _train(resources, edit):
    group = next(r for r in resources if r.type == ASG and r.name.endswith("-train-asg"))
    changed = replace(group, props=copy.deepcopy(group.props))
    edit(changed.props)
    return [changed if r is group else r for r in resources]


def test_prods_groups_are_the_configs():
    resources, expected = _prod()
    assert _findings(resources, expected) == []


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda p: p["mixedInstancesPolicy"]["launchTemplate"]["overrides"].append({"instanceType": "p5.48xlarge"}),
            "the stack config gives pool train g6e.12xlarge",
        ),
        (lambda p: p.update(maxSize=16), "maxSize 16"),
        (lambda p: p.update(minSize=4.0), "minSize 4.0"),
        (
            lambda p: p["tags"].append(
                {
                    "key": "k8s.io/cluster-autoscaler/node-template/label/seedance.io/node-group",
                    "value": "ghost",
                    "propagateAtLaunch": True,
                }
            ),
            "which the stack config does not have",
        ),
    ],
)
def test_with_the_stack_config_a_pools_group_is_held_to_its_types_and_bounds(edit, problem):
    resources, expected = _prod()
    found = _findings(_train(resources, edit), expected)
    assert any(problem in m for m in found), found


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda p: p["suspendedProcesses"].append("Terminate"), "suspends Terminate"),
        (lambda p: p.update(maxInstanceLifetime=86400), "replaces its instances after 86400 s"),
    ],
)
def test_a_group_that_holds_or_recycles_its_nodes_fails_without_the_config(edit, problem):
    resources, _ = _prod()
    assert any(problem in m for m in _findings(_train(resources, edit)))
