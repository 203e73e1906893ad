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


def _set_tag(key, value):
    def edit(props):
        (tag,) = [t for t in props["tags"] if t["key"] == key]
        tag["value"] = value

    return edit


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu", "8", "resources/nvidia.com/gpu = '8'"),
        ("k8s.io/cluster-autoscaler/node-template/label/seedance.io/workload-class", "online", "workload-class"),
        ("k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa", "0", "vpc.amazonaws.com/efa"),
    ],
    ids=["more-gpus", "another-class", "no-efa"],
)
def test_a_scale_from_zero_template_that_is_not_the_nodes_fails(key, value, said):
    """Issue 49's review, E14: the train group's template said 8 GPUs on 4-GPU nodes; a gang never fit."""
    resources, config = _prod()
    assert _findings(resources, config) == []
    (found,) = _findings(_train(resources, _set_tag(key, value)), config)
    assert "its scale-from-zero template is not its nodes'" in found and said in found


def test_a_template_tag_added_or_dropped_fails():
    resources, config = _prod()

    def add(props):
        props["tags"].append(
            {"key": "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/mig-1g.10gb", "value": "7"}
        )

    (added,) = _findings(_train(resources, add), config)
    assert "mig-1g.10gb = '7', not None" in added

    def drop(props):
        props["tags"] = [t for t in props["tags"] if not t["key"].endswith("node-template/taint/seedance.io/pool")]

    (dropped,) = _findings(_train(resources, drop), config)
    assert "taint/seedance.io/pool = None" in dropped
