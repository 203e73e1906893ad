"""How `seedance check` scales: every rule and the cost estimate over generated plans of 1,000 and
10,000 resources, built by repeating the prod stack's own resources under new URNs.

Prints resources per second for each size, the 10k/1k time ratio (10 means linear) and the share of
the time spent in the slowest rule. Run: .venv/bin/python bench/check_speed.py
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.cost.estimate import catalog_for, estimate  # noqa: E402
from policies.framework import load_enforcement, run_rules  # noqa: E402
from policies.rules import ALL_RULES  # noqa: E402
from seedance.check_command import plan_resources  # noqa: E402
from seedance.cli import offline_plan  # noqa: E402

REPEATS = 3


def generated(base, count):
    out = []
    for index in range(count):
        resource = base[index % len(base)]
        out.append(replace(resource, urn=f"{resource.urn}-{index}", name=f"{resource.name}-{index}"))
    return out


def best_of(function) -> float:
    timings = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        function()
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> int:
    plan, _header = offline_plan("prod", Path(__file__).resolve().parents[1] / "infra", None)
    base = plan_resources(plan)
    enforcement = load_enforcement("prod")
    budget = {"monthly_budget_usd": 95000, "region": "us-east-1"}
    extra = {"budget-monthly-cost-limit": budget, "budget-monthly-cost-warn-near-budget": budget}
    catalog = catalog_for("us-east-1")
    print(f"rules: {len(ALL_RULES)}; base plan: prod stack, {len(base)} resources; best of {REPEATS}")
    totals = {}
    for size in (1_000, 10_000):
        resources = generated(base, size)
        seconds = best_of(lambda: (run_rules(ALL_RULES, resources, enforcement, extra), estimate(resources, catalog)))
        per_rule = {rule.name: best_of(lambda rule=rule: run_rules([rule], resources, enforcement, extra))
                    for rule in ALL_RULES}
        slowest = max(per_rule, key=per_rule.get)
        totals[size] = seconds
        print(f"{size:>6} resources: {seconds * 1e3:8.1f} ms, {size / seconds:>9,.0f} resources/s; slowest rule "
              f"{slowest} takes {per_rule[slowest] / sum(per_rule.values()):.0%} of the rules' time")
    print(f"time ratio 10k / 1k: {totals[10_000] / totals[1_000]:.1f} (10 is linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
