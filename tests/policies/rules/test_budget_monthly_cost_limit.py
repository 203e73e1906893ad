"""The budget limit as the shipped pack configs use it: they name no `basis`, so the limit judges the
worst case (every spot unit at on-demand), not what the plan expects to pay."""

import json
from pathlib import Path

import pytest

from policies.framework import run_rules
from policies.rules._budget import budget_estimate
from policies.rules.budget_monthly_cost_limit import RULE
from seedance.check_command import plan_resources
from tests.conftest import _spot_stack_plan

PACK_CONFIGS = Path(__file__).resolve().parents[3] / "policies" / "config"


@pytest.fixture(scope="module")
def spot_prod():
    """Prod decided where spot is cheap: its expected cost sits well below its worst case."""
    return plan_resources(_spot_stack_plan("prod"))


def _limit(resources, budget, **config):
    settings = {"enforcementLevel": "mandatory", "monthly_budget_usd": budget, "region": "us-east-1", **config}
    return [v.message for v in run_rules([RULE], resources, {"all": "mandatory", RULE.name: settings})]


def test_without_a_basis_the_limit_judges_the_worst_case(spot_prod):
    cost = budget_estimate(spot_prod, {"region": "us-east-1", "storage_classes": {}})
    worst, expected = cost.total("worst_case"), cost.total("expected")
    assert expected < worst
    between = round((worst + expected) / 2)
    (finding,) = _limit(spot_prod, between)
    assert f"estimated ${worst:,.2f}/month (worst case)" in finding
    assert _limit(spot_prod, between, basis="expected") == []


def test_the_shipped_configs_leave_the_basis_to_the_default():
    configs = sorted(PACK_CONFIGS.glob("*.json"))
    assert configs
    for path in configs:
        assert "basis" not in (json.loads(path.read_text()).get(RULE.name) or {}), path.name
