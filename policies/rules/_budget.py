"""The estimate both budget rules compare with the stack's monthly budget."""

from __future__ import annotations

from components.cost.estimate import catalog_for, estimate

# Config both budget rules take (the storage classes are given by `seedance check`, never by a stack).
BUDGET_CONFIG = {"monthly_budget_usd": {"type": "number"}, "region": {"type": "string", "default": "us-east-1"},
                 "storage_classes": {"type": "object", "default": {}}}


def budget_findings(resources, config, share: float, wording: str):
    if not config.get("monthly_budget_usd"):
        return
    # A team's plan uses the platform's storage classes without declaring them: `seedance check` hands
    # the rules what its platform's contract says a claim of each gets.
    cost = estimate(resources, catalog_for(config["region"]), storage_classes=config.get("storage_classes"))
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
