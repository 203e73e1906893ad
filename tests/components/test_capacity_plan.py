"""The capacity planner, without Pulumi: eligibility, distribution, cost, and the stability rule."""

from dataclasses import replace
from datetime import timedelta

import pytest

from components.capacity_plan import PlannerSettings, decide, hourly_cost, plan_capacity
from components.workload_classes import workload_classes
from tests.components.markets import NOW, ON_DEMAND, ZONE_MEAN, book, request

TRAINING = ("g6.12xlarge", "g5.12xlarge", "g4dn.12xlarge")
SERVING = ("g6.xlarge", "g5.xlarge", "g4dn.xlarge")
# The cheapest on-demand GPU of TRAINING: what its spot prices are compared with.
REFERENCE = ON_DEMAND["g4dn.12xlarge"] / 4


def spot_at(reference_ratio):
    """Spot ratios (of each type's own on-demand price) putting every effective spot price at `reference_ratio` x REFERENCE."""
    return {t: reference_ratio * REFERENCE / (ON_DEMAND[t] / 4) / ZONE_MEAN for t in TRAINING}


def test_worked_example_batch_mix():
    plan = plan_capacity(request(types=TRAINING), book({t: 0.35 for t in TRAINING}), NOW)
    assert plan.spot_types == ("g4dn.12xlarge", "g6.12xlarge", "g5.12xlarge")  # cheapest on-demand per GPU first
    assert plan.on_demand_base_gpus == 2  # ceil(10 % of 16)
    # smallest p with (64 - 2) x (1 - p) / 64 <= 0.9: p = 7.1 % -> 8
    assert plan.on_demand_percentage_above_base == 8
    assert plan.max_spot_share == pytest.approx(62 * 0.92 / 64) and plan.max_spot_share <= 0.9
    assert plan.capacity_rebalance and plan.spot_allocation_strategy == "price-capacity-optimized"
    per_gpu = {t: ON_DEMAND[t] / 4 for t in TRAINING}
    spot_mean = sum(0.35 * ZONE_MEAN * per_gpu[t] for t in TRAINING) / 3
    expected = 14 * 0.92 * spot_mean + (16 - 14 * 0.92) * REFERENCE
    assert plan.expected_usd_per_hour == pytest.approx(expected, rel=1e-6)
    assert plan.all_on_demand_usd_per_hour == pytest.approx(16 * REFERENCE)
    text = "\n".join(plan.explanation)
    assert "age 0.1 h" in text and "test on-demand" in text and "saving" in text


def test_spot_needs_price_below_ratio_of_its_ri_rate():
    # g5's effective spot at 0.61 x its on-demand is above the source's 0.6: two eligible types are not enough.
    plan = plan_capacity(request(types=TRAINING), book({**spot_at(0.3), "g5.12xlarge": 0.61 / ZONE_MEAN}), NOW)
    assert plan.spot_types == () and plan.on_demand_percentage_above_base == 100
    assert "only 2 eligible types, 3 required" in "\n".join(plan.explanation)
    below = {**spot_at(0.3), "g5.12xlarge": 0.59 / ZONE_MEAN}
    assert len(plan_capacity(request(types=TRAINING), book(below), NOW).spot_types) == 3


def test_a_dear_type_is_not_spot_eligible_against_a_cheaper_on_demand_gpu():
    # g6e spot at 0.4 x its own on-demand is still dearer per GPU than g4dn's on-demand GPU.
    types = (*TRAINING, "g6e.12xlarge")
    plan = plan_capacity(request(types=types), book({t: 0.4 for t in types}), NOW)
    assert "g6e.12xlarge" not in plan.spot_types and len(plan.spot_types) == 3


def test_a_held_ri_lowers_the_threshold_of_its_type():
    holdings = [("g6.12xlarge", 1, 2.0)]  # 0.5 $/GPU-h: g6 spot must be below 0.3 $/GPU-h
    plan = plan_capacity(request(types=TRAINING, holdings=holdings), book(spot_at(0.35)), NOW)  # 0.342 $/GPU-h
    assert plan.spot_types == () and "spot g6.12xlarge: $0.3423/GPU-h across its zones" in "\n".join(plan.explanation)
    assert "spot reference: RI g6.12xlarge (test RI) at $0.5000/GPU-h" in "\n".join(plan.explanation)


@pytest.mark.parametrize("age, missing", [(timedelta(hours=7), False), (timedelta(minutes=1), True)])
def test_stale_or_missing_prices_give_on_demand_only_without_a_current_plan(age, missing):
    spot = {t: 0.3 for t in TRAINING if not (missing and t == "g5.12xlarge")}
    decision = decide(request(types=TRAINING), book(spot, age=age), NOW)
    assert decision.rule == "first-plan"
    assert decision.plan.spot_types == () and decision.plan.on_demand_percentage_above_base == 100
    expected = "spot price missing" if missing else "old (fresh means <= 6 h)"
    assert expected in "\n".join(decision.plan.explanation)


def test_online_spot_needs_fresh_high_placement_scores():
    prices = {t: 0.25 for t in SERVING}
    serving = request("online", SERVING, min_gpus=4, desired=6, max_gpus=24)
    assert plan_capacity(serving, book(prices), NOW).spot_types == ()  # no scores: no spot
    assert plan_capacity(serving, book(prices, scores={SERVING: (9, 8, 6)}), NOW).spot_types == ()
    plan = plan_capacity(serving, book(prices, scores={SERVING: (9, 8, 7)}), NOW)
    assert plan.spot_types and plan.max_spot_share <= 0.2
    assert plan.on_demand_base_gpus == 6  # ceil(85 % of 6)


