"""One mix, every reader: on random spot plans, the planner's spend, the Auto Scaling group rendered from
the plan, the policy rules' reading of that group and the cost estimate's pricing of it agree on how
many units run on spot and how many Reserved Instances cover (all through `components.capacity.mix`)."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.capacity.costs import spend
from components.capacity.mix import HOLDINGS_TAG, GroupMix, holdings_tag, percentage_within_cap, reserved_cover
from components.capacity.plan import CapacityPlan, GroupRequest
from components.capacity.workload_classes import workload_classes
from components.compute.asg import instances_distribution
from components.cost.estimate import catalog_for, estimate
from components.plan.resources import ASG, PlanResource
from components.pricing.prices import Price, PriceBook
from components.pricing.reserved import ReservedHolding
from policies.rules._helpers import spot_share_at
from tests.components.markets import NOW, ON_DEMAND, ZONES

# Types of one shape each (a group's types share their GPU count): 1, 4 and 8 GPUs per instance.
SHAPES = {
    1: ("g6.xlarge", "g5.xlarge", "g4dn.xlarge"),
    4: ("g6.12xlarge", "g5.12xlarge", "g4dn.12xlarge"),
    8: ("g5.48xlarge",),
}


@st.composite
def spot_plans(draw):
    per_instance = draw(st.sampled_from(sorted(SHAPES)))
    types = tuple(draw(st.permutations(SHAPES[per_instance])))[: draw(st.integers(1, len(SHAPES[per_instance])))]
    max_instances = draw(st.integers(1, 64))
    max_gpus = max_instances * per_instance
    desired = draw(st.integers(0, max_instances)) * per_instance
    base = draw(st.integers(0, max_gpus))
    percentage = draw(st.integers(0, 99))
    holdings = tuple(
        ReservedHolding(t, draw(st.integers(1, 12)), ON_DEMAND[t] * draw(st.floats(0.3, 1.0)), "test")
        for t in types
        if draw(st.booleans())
    )
    request = GroupRequest("g", workload_classes()["batch"], types, ZONES, 0, desired, max_gpus, holdings)
    plan = CapacityPlan(
        group="g",
        instance_types=types,
        spot_types=types,
        on_demand_base_gpus=base,
        on_demand_percentage_above_base=percentage,
        capacity_rebalance=True,
        expected_usd_per_hour=0.0,
        all_on_demand_usd_per_hour=0.0,
        constraints=request.constraints(),
        explanation=(),
    )
    return plan, request, per_instance


def rendered_group(plan: CapacityPlan, request: GroupRequest, per_instance: int) -> PlanResource:
    """The group as the plan JSON holds it (camelCase inputs), from what the component renders."""
    distribution = instances_distribution(plan, per_instance)
    camel = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), k): v for k, v in distribution.items()}
    tags = [{"key": HOLDINGS_TAG, "value": holdings_tag(plan.mix.holdings), "propagateAtLaunch": True}]
    return PlanResource(
        "urn:pulumi:s::p::aws:autoscaling/group:Group::g",
        ASG,
        "g",
        {
            "desiredCapacity": request.desired_gpus // per_instance,
            "maxSize": request.max_gpus // per_instance,
            "mixedInstancesPolicy": {
                "instancesDistribution": camel,
                "launchTemplate": {"overrides": [{"instanceType": t} for t in plan.instance_types]},
            },
            "tags": tags,
        },
    )


def priced_book(types) -> PriceBook:
    book = PriceBook(region="us-east-1")
    for t in types:
        book.on_demand[t] = Price(ON_DEMAND[t], NOW, "test")
        for zone in ZONES:
            book.spot[(t, zone)] = Price(ON_DEMAND[t] * 0.4, NOW, "test")
    return book


@settings(max_examples=300, deadline=None)
@given(spot_plans())
def test_every_reader_of_a_spot_plan_sees_the_same_mix(case):
    plan, request, per_instance = case
    group = rendered_group(plan, request, per_instance)
    in_instances = plan.mix.in_instances(per_instance)

    # The rules read the rendered group; rounding the base up to whole instances never adds spot.
    for instances in range(1, request.max_gpus // per_instance + 1):
        share = spot_share_at(group, instances)
        assert share == in_instances.spot_share_at(instances)
        assert share <= plan.spot_share_at(instances * per_instance) + 1e-12

    # The planner's spend, in GPUs.
    lines = spend(plan, request, priced_book(plan.instance_types))
    spot_gpus = sum(gpus for (market, _t, _z), gpus, _p in lines if market == "spot")
    reserved_gpus = sum(gpus for (market, _t, _z), gpus, _p in lines if market == "reserved")
    assert abs(spot_gpus - plan.mix.spot_units(request.reference_gpus)) < 1e-9
    held_gpus = [(h.instance_type, h.count * per_instance, h.usd_per_hour / per_instance) for h in request.holdings]
    assert (
        abs(
            reserved_gpus
            - sum(c for _t, c, _r in reserved_cover(plan.mix.on_demand_units(request.reference_gpus), held_gpus))
        )
        < 1e-9
    )

    # The estimate prices the rendered group, in instances.
    (line,) = estimate([group], catalog_for("us-east-1")).lines
    desired = request.desired_gpus // per_instance
    spot_priced = float(re.search(r"([\d.e+-]+) spot priced", line.basis).group(1))
    assert abs(spot_priced - in_instances.spot_units(desired)) < 1e-4 * max(1.0, spot_priced)
    reserved = re.search(r"([\d.e+-]+) reserved for", line.basis)
    covered = sum(
        c
        for _t, c, _r in reserved_cover(
            in_instances.on_demand_units(desired),
            [(h.instance_type, h.count, h.usd_per_hour) for h in plan.mix.holdings],
        )
    )
    assert abs((float(reserved.group(1)) if reserved else 0.0) - covered) < 1e-4 * max(1.0, covered)

    # Without rounding (a base of whole instances), the estimate's and the planner's units are the same.
    if plan.on_demand_base_gpus % per_instance == 0 and request.reference_gpus == request.desired_gpus:
        assert abs(in_instances.spot_units(desired) * per_instance - spot_gpus) < 1e-9


@given(base=st.integers(0, 512), max_size=st.integers(1, 512), cap=st.floats(0, 1))
def test_the_percentage_within_the_cap_is_the_smallest_that_keeps_it(base, max_size, cap):
    percentage = percentage_within_cap(base, max_size, cap)
    for size in range(1, max_size + 1):
        assert GroupMix(base, percentage).spot_share_at(size) <= cap + 1e-9
    if 0 < percentage < 100:
        assert GroupMix(base, percentage - 1).spot_share_at(max_size) > cap


def asg(policy=None, tags=None, **props):
    """An Auto Scaling group as a plan holds it (camelCase inputs, tags as a list)."""
    inputs = {
        **({"mixedInstancesPolicy": policy} if policy is not None else {}),
        "tags": [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in (tags or {}).items()],
        **props,
    }
    return PlanResource("urn:asg", ASG, "asg", inputs)


def mixed(base=2, percentage=30, types=("g6.xlarge", "g5.xlarge")):
    return {
        "instancesDistribution": {"onDemandBaseCapacity": base, "onDemandPercentageAboveBaseCapacity": percentage},
        "launchTemplate": {"overrides": [{"instanceType": t} for t in types]},
    }


def test_a_groups_mix_is_read_from_its_policy_and_its_holdings_tag():
    from components.capacity.mix import asg_mix

    mix = asg_mix(asg(mixed(), {HOLDINGS_TAG: "g6.xlarge=2@0.507000 g5.xlarge=1@0.600000"}))
    assert (mix.on_demand_base, mix.on_demand_percentage_above_base, mix.instance_types) == (
        2.0,
        30.0,
        ("g6.xlarge", "g5.xlarge"),
    )
    assert mix.spot_types == ()
    assert [(h.instance_type, h.count, h.usd_per_hour, h.source) for h in mix.holdings] == [
        ("g6.xlarge", 2, 0.507, "plan tag"),
        ("g5.xlarge", 1, 0.6, "plan tag"),
    ]
    # AWS's defaults where the policy leaves them out: no base, 100 % on-demand above it.
    bare = asg_mix(asg({"instancesDistribution": {}, "launchTemplate": {}}))
    assert (bare.on_demand_base, bare.on_demand_percentage_above_base, bare.instance_types, bare.holdings) == (
        0.0,
        100.0,
        (),
        (),
    )
    explicit_zero = asg_mix(asg(mixed(base=0, percentage=0)))
    assert (explicit_zero.on_demand_base, explicit_zero.on_demand_percentage_above_base) == (0.0, 0.0)


def test_a_group_without_a_mix_or_with_an_unknown_one_has_none():
    from components.capacity.mix import asg_mix
    from components.plan.resources import UNKNOWN_VALUES

    unknown = next(iter(UNKNOWN_VALUES))
    assert asg_mix(asg()) is None and asg_mix(asg({})) is None
    assert asg_mix(asg(mixed(base=unknown))) is None and asg_mix(asg(mixed(percentage=unknown))) is None


@pytest.mark.parametrize(
    "value, rate",
    [
        ("1.234567", 1.234567),
        ("12", 12.0),
        (None, None),
        ("-1.0", None),
        ("1e3", None),
        ("nan", None),
        ("1.2345678901", None),
        ("1234567", None),
    ],
)
def test_the_expected_spot_rate_is_a_finite_price_or_none(value, rate):
    from components.capacity.mix import EXPECTED_SPOT_TAG, expected_spot_rate

    assert expected_spot_rate(asg(mixed(), {} if value is None else {EXPECTED_SPOT_TAG: value})) == rate


def test_an_unknown_expected_spot_rate_is_none():
    from components.capacity.mix import EXPECTED_SPOT_TAG, expected_spot_rate
    from components.plan.resources import UNKNOWN_VALUES

    assert expected_spot_rate(asg(mixed(), {EXPECTED_SPOT_TAG: next(iter(UNKNOWN_VALUES))})) is None
    assert expected_spot_rate(PlanResource("urn:asg", ASG, "asg", {})) is None  # no tags at all


@pytest.mark.parametrize(
    "entry",
    [
        "g6.xlarge=2",
        "g6.xlarge=-2@0.5",
        "g6.xlarge=2@-0.5",
        "g6.xlarge=2@nan",
        "G6.xlarge=2@0.5",
        "g6.xlarge=1234567@0.5",
        "g6.xlarge=2@0.5x",
    ],
)
def test_a_holdings_tag_entry_of_another_shape_is_refused_by_name(entry):
    from components.capacity.mix import holdings_from_tag

    with pytest.raises(ValueError) as error:
        holdings_from_tag(f"g5.xlarge=1@0.6 {entry}")
    assert str(error.value) == f"{HOLDINGS_TAG} entry {entry!r} is not <type>=<count>@<usd per hour>"


def test_a_holdings_tag_round_trips_and_names_its_source():
    from components.capacity.mix import holdings_from_tag
    from components.pricing.reserved import ReservedHolding

    held = (
        ReservedHolding("g6.xlarge", 4, 0.507, "stack config"),
        ReservedHolding("g5.xlarge", 0, 0.6, "x"),
        ReservedHolding("g6e.xlarge", 1, 1.234567891, "x"),
    )
    text = holdings_tag(held)
    assert text == "g6.xlarge=4@0.507000 g6e.xlarge=1@1.234568"  # none of a count of 0; six decimals
    assert [(h.instance_type, h.count, h.usd_per_hour, h.source) for h in holdings_from_tag(text, "lock")] == [
        ("g6.xlarge", 4, 0.507, "lock"),
        ("g6e.xlarge", 1, 1.234568, "lock"),
    ]
    assert holdings_from_tag("") == ()


def test_a_mix_in_instances_rounds_its_base_up_and_keeps_the_rest():
    mix = GroupMix(9, 40, ("g6.12xlarge",), ("g6.12xlarge",), ())
    assert mix.in_instances(4) == GroupMix(3, 40, ("g6.12xlarge",), ("g6.12xlarge",), ())
    assert GroupMix(8, 40).in_instances(4).on_demand_base == 2  # a whole number of instances stays
    assert GroupMix(8.0000000001, 40).in_instances(4).on_demand_base == 2  # float slack is not an instance


def test_an_hours_spend_is_units_times_their_rate():
    from components.capacity.mix import hourly

    assert hourly([(("spot", "g6.xlarge", "us-east-1a"), 2, 3.0), (("on-demand", "g5.xlarge", ""), 4, 0.5)]) == 8.0
    assert hourly([]) == 0


def test_a_mix_in_instances_keeps_its_holdings():
    from components.pricing.reserved import ReservedHolding

    held = (ReservedHolding("g6.12xlarge", 1, 4.0, "stack config"),)
    assert GroupMix(8, 40, ("g6.12xlarge",), (), held).in_instances(4).holdings == held
