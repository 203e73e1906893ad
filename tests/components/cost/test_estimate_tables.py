"""The cost of every stack, as committed and from a spot lock, line by line in golden files: any change
to what a plan costs shows in review as a diff of tests/golden/cost/.

Regenerate after an intended change, then review the diff:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/components/cost/test_estimate_tables.py
"""

import json
import os
from pathlib import Path

from components.cost.estimate import catalog_for, estimate
from seedance.check_command import plan_resources
from tests.stacks import stack_config

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "cost"
ON = __import__("datetime").date(2026, 12, 1)  # EKS support rates depend on the day: one fixed day


def cost_table(plan) -> dict:
    cost = estimate(plan_resources(plan), catalog_for(stack_config(plan.stack).region), on=ON)
    lines = {}
    for line in sorted(cost.lines, key=lambda line: line.urn):
        name = line.urn.rsplit("::", 1)[1]
        lines[name] = {
            "type": line.type,
            "monthly_usd": line.monthly_usd,
            **({"expected_usd": line.expected_usd} if line.expected_usd is not None else {}),
        }
    return {
        "monthly_usd_worst_case": cost.monthly_usd,
        "monthly_usd_expected": cost.expected_monthly_usd,
        "lines": lines,
    }


def test_the_cost_table_matches_its_golden_file(mixed_stack_plan, request):
    stack, market = request.node.callspec.params["mixed_stack_plan"]
    path = GOLDEN / f"{stack}-{market}.json"
    table = cost_table(mixed_stack_plan)
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    assert table == json.loads(path.read_text()), f"regenerate: UPDATE_GOLDEN=1 pytest {__file__}"