def test_base_covers_reserved_instances_and_they_come_first():
    holdings = [("g5.12xlarge", 3, 3.0)]  # 12 GPUs reserved, cheaper per GPU than any on-demand
    plan = plan_capacity(request(types=TRAINING, holdings=holdings), book({t: 0.2 for t in TRAINING}), NOW)
    assert plan.on_demand_base_gpus == 12 and plan.instance_types[0] == "g5.12xlarge"


def test_cap_of_zero_means_no_spot():
    klass = replace(workload_classes()["batch"], max_spot_share=0.0)
    no_spot = replace(request(), workload_class=klass)
    plan = plan_capacity(no_spot, book({t: 0.2 for t in TRAINING}), NOW)
    assert plan.on_demand_percentage_above_base == 100 and plan.max_spot_share == 0


def test_unknown_on_demand_price_leaves_the_type_out_and_none_is_an_error():
    prices = book({}, on_demand={"g6.12xlarge": 4.6016, "g5.12xlarge": 5.672})
    assert plan_capacity(request(), prices, NOW).instance_types == ("g6.12xlarge", "g5.12xlarge")
    with pytest.raises(ValueError, match="no on-demand price is known"):
        plan_capacity(request(), book({}, on_demand={"g4dn.xlarge": 0.5}), NOW)


# -- stability ---------------------------------------------------------------------------


def training(**changes):
    return request(types=TRAINING, **changes)


def current_plan(spot_ratio=0.35):
    return decide(training(), book({t: spot_ratio for t in TRAINING}), NOW).plan


def test_price_moves_alone_do_not_replace_a_plan():
    current = current_plan()
    cheaper_spot = decide(training(), book({t: 0.30 for t in TRAINING}), NOW, current)
    assert cheaper_spot.rule == "keep:below-min-saving" and cheaper_spot.plan == current and not cheaper_spot.changed
    # g5 becomes the cheapest on-demand type per GPU: a reordered plan would save well under 10 %.
    reordered = book({t: 0.35 for t in TRAINING}, on_demand={**ON_DEMAND, "g5.12xlarge": 3.5})
    assert plan_capacity(training(), reordered, NOW, current=current).instance_types[0] == "g5.12xlarge"
    assert decide(training(), reordered, NOW, current).plan == current


def test_a_new_plan_must_save_min_saving():
    on_demand_only = decide(training(), book({**spot_at(0.3), "g4dn.12xlarge": 0.7}), NOW).plan
    assert on_demand_only.spot_types == ()
    # g4dn falls to 0.5 x on-demand, below the banded entry threshold (0.6 x 0.905 = 0.543): spot pays off.
    decision = decide(training(), book({**spot_at(0.3), "g4dn.12xlarge": 0.5}), NOW, on_demand_only)
    assert decision.rule == "saving" and decision.changed and len(decision.plan.spot_types) == 3
    assert decision.plan.expected_usd_per_hour < on_demand_only.expected_usd_per_hour * 0.9


def test_stale_prices_keep_the_current_plan():
    current = current_plan()
    decision = decide(training(), book({t: 0.1 for t in TRAINING}, age=timedelta(hours=7)), NOW, current)
    assert decision.rule == "keep:stale-prices" and decision.plan == current
    assert "stale or missing" in decision.reasons[0]


def test_a_changed_constraint_replaces_the_plan():
    current = current_plan()
    bigger = training(max_gpus=128)
    decision = decide(bigger, book({t: 0.35 for t in TRAINING}), NOW, current)
    assert decision.rule == "constraint" and "max_gpus" in decision.reasons[0]
    assert decision.plan.constraints["max_gpus"] == 128


def test_spot_leaving_a_plan_is_driven_by_cost_not_by_the_threshold():
    current = current_plan()
    # Spot now at 0.7 x the reference: past the band for every type, but still cheaper than on-demand.
    decision = decide(training(), book(spot_at(0.7)), NOW, current)
    assert decision.plan == current and decision.rule == "keep:below-min-saving"
    # At 1.1 x on-demand, on-demand only saves more than 10 %: spot is left.
    decision = decide(training(), book({t: 1.1 for t in TRAINING}), NOW, current)
    assert decision.rule == "saving" and decision.plan.spot_types == ()


def test_entry_threshold_is_a_band_with_a_current_plan():
    settings = PlannerSettings()
    all_on_demand = decide(training(), book({"g6.12xlarge": 0.7}), NOW).plan
    just_below = spot_at(0.6 * 0.99)  # eligible for a first plan, inside the noise band for a current one
    first = plan_capacity(training(), book(just_below), NOW, settings)
    banded = plan_capacity(training(), book(just_below), NOW, settings, all_on_demand)
    assert first.spot_types and not banded.spot_types


def test_placement_drop_replaces_an_online_spot_plan():
    serving = request("online", SERVING, min_gpus=4, desired=6, max_gpus=24)
    prices = {t: 0.25 for t in SERVING}
    current = decide(serving, book(prices, scores={SERVING: (8, 8, 8)}), NOW).plan
    assert current.spot_types
    assert decide(serving, book(prices, scores={SERVING: (8, 6, 8)}), NOW, current).plan == current  # slack of 1
    dropped = decide(serving, book(prices, scores={SERVING: (8, 4, 8)}), NOW, current)
    assert dropped.rule == "constraint" and dropped.plan.spot_types == ()


def test_hourly_cost_is_none_when_a_price_is_missing():
    plan = current_plan()
    assert hourly_cost(plan, training(), book({}, on_demand={})) is None
