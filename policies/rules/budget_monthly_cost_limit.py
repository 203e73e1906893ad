"""The estimated monthly cost stays within the stack's budget (mandatory in CI: the source's cost gate)."""

from policies.framework import Rule
from policies.rules._budget import BUDGET_CONFIG, budget_findings


def check(resources, config):
    # The warning rule reports the unknown costs, once.
    yield from budget_findings(resources, config, 1.0, "over", report_unknown=False)


RULE = Rule(
    name="budget-monthly-cost-limit",
    description="The stack's estimated monthly cost stays within its budget.",
    severity="critical",
    remediation="Cut the plan's cost below the budget, or raise the budget in the stack and policy config.",
    topics=("cost", "budget"),
    config=BUDGET_CONFIG,
    check_stack=check,
)
