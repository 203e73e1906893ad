"""The budget over prod's plan with the stack config: the program's passes; a raised limit, a budget gone, an
alert e-mail unsubscribed and the breaker's hold switched off fail."""

import copy
from dataclasses import replace

from components.plan.resources import BUDGET, EVENT_RULE, SNS_SUBSCRIPTION
from policies.expectations import stack_policy_config
from policies.rules.aws_budget_restrict_to_config import RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config


def _prod():
    return plan_resources(_stack_plan("prod")), stack_policy_config(stack_config("prod"))[RULE.name]


def _findings(resources, config=None):
    return [message for _, message in RULE.check_stack(resources, {**RULE.defaults(), **(config or {})})]


def _edited(resources, type_, suffix, edit):
    found = next(r for r in resources if r.type == type_ and r.name.endswith(suffix))
    changed = replace(found, props=copy.deepcopy(found.props))
    edit(changed.props)
    return [changed if r is found else r for r in resources]


def test_prods_budget_alerts_and_rules_are_the_configs():
    resources, expected = _prod()
    assert expected["monthly_usd"] == 95000 and _findings(resources, expected) == []


def test_a_raised_limit_or_no_budget_fails():
    resources, expected = _prod()
    raised = _edited(resources, BUDGET, "-budget-monthly", lambda p: p.update(limitAmount="9500000.00"))
    assert any("the stack config allows 95000.00 USD" in m for m in _findings(raised, expected))
    gone = [r for r in resources if r.type != BUDGET]
    assert any("no AWS cost budget of the config's 95000.00 USD" in m for m in _findings(gone, expected))


def test_an_alert_email_that_reaches_no_one_fails():
    resources, expected = _prod()
    unsubscribed = [r for r in resources if not (r.type == SNS_SUBSCRIPTION and r.name.endswith("-budget-mail-0"))]
    assert any("reach no e-mail subscription" in m for m in _findings(unsubscribed, expected))


def test_the_breakers_hold_switched_off_fails_with_or_without_the_config():
    resources, expected = _prod()
    for edit in (lambda p: p.update(state="DISABLED"), lambda p: p.update(isEnabled=False)):
        off = _edited(resources, EVENT_RULE, "-breaker-hold", edit)
        for config in (None, expected):
            assert any("switched off" in m for m in _findings(off, config))
