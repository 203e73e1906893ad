"""Each stack's capacity decision from a spot lock (the market of tests/conftest.py, fixed in time), whole:
every group's plan and its explanation, in tests/golden/capacity/. A change to what the planner decides
or how it explains itself shows in review.

Regenerate after an intended change, then review the diff:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/components/capacity/test_decision_golden.py
"""

import json
import os
from pathlib import Path

import pytest

from tests.stacks import STACKS

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "capacity"


@pytest.mark.parametrize("stack", STACKS)
def test_the_spot_lock_decision_matches_its_golden_file(stack):
    from tests.conftest import _spot_stack_plan

    groups = _spot_stack_plan(stack).outputs["reports"]["capacity"]["groups"]
    decided = {name: {k: v for k, v in group.items() if k != "asg_name"} for name, group in groups.items()}
    path = GOLDEN / f"{stack}-spot.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(decided, indent=1, sort_keys=True) + "\n")
    assert decided == json.loads(path.read_text()), f"regenerate: UPDATE_GOLDEN=1 pytest {__file__}"
