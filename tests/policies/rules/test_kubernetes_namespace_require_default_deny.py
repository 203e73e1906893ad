"""Default denies that are enforced: the plan's VPC CNI add-on keeps its network policy agent on, in either
form EKS takes its configuration; off, or left out, every NetworkPolicy is inert (found by an adversarial
review: `enableNetworkPolicy: "false"` passed)."""

import pytest

from components.plan.resources import PlanResource
from policies.framework import run_rules
from policies.rules.kubernetes_namespace_require_default_deny import RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan


def _with_cni(values):
    prod = plan_resources(_stack_plan("prod"))
    edited = []
    for resource in prod:
        if resource.type == "aws:eks/addon:Addon" and resource.props.get("addonName") == "vpc-cni":
            props = {k: v for k, v in resource.props.items() if k != "configurationValues"}
            if values is not None:
                props["configurationValues"] = values
            resource = PlanResource(resource.urn, resource.type, resource.name, props)
        edited.append(resource)
    return [f.message for f in run_rules([RULE], edited, {"all": "mandatory"})]


@pytest.mark.parametrize("values", ['{"enableNetworkPolicy": "true"}', "enableNetworkPolicy: true\n"])
def test_the_agent_on_passes_in_json_and_yaml(values):
    assert _with_cni(values) == []


@pytest.mark.parametrize("values", ['{"enableNetworkPolicy": "false"}', "enableNetworkPolicy: false\n", "{}", None])
def test_the_agent_off_or_left_out_is_found(values):
    (finding,) = _with_cni(values)
    assert "network policy agent is off" in finding
