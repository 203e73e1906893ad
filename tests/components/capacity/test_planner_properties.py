"""Properties of the planner over arbitrary prices, holdings, classes and group sizes (hypothesis)."""

import math
import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from components.capacity.plan import GroupRequest
from components.capacity.planner import decide, plan_capacity
from components.capacity.rules import placement_questions, reserved_gpus
from components.capacity.workload_classes import workload_classes
from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import InterruptionFrequency, PlacementScore, Price, PriceBook
from components.pricing.reserved import ReservedHolding
from tests.components.markets import NOW, ON_DEMAND, ZONES

TYPES = sorted(ON_DEMAND)
# Spot at any discount, and often near the 0.6 eligibility threshold, where noise could flip a rule.
SPOT_RATIOS = st.one_of(st.floats(0.57, 0.63), st.floats(0.05, 1.5))


@st.composite
def scenarios(draw):
    types = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=5, unique=True))
    klass = replace(
        workload_classes()[draw(st.sampled_from(["batch", "online"]))],
        max_spot_share=draw(st.floats(0, 1)),
        ri_baseline=draw(st.floats(0, 1)),
    )
    largest = max(gpu_instance_type(t).gpus for t in types)
    max_gpus = draw(st.integers(largest, 512))
    desired = draw(st.integers(0, max_gpus))
    minimum = draw(st.integers(0, desired))
    holdings = tuple(
        ReservedHolding(t, draw(st.integers(0, 12)), ON_DEMAND[t] * draw(st.floats(0.3, 1.2)), "test RI")
        for t in types
        if draw(st.booleans())
    )
    request = GroupRequest("g", klass, tuple(types), ZONES, minimum, desired, max_gpus, holdings)
    book = PriceBook(region="us-east-1")
    for t in types:
        if draw(st.integers(0, 9)) > 0:  # now and then a type has no on-demand price
            book.on_demand[t] = Price(ON_DEMAND[t] * draw(st.floats(0.8, 1.2)), NOW, "test")
        ratio = draw(SPOT_RATIOS)
        for zone in ZONES:
            if draw(st.integers(0, 9)) > 0:
                book.spot[(t, zone)] = Price(ON_DEMAND[t] * ratio * draw(st.floats(0.6, 1.0)), NOW, "test")
        if draw(st.booleans()):
            book.interruptions[t] = InterruptionFrequency(draw(st.floats(0, 1)), NOW, "test")
    for question in placement_questions(request):
        for zone in ZONES:
            if draw(st.integers(0, 9)) > 0:  # now and then a zone goes unscored
                book.placement[(question, zone)] = PlacementScore(draw(st.integers(1, 10)), NOW, "test")
    if not book.on_demand:
        book.on_demand[types[0]] = Price(ON_DEMAND[types[0]], NOW, "test")
    return request, book


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_spot_share_never_exceeds_the_class_cap_at_any_size(scenario):
    request, book = scenario
    plan = plan_capacity(request, book, NOW)
    for gpus in range(max(request.min_gpus, 1), request.max_gpus + 1):
        assert plan.spot_share_at(gpus) <= request.workload_class.max_spot_share + 1e-9


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_base_covers_baseline_and_reserved_instances_first(scenario):
    request, book = scenario
    plan = plan_capacity(request, book, NOW)
    baseline = math.ceil(request.workload_class.ri_baseline * request.desired_gpus - 1e-9)
    assert plan.on_demand_base_gpus >= min(baseline, request.max_gpus)
    assert plan.on_demand_base_gpus >= min(reserved_gpus(request), request.max_gpus)
    held = {h.instance_type for h in request.holdings if h.count}
    order = [t in held for t in plan.instance_types]
    assert order == sorted(order, reverse=True)  # RI-covered types get the on-demand capacity first


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_unknown_interruption_data_never_adds_spot(scenario):
    request, book = scenario
    known = plan_capacity(request, book, NOW)
    unknown = plan_capacity(request, replace(book, interruptions={}), NOW)
    assert set(unknown.spot_types) <= set(known.spot_types)
    assert unknown.max_spot_share <= known.max_spot_share


@settings(max_examples=1000, deadline=None)  # a type that sets the reference and loses its price is rare
@given(scenarios(), st.data(), st.sampled_from(["on_demand", "spot", "placement"]))
def test_a_missing_price_or_score_never_adds_spot(scenario, data, table):
    request, book = scenario
    prices = getattr(book, table)
    if len(prices) < 2:  # with no on-demand price at all the planner refuses the group
        return
    key = data.draw(st.sampled_from(sorted(prices, key=repr)))
    fewer = replace(book, **{table: {k: p for k, p in prices.items() if k != key}})
    known, unknown = plan_capacity(request, book, NOW), plan_capacity(request, fewer, NOW)
    assert set(unknown.spot_types) <= set(known.spot_types)
    assert unknown.max_spot_share <= known.max_spot_share


@settings(max_examples=1500, deadline=None)  # boundary cases are rare: fewer examples miss a broken band
@given(scenarios(), st.integers(0, 2**32 - 1))
def test_plan_unchanged_under_five_percent_price_noise(scenario, seed):
    request, book = scenario
    current = decide(request, book, NOW).plan
    noise = random.Random(seed)
    noisy = PriceBook(region=book.region, placement=dict(book.placement))
    noisy.on_demand = {
        k: replace(p, usd_per_hour=p.usd_per_hour * noise.uniform(0.95, 1.05)) for k, p in book.on_demand.items()
    }
    noisy.spot = {k: replace(p, usd_per_hour=p.usd_per_hour * noise.uniform(0.95, 1.05)) for k, p in book.spot.items()}
    decision = decide(request, noisy, NOW, current)
    assert decision.plan == current, decision.reasons
