"""The stack key as the program writes it passes in every stack (the account administers; Auto Scaling,
Budgets and CloudWatch Logs use it, Auto Scaling's grants only for AWS resources); handing a team's role
PutKeyPolicy through a wildcard fails."""

import json
from dataclasses import replace

import pytest

from policies.rules.aws_kms_key_restrict_key_policy import RULE as KEY_POLICY
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_stack_key_passes_and_a_wildcard_for_a_team_fails(stack):
    plan = plan_resources(_stack_plan(stack))
    assert list(KEY_POLICY.check_stack(plan, KEY_POLICY.defaults())) == []
    key = next(r for r in plan if r.type == "aws:kms/key:Key")
    document = json.loads(key.props["policy"])
    account = document["Statement"][0]["Principal"]["AWS"].split(":")[4]
    team = f"arn:aws:iam::{account}:role/team"
    document["Statement"].append({"Effect": "Allow", "Principal": {"AWS": team}, "Action": "kms:P*", "Resource": "*"})
    edited = replace(key, props={**key.props, "policy": json.dumps(document)})
    found = list(KEY_POLICY.check_stack([edited if r is key else r for r in plan], KEY_POLICY.defaults()))
    assert [urn for urn, _ in found] == [key.urn] and f"lets {team} kms:putkeypolicy" in found[0][1]
