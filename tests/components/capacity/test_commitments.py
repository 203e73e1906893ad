"""Savings Plans and capacity reservations in the capacity decision (issue 38, items 1 and 2): what the
account already pays for goes into the on-demand base before anything else, and no spot unit ever
takes an hour a commitment would leave unused."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.capacity.holdings import allocate_holdings
from components.capacity.mix import holdings_constraint, holdings_from_constraints
from components.capacity.planner import plan_capacity
from components.pricing.commitments import (
    HEADROOM_READING,
    SavingsPlanCommitment,
    commitment_holdings,
    every_hour_headroom,
    full_days,
    last_full_day,
    plan_rates,
    reservation_holdings,
    savings_plan_commitments,
)
from components.pricing.reserved import CAPACITY_BLOCK, CAPACITY_RESERVATION, SAVINGS_PLAN, ReservedHolding
from tests.components.markets import NOW, ZONES, book, request

ENDS = NOW + timedelta(days=200)


def plan(sp_id="sp-1", unused=2.0, rates=None, plan_type="Compute", family="", region="", ends=ENDS):
    return SavingsPlanCommitment(
        sp_id, plan_type, family, region, 10.0, unused, rates or {"g6.xlarge": 0.5}, ends, "test"
    )


def test_headroom_buys_whole_instances_group_by_group_cheapest_plan_first():
    cheap, dear = plan("sp-cheap", 1.2, {"g6.xlarge": 0.4}), plan("sp-dear", 5.0, {"g6.xlarge": 0.6})
    held = commitment_holdings(
        [dear, cheap], "us-east-1", [("online", ("g6.xlarge",), 5), ("batch", ("g6.xlarge",), 8)]
    )
    assert [(h.reference, h.count, h.usd_per_hour) for h in held["online"]] == [
        ("sp-cheap", 3, 0.4),
        ("sp-dear", 2, 0.6),
    ]
    # what online left: 5.0 - 2 x 0.6 = 3.8 $/h, six more instances at 0.6
    assert [(h.reference, h.count) for h in held["batch"]] == [("sp-dear", 6)]
    assert all(h.kind == SAVINGS_PLAN and h.ends_at == ENDS for h in held["online"] + held["batch"])


def test_an_instance_savings_plan_covers_its_family_in_its_region_only():
    family = plan(plan_type="EC2Instance", family="g5", region="us-east-1", rates={"g6.xlarge": 0.5, "g5.xlarge": 0.6})
    held = commitment_holdings([family], "us-east-1", [("online", ("g6.xlarge", "g5.xlarge"), 4)])
    assert [(h.instance_type, h.count) for h in held["online"]] == [("g5.xlarge", 3)]  # 2.0 // 0.6
    assert commitment_holdings([family], "us-west-2", [("online", ("g5.xlarge",), 4)])["online"] == ()


def test_the_accounts_answers_are_read_as_aws_documents_them():
    plans = [
        {
            "savingsPlanId": "sp-1",
            "savingsPlanArn": "arn:aws:savingsplans::1:savingsplan/sp-1",
            "state": "active",
            "savingsPlanType": "Compute",
            "commitment": "10.0",
            "currency": "USD",
            "end": "2027-06-01T00:00:00.000Z",
        },
        {
            "savingsPlanId": "sp-2",
            "savingsPlanArn": "x",
            "state": "retired",
            "savingsPlanType": "Compute",
            "commitment": "5",
            "end": "2027-06-01T00:00:00Z",
        },
        {
            "savingsPlanId": "sp-3",
            "savingsPlanArn": "y",
            "state": "active",
            "savingsPlanType": "SageMaker",
            "commitment": "5",
            "end": "2027-06-01T00:00:00Z",
        },
        {
            "savingsPlanId": "sp-4",
            "savingsPlanArn": "z",
            "state": "active",
            "savingsPlanType": "Compute",
            "commitment": "NaN",
            "end": "2027-06-01T00:00:00Z",
        },
    ]
    rates = [
        {
            "rate": "0.5",
            "unit": "Hrs",
            "productType": "EC2",
            "properties": [
                {"name": "region", "value": "us-east-1"},
                {"name": "instanceType", "value": "g6.xlarge"},
                {"name": "productDescription", "value": "Linux/UNIX"},
                {"name": "tenancy", "value": "shared"},
            ],
        },
        {
            "rate": "0.9",
            "unit": "Hrs",
            "productType": "EC2",
            "properties": [
                {"name": "region", "value": "us-east-1"},
                {"name": "instanceType", "value": "g6.xlarge"},
                {"name": "productDescription", "value": "Windows"},
                {"name": "tenancy", "value": "shared"},
            ],
        },
        {
            "rate": "0.4",
            "unit": "Hrs",
            "productType": "EC2",
            "properties": [
                {"name": "region", "value": "us-west-2"},
                {"name": "instanceType", "value": "g6.xlarge"},
                {"name": "productDescription", "value": "Linux/UNIX"},
                {"name": "tenancy", "value": "shared"},
            ],
        },
    ]
    # $10 an hour: a day wholly unused leaves $240, and every hour had its $10
    unused = every_hour_headroom(
        [
            [
                {
                    "SavingsPlanArn": "arn:aws:savingsplans::1:savingsplan/sp-1",
                    "Utilization": {"UnusedCommitment": "240.0", "TotalCommitment": "240"},
                }
            ]
        ]
    )
    (found,) = savings_plan_commitments(plans, {"sp-1": plan_rates(rates, "us-east-1")}, unused, NOW)
    assert (found.plan_id, found.unused_per_hour, dict(found.rates)) == ("sp-1", 10.0, {"g6.xlarge": 0.5})
    assert "the least headroom every hour of the last 7 days had" in found.source
    assert found.ends_at == datetime(2027, 6, 1, tzinfo=UTC)
    # a plan Cost Explorer does not report has no headroom: nothing is assumed unused that no one measured
    assert savings_plan_commitments(plans[:1], {}, {}, NOW)[0].unused_per_hour == 0.0
    assert savings_plan_commitments(plans[:1], {}, unused, datetime(2027, 7, 1, tzinfo=UTC)) == []


def test_reservations_are_held_in_their_zone_and_a_block_is_paid_up_front():
    answer = [
        {
            "CapacityReservationId": "cr-0aaa",
            "InstanceType": "g6.xlarge",
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": "us-east-1a",
            "Tenancy": "default",
            "TotalInstanceCount": 2,
            "State": "active",
            "InstanceMatchCriteria": "targeted",
            "ReservationType": "default",
        },
        {
            "CapacityReservationId": "cr-0bbb",
            "InstanceType": "p5.48xlarge",
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": "us-east-1b",
            "Tenancy": "default",
            "TotalInstanceCount": 1,
            "State": "active",
            "ReservationType": "capacity-block",
            "EndDate": NOW + timedelta(days=2),
        },
        {
            "CapacityReservationId": "cr-0ccc",
            "InstanceType": "g6.xlarge",
            "InstancePlatform": "Windows",
            "AvailabilityZone": "us-east-1a",
            "TotalInstanceCount": 2,
            "State": "active",
        },
        {
            "CapacityReservationId": "cr-0ddd",
            "InstanceType": "g6.xlarge",
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": "us-east-1a",
            "TotalInstanceCount": 2,
            "State": "expired",
        },
    ]
    held = reservation_holdings(answer, {"g6.xlarge": 0.8048}.get, NOW)
    assert [(h.reference, h.kind, h.count, h.usd_per_hour, h.zone, h.targeted) for h in held] == [
        ("cr-0aaa", CAPACITY_RESERVATION, 2, 0.8048, "us-east-1a", True),
        ("cr-0bbb", CAPACITY_BLOCK, 1, 0.0, "us-east-1b", True),
    ]


def test_a_reservation_goes_to_a_group_that_runs_in_its_zone_and_a_block_to_none():
    reserved = ReservedHolding("g6.xlarge", 3, 0.8, "x", CAPACITY_RESERVATION, "cr-1", "us-east-1c")
    block = ReservedHolding("g6.xlarge", 1, 0.0, "x", CAPACITY_BLOCK, "cr-2", "us-east-1a", targeted=True)
    allocated = allocate_holdings(
        [reserved, block],
        [("a", ("g6.xlarge",), 8, ("us-east-1a",)), ("b", ("g6.xlarge",), 8, ("us-east-1b", "us-east-1c"))],
    )
    assert allocated["a"] == () and [h.reference for h in allocated["b"]] == ["cr-1"]


def test_what_a_holding_is_survives_the_lock():
    held = (
        ReservedHolding("g6.xlarge", 2, 0.5, "s", SAVINGS_PLAN, "sp-1", ends_at=ENDS),
        ReservedHolding("g6.xlarge", 1, 0.8048, "s", CAPACITY_RESERVATION, "cr-1", "us-east-1a", targeted=True),
        ReservedHolding("g6.xlarge", 4, 0.507, "s"),
    )
    recorded = holdings_constraint(held)
    assert recorded[2] == ["g6.xlarge", 4, 0.507]  # a Reserved Instance is recorded as before
    back = holdings_from_constraints({"holdings": recorded}, "s")
    assert back == held


def test_commitments_go_into_the_base_and_the_explanation_says_which_holds_what():
    committed = (
        ReservedHolding("g6.xlarge", 3, 0.5, "Cost Explorer", SAVINGS_PLAN, "sp-1", ends_at=ENDS),
        ReservedHolding("g6.xlarge", 1, 0.8048, "account", CAPACITY_RESERVATION, "cr-1", "us-east-1a"),
    )
    online = request("online", ("g6.xlarge", "g5.xlarge", "g6e.xlarge"), desired=6, max_gpus=24, holdings=committed)
    plan_ = plan_capacity(online, book({"g6.xlarge": 0.3, "g5.xlarge": 0.3, "g6e.xlarge": 0.3}), NOW)
    assert plan_.on_demand_base_gpus >= 4  # 3 under the Savings Plan + 1 reserved (the class baseline is 85 %)
    text = "\n".join(plan_.explanation)
    assert "held by savings-plan sp-1: 3 x g6.xlarge at $0.5000/h, ends 2027-06-19 12:00Z" in text
    assert "held by capacity-reservation cr-1: 1 x g6.xlarge in us-east-1a at $0.8048/h" in text
    assert text.index("savings-plan sp-1") < text.index("capacity-reservation cr-1")  # commitments, then reservations
    assert "(3 savings-plan + 1 capacity-reservation)" in text


@settings(max_examples=200, deadline=None)
@given(
    committed=st.integers(0, 16),
    desired=st.integers(0, 32),
    extra=st.integers(0, 32),
    ratio=st.floats(0.05, 0.95),
    workload=st.sampled_from(["batch", "online"]),
)
def test_no_spot_unit_takes_an_hour_a_commitment_would_leave_unused(committed, desired, extra, ratio, workload):
    """At every size the group may run, spot appears only above the committed units: the on-demand units
    are never fewer than the commitment the group can use (the smaller of it and the size)."""
    holding = (
        (ReservedHolding("g6.xlarge", committed, 0.5, "t", SAVINGS_PLAN, "sp-1", ends_at=ENDS),) if committed else ()
    )
    max_gpus = max(desired, 1) + extra
    group = request(
        workload, ("g6.xlarge", "g5.xlarge", "g6e.xlarge"), desired=desired, max_gpus=max_gpus, holdings=holding
    )
    decided = plan_capacity(group, book({"g6.xlarge": ratio, "g5.xlarge": ratio, "g6e.xlarge": ratio}), NOW)
    usable = min(committed, max_gpus)
    for size in range(0, max_gpus + 1):
        assert decided.mix.on_demand_units(size) >= min(usable, size) - 1e-9


def test_holdings_are_split_in_group_order_by_type_zone_and_room_and_never_twice():
    ri = ReservedHolding("g6.xlarge", 5, 0.5, "ri")
    big = ReservedHolding("g6.12xlarge", 3, 2.9, "ri")
    single = ReservedHolding("g5.xlarge", 1, 0.6, "ri")
    empty = ReservedHolding("g5.xlarge", 0, 0.6, "ri")
    reserved = ReservedHolding("g6.xlarge", 2, 0.8048, "cr", CAPACITY_RESERVATION, "cr-1", "us-east-1a")
    allocated = allocate_holdings(
        [ri, big, single, empty, reserved],
        [
            ("online", ("g6.xlarge",), 4, ZONES),  # 4 of the 5 RIs; no room left for the reservation
            ("batch", ("g6.12xlarge", "g6.xlarge"), 8, ("us-east-1a",)),  # 2 of 3 (4 GPUs each); none of g6.xlarge
            (
                "third",
                ("g6.xlarge", "g5.xlarge"),
                10,
                ("us-east-1b",),
            ),  # the 5th RI and the single g5; not us-east-1a's
            ("fourth", ("g6.xlarge",), 3, ("us-east-1a",)),  # the reservation, in its zone
        ],
    )
    counts = {name: [(h.instance_type, h.kind, h.count) for h in held] for name, held in allocated.items()}
    assert counts == {
        "online": [("g6.xlarge", "reserved-instance", 4)],
        "batch": [("g6.12xlarge", "reserved-instance", 2)],
        "third": [("g6.xlarge", "reserved-instance", 1), ("g5.xlarge", "reserved-instance", 1)],
        "fourth": [("g6.xlarge", CAPACITY_RESERVATION, 2)],
    }
    assert allocated["fourth"][0].reference == "cr-1" and allocated["fourth"][0].zone == "us-east-1a"


def test_every_field_of_a_plan_is_read_and_only_a_usd_plan_active_now_counts():
    ends = "2027-06-01T00:00:00Z"
    instance = {
        "savingsPlanId": "sp-i",
        "savingsPlanArn": "arn:i",
        "state": "active",
        "savingsPlanType": "EC2Instance",
        "ec2InstanceFamily": "g6",
        "region": "us-east-1",
        "commitment": "3.5",
        "currency": "USD",
        "end": ends,
    }
    unused = every_hour_headroom(
        [
            [
                {"SavingsPlanArn": "arn:i", "Utilization": {"UnusedCommitment": "84", "TotalCommitment": "84"}},
                {"SavingsPlanArn": "arn:x", "Utilization": {"UnusedCommitment": "x", "TotalCommitment": "84"}},
                {"SavingsPlanArn": "arn:y", "Utilization": {"UnusedCommitment": "24"}},  # no total: not judged
                {"Utilization": {"UnusedCommitment": "5", "TotalCommitment": "84"}},
            ]
        ]
    )
    assert unused == {"arn:i": 3.5}
    (read,) = savings_plan_commitments([instance], {"sp-i": {"g6.xlarge": 0.55}}, unused, NOW)
    assert read == SavingsPlanCommitment(
        "sp-i",
        "EC2Instance",
        "g6",
        "us-east-1",
        3.5,
        3.5,
        {"g6.xlarge": 0.55},
        datetime(2027, 6, 1, tzinfo=UTC),
        f"describe_savings_plans and {HEADROOM_READING}",
    )
    # never more headroom than the commitment itself
    assert savings_plan_commitments([instance], {}, {"arn:i": 9.0}, NOW)[0].unused_per_hour == 3.5
    for change in (
        {"currency": "EUR"},
        {"end": NOW.isoformat()},
        {"end": "soon"},
        {"commitment": "-1"},
        {"commitment": None},
        {"state": "queued"},
    ):
        assert savings_plan_commitments([{**instance, **change}], {}, unused, NOW) == [], change
    just_after = (NOW + timedelta(seconds=1)).isoformat()
    assert savings_plan_commitments([{**instance, "end": just_after}], {}, unused, NOW) != []


def test_a_rate_counts_for_ec2_linux_shared_tenancy_in_the_region_by_the_hour_only():
    def result(**change):
        properties = {
            "region": "us-east-1",
            "instanceType": "g6.xlarge",
            "productDescription": "Linux/UNIX",
            "tenancy": "shared",
            **change.pop("properties", {}),
        }
        return {
            "rate": "0.5",
            "unit": "Hrs",
            "productType": "EC2",
            "properties": [{"name": k, "value": v} for k, v in properties.items() if v is not None],
            **change,
        }

    assert plan_rates([result()], "us-east-1") == {"g6.xlarge": 0.5}
    assert plan_rates([result(properties={"tenancy": None})], "us-east-1") == {"g6.xlarge": 0.5}
    for bad in (
        result(unit="Request"),
        result(productType="Fargate"),
        result(rate="0"),
        result(rate="inf"),
        result(properties={"tenancy": "dedicated"}),
        result(properties={"instanceType": None}),
        result(properties={"productDescription": "Windows"}),
    ):
        assert plan_rates([bad], "us-east-1") == {}, bad


def test_every_field_of_a_reservation_is_read_and_only_a_linux_default_one_active_now_counts():
    base = {
        "CapacityReservationId": "cr-0aaa",
        "InstanceType": "g6.xlarge",
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": "us-east-1a",
        "Tenancy": "default",
        "TotalInstanceCount": 2,
        "State": "active",
        "InstanceMatchCriteria": "open",
        "ReservationType": "default",
        "EndDate": NOW + timedelta(hours=1),
    }
    (held,) = reservation_holdings([base], {"g6.xlarge": 0.8048}.get, NOW)
    assert held == ReservedHolding(
        "g6.xlarge",
        2,
        0.8048,
        "describe_capacity_reservations (billed at on-demand, used or not)",
        CAPACITY_RESERVATION,
        "cr-0aaa",
        "us-east-1a",
        NOW + timedelta(hours=1),
        False,
    )
    (block,) = reservation_holdings([{**base, "ReservationType": "capacity-block"}], {}.get, NOW)
    assert (block.kind, block.usd_per_hour, block.targeted, block.source) == (
        CAPACITY_BLOCK,
        0.0,
        True,
        "describe_capacity_reservations (paid up front)",
    )
    for change in (
        {"EndDate": NOW},
        {"Tenancy": "dedicated"},
        {"TotalInstanceCount": 0},
        {"TotalInstanceCount": "2"},
        {"State": "pending"},
        {"InstancePlatform": "Windows"},
        {"InstanceType": "p5.48xlarge"},
    ):  # no on-demand rate known for it: left out
        assert reservation_holdings([{**base, **change}, base], {"g6.xlarge": 0.8048}.get, NOW) == [held], change


def test_plans_of_one_rate_are_spent_in_id_order():
    first, second = plan("sp-b", 1.0, {"g6.xlarge": 0.5}), plan("sp-a", 1.0, {"g6.xlarge": 0.5})
    held = commitment_holdings([first, second], "us-east-1", [("online", ("g6.xlarge",), 3)])
    assert [(h.reference, h.count) for h in held["online"]] == [("sp-a", 2), ("sp-b", 1)]


@pytest.mark.parametrize(
    "entry, allowed",
    [
        (
            [
                "g6.xlarge",
                1,
                0.0,
                {
                    "kind": "capacity-reservation",
                    "reference": "cr-0123456789abcdef0",
                    "zone": "us-east-1a",
                    "targeted": True,
                    "ends_at": None,
                },
            ],
            False,
        ),  # a reservation is not free
        (["g6.xlarge", 1, 0.0], False),  # nor a Reserved Instance
        (
            [
                "p5.48xlarge",
                1,
                0.0,
                {
                    "kind": "capacity-block",
                    "reference": "cr-0123456789abcdef0",
                    "zone": "us-east-1a",
                    "targeted": True,
                    "ends_at": "2027-01-01T00:00:00Z",
                },
            ],
            True,
        ),  # paid up front
        (
            [
                "g6.xlarge",
                1,
                0.8,
                {
                    "kind": "capacity-reservation",
                    "reference": "arn:aws:ec2:other/evil",
                    "zone": "us-east-1a",
                    "targeted": True,
                    "ends_at": None,
                },
            ],
            False,
        ),  # not EC2's id form
        (
            [
                "g6.xlarge",
                1,
                0.5,
                {"kind": "savings-plan", "reference": "sp-1", "zone": "mars-1a", "targeted": False, "ends_at": None},
            ],
            False,
        ),
    ],
)
def test_a_hand_edited_lock_holding_is_bounded(entry, allowed):
    from pydantic import ValidationError

    from components.capacity.lock import LockedConstraints

    constraints = {
        "workload_class": {},
        "instance_types": ["g6.xlarge"],
        "zones": ["us-east-1a"],
        "min_gpus": 0,
        "desired_gpus": 1,
        "max_gpus": 2,
        "holdings": [entry],
    }
    text = json.dumps(constraints)  # as the lock file is read
    if allowed:
        LockedConstraints.model_validate_json(text)
    else:
        with pytest.raises(ValidationError):
            LockedConstraints.model_validate_json(text)


def test_a_plan_idle_by_night_and_full_by_day_has_no_headroom_to_count_on():
    """Issue 53 item 7: the day's unused commitment over 24 showed headroom all day for a plan full by day."""
    hourly = 10.0
    day = {"TotalCommitment": str(24 * hourly)}
    night_idle = [{"SavingsPlanArn": "arn:p", "Utilization": {**day, "UnusedCommitment": str(12 * hourly)}}]
    assert every_hour_headroom([night_idle]) == {"arn:p": 0.0}
    # Always a quarter unused: every hour had $2.50, the one day the least of the window decides.
    quarter = [{"SavingsPlanArn": "arn:p", "Utilization": {**day, "UnusedCommitment": str(6 * hourly)}}]
    mostly = [{"SavingsPlanArn": "arn:p", "Utilization": {**day, "UnusedCommitment": str(23.5 * hourly)}}]
    assert every_hour_headroom([mostly]) == {"arn:p": 5.0}
    assert every_hour_headroom([mostly, night_idle, mostly]) == {"arn:p": 0.0}
    assert every_hour_headroom([quarter]) == {"arn:p": 0.0}  # a day's figures cannot show the quarter was even


def test_the_window_is_the_full_days_before_now():
    periods = full_days(NOW, 3)
    assert periods[0] == last_full_day(NOW) and len({p["Start"] for p in periods}) == 3
    assert all(p["End"] > p["Start"] for p in periods) and periods[-1]["Start"] < periods[0]["Start"]
