"""Entry into the platform's roles, with the stack config: who the config names for each publisher role,
and nothing for a team's plan (no stack config)."""

import json
from dataclasses import replace

from policies.expectations import stack_policy_config
from policies.rules.aws_iam_role_restrict_platform_role_entry import RULE as ENTRY
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config

RULE = "aws-iam-role-restrict-platform-role-entry"


def _config(stack):
    return {**ENTRY.defaults(), **stack_policy_config(stack_config(stack))[RULE]}


def test_the_config_names_each_publisher_and_operator_role_and_who_enters_each():
    config = stack_config("prod")
    entrants = _config("prod")["role_entrants"]
    assert entrants and all(arns for arns in entrants.values())
    publishers = {r: arns for r, arns in entrants.items() if r.endswith("-publisher")}
    operators = {r: arns for r, arns in entrants.items() if r.endswith("-operator")}
    assert publishers and operators and len(publishers) + len(operators) == len(entrants)
    assert {arn for arns in publishers.values() for arn in arns} <= {
        arn for serving in config.serving for arn in config.publishers_of(serving)
    }
    people = {arn for tenant in config.tenants for arn in tenant.principal_arns}
    assert {arn for arns in operators.values() for arn in arns} <= people  # a team's people, never its CI
    assert not people & {arn for arns in publishers.values() for arn in arns}


def test_the_stacks_plans_pass_and_a_publisher_let_in_by_another_name_fails():
    resources = plan_resources(_stack_plan("prod"))
    assert list(ENTRY.check_stack(resources, _config("prod"))) == []
    publisher = next(r for r in resources if r.type == "aws:iam/role:Role" and r.name.endswith("-publisher"))
    trust = json.loads(publisher.props["assumeRolePolicy"])
    trust["Statement"][0]["Principal"]["AWS"] = "arn:aws:iam::123456789012:root"  # the account: anyone in it
    edited = replace(publisher, props={**publisher.props, "assumeRolePolicy": json.dumps(trust)})
    resources = [edited if r is publisher else r for r in resources]
    found = list(ENTRY.check_stack(resources, _config("prod")))
    assert [urn for urn, _ in found] == [publisher.urn]
    assert "lets arn:aws:iam::123456789012:root assume it" in found[0][1]


def test_a_plan_without_the_stack_config_is_not_judged_for_platform_roles():
    resources = plan_resources(_stack_plan("prod"))
    assert list(ENTRY.check_stack(resources, {**ENTRY.defaults(), "role_entrants": {}})) == []
