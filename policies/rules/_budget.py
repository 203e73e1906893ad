"""The estimate both budget rules compare with the stack's monthly budget."""

from __future__ import annotations

from typing import Any

from components.cost.estimate import estimate_of_plan
from components.plan.unknowns import read_plan

# Config both budget rules take (the storage classes are given by `seedance check`, never by a stack).
BUDGET_CONFIG: dict[str, dict[str, Any]] = {
    "monthly_budget_usd": {"type": "number"},
    "region": {"type": "string", "default": "us-east-1"},
    "storage_classes": {"type": "object", "default": {}},
    # worst_case: every spot unit at on-demand; expected: at the price its group's plan expects.
    "basis": {"type": "string", "enum": ["worst_case", "expected"], "default": "worst_case"},
}


def budget_estimate(resources, config):
    """The plan's estimate: both rules, and `seedance check`'s cost table, judge one estimate of the plan
    they are handed. A team's plan uses the platform's storage classes without declaring them: `seedance
    check` hands the rules what its platform's contract says a claim of each gets."""
    return estimate_of_plan(read_plan(resources), config["region"], config.get("storage_classes"))


def budget_findings(resources, config, share: float, wording: str, *, report_unknown: bool):
    """The finding when the estimate is above `share` of the budget, and (`report_unknown`: once per
    check, by one rule) which costs are unknown until the resources exist."""
    if not config.get("monthly_budget_usd"):
        return
    cost = budget_estimate(resources, config)
    budget = float(config["monthly_budget_usd"])
    unknown = cost.unknown
    basis = config.get("basis", "worst_case")
    total = cost.total(basis)
    used = total / budget
    anchor = None  # the budget is the stack's, not any one resource's
    if unknown and report_unknown:
        yield (
            anchor,
            (
                f"{len(unknown)} resource(s) have costs unknown until they exist "
                f"({'; '.join(line.basis for line in unknown[:3])}); the known part is ${total:,.2f}/month"
            ),
        )
    if used > share:
        yield (
            anchor,
            (
                f"estimated ${total:,.2f}/month ({basis.replace('_', ' ')}) is {used:.0%} of the "
                f"${budget:,.0f} budget, {wording} {share:.0%}"
            ),
        )
