"""One pricing of a mix (components/capacity/mix.price_mix): the planner's spend and the estimate are the
same arithmetic with different rate cards, the estimate shows both the worst case (spot at on-demand) and
the expected cost (spot at the plan's price), and the budget rules judge the basis the stack chose."""

import pytest

from components.capacity.mix import EXPECTED_SPOT_TAG, GroupMix, hourly, price_mix
from components.cost.estimate import catalog_for, estimate
from components.plan.resources import ASG, PlanResource
from components.pricing.prices import HOURS_PER_MONTH
from policies.framework import run_rules
from policies.rules import ALL_RULES
from seedance.check_command import plan_resources
from tests.stacks import stack_config


def test_reserved_units_bill_first_then_on_demand_then_spot_over_its_pools():
    mix = GroupMix(on_demand_base=4, on_demand_percentage_above_base=50)
    lines = price_mix(
        mix,
        12,
        ("g6.xlarge", 1.0),
        [("g6.xlarge", "a", 0.3), ("g5.xlarge", "b", 0.5)],
        [("g6.xlarge", 3, 0.6), ("g5.xlarge", 10, 0.7)],
    )
    assert lines == [
        (("reserved", "g6.xlarge", ""), 3, 0.6),
        (("reserved", "g5.xlarge", ""), 5, 0.7),
        (("spot", "g6.xlarge", "a"), 2.0, 0.3),
        (("spot", "g5.xlarge", "b"), 2.0, 0.5),
    ]
    assert hourly(lines) == pytest.approx(3 * 0.6 + 5 * 0.7 + 2 * 0.3 + 2 * 0.5)
    assert price_mix(mix, 12, ("g6.xlarge", None), [("g6.xlarge", "a", 0.3)]) is None  # on-demand units, no rate
    assert price_mix(mix, 12, ("g6.xlarge", 1.0), None) is None  # spot units, no pool
    assert price_mix(mix, 4, ("g6.xlarge", 1.0), None) == [(("on-demand", "g6.xlarge", ""), 4, 1.0)]


def _groups(plan):
    resources = plan_resources(plan)
    lines = {line.urn: line for line in estimate(resources, catalog_for(stack_config(plan.stack).region)).lines}
    reports = plan.outputs["reports"]["capacity"]["groups"]
    for resource in resources:
        if resource.type == ASG:
            name = next(n for n in reports if resource.name.endswith(f"-{n}-asg"))
            yield resource, lines[resource.urn], reports[name]


def test_the_estimate_and_the_planner_price_a_mix_alike(mixed_stack_plan):
    """Where the group runs the plan's mix unchanged in instances (one GPU each, at its reference size),
    the estimate's expected saving over the worst case is the planner's saving over all on-demand."""
    compared = 0
    for group, line, report in _groups(mixed_stack_plan):
        config = next(
            g for g in stack_config(mixed_stack_plan.stack).gpu_node_groups if group.name.endswith(f"-{g.name}-asg")
        )
        if config.gpus_per_instance != 1 or config.desired_gpus != (config.desired_gpus or config.max_gpus):
            continue
        saving = (report["all_on_demand_usd_per_hour"] - report["expected_usd_per_hour"]) * HOURS_PER_MONTH
        expected = line.monthly_usd if line.expected_usd is None else line.expected_usd
        assert line.monthly_usd - expected == pytest.approx(saving, abs=0.05), group.name
        compared += 1
    assert compared


def test_a_spot_group_shows_its_expected_cost_below_its_worst_case(plan_of):
    from tests.conftest import _spot_stack_plan

    found = [(g.name, line) for g, line, _r in _groups(_spot_stack_plan("dev")) if line.expected_usd is not None]
    assert found
    for name, line in found:
        assert 0 < line.expected_usd < line.monthly_usd, name
        assert "worst case" in line.basis and "expected" in line.basis


def _group(tag=None, desired=10, base=0, percentage=0):
    tags = [{"key": EXPECTED_SPOT_TAG, "value": tag, "propagateAtLaunch": True}] if tag is not None else []
    return PlanResource(
        "urn:g",
        ASG,
        "g",
        {
            "desiredCapacity": desired,
            "maxSize": desired,
            "minSize": 0,
            "tags": tags,
            "mixedInstancesPolicy": {
                "instancesDistribution": {
                    "onDemandBaseCapacity": base,
                    "onDemandPercentageAboveBaseCapacity": percentage,
                },
                "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]},
            },
        },
    )


def test_a_tag_never_prices_spot_above_on_demand_nor_below_nothing():
    catalog = catalog_for("us-east-1")
    rate = catalog.instance_hour("g6.xlarge")

    def line(tag):
        (priced,) = estimate([_group(tag)], catalog).lines
        return priced

    assert line("0.100000").expected_usd == pytest.approx(10 * 0.1 * HOURS_PER_MONTH, abs=0.01)
    assert line(f"{rate * 5:.6f}").expected_usd == line(None).monthly_usd  # capped at on-demand
    for forged in ("-1", "nan", "1e9", "0x10", "cheap"):
        assert line(forged).expected_usd is None, forged


@pytest.mark.parametrize("basis, fails", [("worst_case", True), ("expected", False)])
def test_the_budget_rules_judge_the_basis_the_stack_chose(basis, fails):
    """A group whose spot runs at 0.1 x on-demand: over a budget at on-demand, well inside it as expected."""
    catalog = catalog_for("us-east-1")
    group = _group(f"{catalog.instance_hour('g6.xlarge') * 0.1:.6f}")
    worst = estimate([group], catalog).monthly_usd
    limit = next(r for r in ALL_RULES if r.name == "budget-monthly-cost-limit")
    config = {"budget-monthly-cost-limit": {"monthly_budget_usd": worst * 0.5, "basis": basis}}
    found = run_rules([limit], [group], {"all": "mandatory"}, config)
    assert bool(found) is fails
    if fails:
        assert "(worst case)" in found[0].message
