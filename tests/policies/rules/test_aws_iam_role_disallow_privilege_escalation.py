"""Escalation over the stacks' own plans: every role the program makes passes, the budget breaker's
PassRole of the node roles included, because what it becomes (the node roles) holds no way up; give a node
role one and the breaker escalates with it."""

import json

import pytest

from components.plan.resources import PlanResource
from policies.expectations import stack_policy_config
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config

RULE = "aws-iam-role-disallow-privilege-escalation"


def _judged(resources, stack):
    config = stack_config(stack)
    violations, _ = check(resources, stack, config.region, stack_policy_config(config))
    return [v for v in violations if v.policy == RULE]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_programs_roles_cannot_escalate(stack):
    assert _judged(plan_resources(_stack_plan(stack)), stack) == []


def test_the_breaker_escalates_with_a_node_role_that_can():
    resources = plan_resources(_stack_plan("prod"))
    node_role = next(r for r in resources if r.type == "aws:iam/role:Role" and "online-node-role" in r.name)
    extra = PlanResource(
        "urn:pulumi:prod::seedance-gpu::aws:iam/rolePolicy:RolePolicy::node-extra",
        "aws:iam/rolePolicy:RolePolicy",
        "node-extra",
        {
            "role": node_role.id,
            "policy": json.dumps({"Statement": [{"Effect": "Allow", "Action": "ssm:SendCommand", "Resource": "*"}]}),
        },
    )
    found = {v.message for v in _judged([*resources, extra], "prod")}
    assert any(m.startswith(f"role {node_role.id} can escalate by RunCommandOnNodes") for m in found), found
    breaker = [m for m in found if "breaker-role" in m.split(" can ")[0]]
    assert breaker and f"which it can become), from node-extra of {node_role.id}" in breaker[0]
