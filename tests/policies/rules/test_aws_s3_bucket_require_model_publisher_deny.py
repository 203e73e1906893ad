"""The model bucket's guards over every stack's plan, with its stack config: each passes as the program
writes it; where the config names no deployer (dev), the settings Deny may except one more role (the
deploying session's) but not two."""

import json
from dataclasses import replace

import pytest

from policies.expectations import stack_policy_config
from policies.rules.aws_s3_bucket_require_model_publisher_deny import RULE as GUARD
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config


def _config(stack):
    return {**GUARD.defaults(), **stack_policy_config(stack_config(stack))[GUARD.name]}


def _with_administrators(stack, change):
    plan = plan_resources(_stack_plan(stack))
    policy = next(r for r in plan if r.type == "aws:s3/bucketPolicy:BucketPolicy" and "models" in r.name)
    document = json.loads(policy.props["policy"])
    for statement in document["Statement"]:
        if statement.get("Sid") == "OnlyAdministratorsChangeTheBucket":
            change(statement["Condition"]["ArnNotEquals"]["aws:PrincipalArn"])
    edited = replace(policy, props={**policy.props, "policy": json.dumps(document)})
    return [edited if r is policy else r for r in plan]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_each_stacks_model_bucket_passes_as_the_program_writes_it(stack):
    assert list(GUARD.check_stack(plan_resources(_stack_plan(stack)), _config(stack))) == []


def test_an_unnamed_deployer_is_one_exception_more_never_two():
    assert not _config("dev")["deployer_named"] and _config("prod")["deployer_named"]
    other = "arn:aws:iam::123456789012:role/someone-else"
    found = list(GUARD.check_stack(_with_administrators("dev", lambda arns: arns.append(other)), _config("dev")))
    assert len(found) == 1 and "everyone but its administrators" in found[0][1]
    found = list(GUARD.check_stack(_with_administrators("prod", lambda arns: arns.append(other)), _config("prod")))
    assert len(found) == 1 and "everyone but its administrators" in found[0][1]
