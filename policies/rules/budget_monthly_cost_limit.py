"""The estimated monthly cost stays within the stack's budget (mandatory in CI: the source's cost gate).
Instances the estimate cannot price leave the budget unchecked, so they fail it: a group, node group,
instance or capacity reservation whose type has no price or whose inputs the estimate cannot read. One
whose cost waits on a value known only at apply reads as that unknown (prod fails closed on it)."""

from components.plan.resources import ASG, CAPACITY_RESERVATION, EC2_INSTANCE, EKS_NODE_GROUP
from policies.framework import Rule
from policies.rules._budget import BUDGET_CONFIG, budget_estimate, budget_findings

# What runs instances: a budget is unchecked while one of these has no price.
COMPUTE = frozenset({ASG, EKS_NODE_GROUP, EC2_INSTANCE, CAPACITY_RESERVATION})


def check(resources, config):
    # The warning rule reports the unknown costs, once.
    over = list(budget_findings(resources, config, 1.0, "over", report_unknown=False))
    yield from over
    if over or not config.get("monthly_budget_usd"):
        return
    unpriced = [line for line in budget_estimate(resources, config).unknown if line.type in COMPUTE]
    for line in unpriced:
        if line.waits_on is None:
            yield (
                line.urn,
                f"its instances cannot be priced ({line.basis.removeprefix('unknown: ')}), so the "
                "budget cannot be checked",
            )
    waiting = [line.waits_on for line in unpriced if line.waits_on is not None]
    if waiting:
        raise waiting[0]


RULE = Rule(
    name="budget-monthly-cost-limit",
    description="The stack's estimated monthly cost stays within its budget.",
    severity="critical",
    remediation="Cut the plan's cost below the budget, or raise the budget in the stack and policy config.",
    topics=("cost", "budget"),
    config=BUDGET_CONFIG,
    check_stack=check,
)
