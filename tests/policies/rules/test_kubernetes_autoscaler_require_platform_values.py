"""The autoscaler over prod's plan with the stack config: the platform's release passes (its role annotation
and cost labels aside); a changed flag, image, replica count, region, chart version or RBAC, a missing
release, and a group's per-group options tag fail."""

import copy
from dataclasses import replace

import pytest

from components.plan.resources import ASG, HELM_RELEASE
from policies.expectations import stack_policy_config
from policies.rules.kubernetes_autoscaler_require_platform_values import OPTIONS_TAG, RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config


def _prod():
    return plan_resources(_stack_plan("prod")), stack_policy_config(stack_config("prod"))[RULE.name]


def _findings(resources, config=None):
    return [message for _, message in RULE.check_stack(resources, {**RULE.defaults(), **(config or {})})]


def _autoscaler(resources):
    return next(r for r in resources if r.type == HELM_RELEASE and r.props.get("name") == "cluster-autoscaler")


def _with_release(resources, edit):
    found = _autoscaler(resources)
    changed = replace(found, props=copy.deepcopy(found.props))
    edit(changed.props)
    return [changed if r is found else r for r in resources]


def test_prods_autoscaler_is_the_platforms_whatever_its_role_arn():
    resources, expected = _prod()
    assert _findings(resources, expected) == []
    other_role = _with_release(
        resources,
        lambda p: p["values"]["rbac"]["serviceAccount"]["annotations"].update(
            {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/other"}
        ),
    )
    assert _findings(other_role, expected) == []  # the identity rules judge the role


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: p["values"]["extraArgs"].update({"scale-down-utilization-threshold": "0"}),
        lambda p: p["values"]["extraArgs"].update({"ignore-taint": "nvidia.com/gpu"}),
        lambda p: p["values"]["extraArgs"].pop("enable-provisioning-requests"),
        lambda p: p["values"].update(replicaCount=0),
        lambda p: p["values"].update(awsRegion="us-west-2"),
        lambda p: p["values"]["image"].update(repository="docker.io/someone/cluster-autoscaler"),
        lambda p: p["values"]["rbac"].update(
            additionalRules=[{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}]
        ),
    ],
)
def test_with_the_stack_config_any_other_value_fails(edit):
    resources, expected = _prod()
    assert any("values are not the platform's" in m for m in _findings(_with_release(resources, edit), expected))


def test_with_the_stack_config_the_chart_version_and_the_release_itself_are_the_configs():
    resources, expected = _prod()
    older = _with_release(resources, lambda p: p.update(version="9.53.0"))
    assert any("the stack config gives 9.59.0" in m for m in _findings(older, expected))
    gone = [r for r in resources if r is not _autoscaler(resources)]
    assert any("no cluster autoscaler" in m for m in _findings(gone, expected))


def test_a_groups_own_autoscaler_options_fail_with_or_without_the_config():
    resources, expected = _prod()
    group = next(r for r in resources if r.type == ASG and r.name.endswith("-batch-asg"))
    tagged = replace(group, props=copy.deepcopy(group.props))
    tagged.props["tags"].append(
        {"key": f"{OPTIONS_TAG}scaledownunneededtime", "value": "720h", "propagateAtLaunch": True}
    )
    changed = [tagged if r is group else r for r in resources]
    for config in (None, expected):
        assert any("sets the autoscaler's options" in m for m in _findings(changed, config))
