"""The estimate both budget rules compare with the stack's monthly budget."""

from __future__ import annotations

from components.cost.estimate import catalog_for, estimate


def budget_findings(resources, config, share: float, wording: str):
    if not config.get("monthly_budget_usd"):
        return
    cost = estimate(resources, catalog_for(config["region"]))
    budget = float(config["monthly_budget_usd"])
    unknown = cost.unknown
    used = cost.monthly_usd / budget
    anchor = None  # the budget is the stack's, not any one resource's
    if unknown:
        yield anchor, (f"{len(unknown)} resource(s) have costs unknown until they exist "
                       f"({'; '.join(line.basis for line in unknown[:3])}); the known part is ${cost.monthly_usd:,.2f}/month")
    if used > share:
        yield anchor, (f"estimated ${cost.monthly_usd:,.2f}/month is {used:.0%} of the ${budget:,.0f} budget, "
                       f"{wording} {share:.0%}")
