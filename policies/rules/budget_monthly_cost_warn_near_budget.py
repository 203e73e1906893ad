"""The estimated monthly cost stays below 85 % of the stack's budget (the source's first breaker step)."""

from components.compute.labels import DEGRADE
from policies.framework import Rule
from policies.rules._budget import BUDGET_CONFIG, budget_findings


def check(resources, config):
    yield from budget_findings(resources, config, config["warn_at"], "above the warning line of", report_unknown=True)


RULE = Rule(
    name="budget-monthly-cost-warn-near-budget",
    description="The stack's estimated monthly cost stays below 85 % of its budget.",
    severity="medium",
    remediation="Review the cost table (seedance check) and shrink desired sizes or move work to spot.",
    topics=("cost", "budget"),
    config={**BUDGET_CONFIG, "warn_at": {"type": "number", "default": DEGRADE / 100}},
    check_stack=check,
)
