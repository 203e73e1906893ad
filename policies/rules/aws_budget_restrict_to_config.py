"""The stack's spending alarm is the config's. The budget rules judge the plan's estimate against
`budget.monthly_usd`, but what acts during the month is AWS's budget, its alerts and the breaker: a budget
whose limit is raised a hundredfold, alerts that reach no one, or the breaker's schedule switched off, and
nothing fires. So:

- always: no EventBridge rule of the plan is switched off (`state` DISABLED, or `isEnabled` false): the
  platform's rules, the breaker's hold among them, are all on;
- with the stack config: no AWS budget of the plan allows more than `budget.monthly_usd` (a cost budget in
  USD), one allows exactly that, and each of `budget.alert_emails` is subscribed by e-mail (to the alert
  topic, or as a budget notification's own subscriber)."""

from typing import Any

from components.plan.resources import BUDGET, EVENT_RULE, listed
from components.plan.resources import SNS_SUBSCRIPTION as SUBSCRIPTION
from components.plan.unknowns import of_types
from policies.framework import Rule


def _amount(value: Any) -> float | None:
    try:
        return float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def check(resources, config):
    for rule in of_types(resources, EVENT_RULE):
        if str(rule.props.get("state", "ENABLED")).upper() == "DISABLED" or rule.props.get("isEnabled") is False:
            yield rule.urn, f"{rule.name}: switched off; the platform's rules run"
    if not config["from_stack_config"]:
        return
    limit, found = float(config["monthly_usd"]), False
    for budget in of_types(resources, BUDGET):
        amount = _amount(budget.props.get("limitAmount"))
        kind = (budget.props.get("budgetType"), budget.props.get("limitUnit"))
        if amount is None or amount > limit or kind != ("COST", "USD"):
            yield (
                budget.urn,
                (
                    f"{budget.name}: a {kind[0]} budget of {budget.props.get('limitAmount')} {kind[1]}; the stack "
                    f"config allows {limit:.2f} USD of cost"
                ),
            )
        found = found or (amount == limit and kind == ("COST", "USD"))
    if not found:
        yield None, f"the plan has no AWS cost budget of the config's {limit:.2f} USD a month"
    # By e-mail through the alert topic, or as a budget notification's own subscriber.
    subscribed = {
        str(s.props.get("endpoint"))
        for s in of_types(resources, SUBSCRIPTION)
        if str(s.props.get("protocol")).lower() == "email"
    } | {
        str(address)
        for budget in of_types(resources, BUDGET)
        for note in listed(budget.props.get("notifications") or [])
        if isinstance(note, dict)
        for address in listed(note.get("subscriberEmailAddresses") or [])
    }
    for email in config["alert_emails"]:
        if email not in subscribed:
            yield None, f"budget alerts reach no e-mail subscription for {email}, which the stack config names"


RULE = Rule(
    name="aws-budget-restrict-to-config",
    description="No EventBridge rule is switched off; with the stack config, no budget allows more than the "
    "config's, one allows exactly it, and every alert e-mail is subscribed.",
    severity="critical",
    remediation="Change the budget through the stack config (budget.monthly_usd, budget.alert_emails).",
    topics=("cost",),
    config={
        "from_stack_config": {"type": "boolean", "default": False},
        "monthly_usd": {"type": "number", "default": 0},
        "alert_emails": {"type": "array", "items": {"type": "string"}, "default": []},
    },
    check_stack=check,
    standards=("AWS Well-Architected: Cost Optimization - COST01 (budgets and forecasts)",),
)
