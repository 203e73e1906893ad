"""A policy the gate cannot read: mandatory in prod (the positive model), advisory elsewhere; the stacks'
own attachments are all in the copy."""

import pytest

from components.plan.resources import PlanResource
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config

RULE = "aws-iam-policy-require-known-document"


def _levels(stack, extra=()):
    resources = [*plan_resources(_stack_plan(stack)), *extra]
    violations, _ = check(resources, stack, stack_config(stack).region)
    return [(v.level, v.urn) for v in violations if v.policy == RULE]


def _unknown(stack):
    return PlanResource(
        f"urn:pulumi:{stack}::seedance-gpu::aws:iam/rolePolicyAttachment:RolePolicyAttachment::new",
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "new",
        {"role": "x", "policyArn": "arn:aws:iam::aws:policy/SomethingNew"},
    )


@pytest.mark.parametrize("stack, level", [("dev", "advisory"), ("staging", "advisory"), ("prod", "mandatory")])
def test_an_unknown_policy_fails_prod_and_advises_elsewhere(stack, level):
    assert _levels(stack) == []
    attachment = _unknown(stack)
    assert _levels(stack, [attachment]) == [(level, attachment.urn)]
