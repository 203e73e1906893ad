"""Whether a Capacity Block is worth buying for a campaign (issue 38, item 3): the request shapes AWS
takes, each offering against on-demand that may not be there and spot with its interruptions."""

from datetime import UTC, datetime, timedelta

import pytest

from components.capacity.blocks import (
    Campaign,
    Offering,
    alternatives,
    block_durations_hours,
    judge,
    offerings_from_answer,
    purchase_command,
    shapes,
)

NOW = datetime(2026, 12, 5, tzinfo=UTC)
BY = NOW + timedelta(days=30)
P5 = 55.04  # us-east-1 p5.48xlarge on-demand $/h, 8 GPUs


def campaign(**changes):
    values = dict(
        gpu_hours=2000,
        by=BY,
        gpus_per_instance=8,
        on_demand_usd_per_hour=P5,
        on_demand_chance=0.5,
        miss_cost_usd=2000 * P5 / 8,
    )
    return Campaign(**{**values, **changes})


def offering(fee, instances=2, hours=168, end=None, offering_id="cb-0123456789abcdef0"):
    start = NOW + timedelta(days=7)
    return Offering(
        offering_id, "p5.48xlarge", "us-east-1a", instances, start, end or start + timedelta(hours=hours), hours, fee
    )


def test_durations_are_whole_days_to_two_weeks_then_whole_weeks_to_182_days():
    hours = block_durations_hours()
    assert hours[:3] == [24, 48, 72] and 14 * 24 in hours and 15 * 24 not in hours and 21 * 24 in hours
    assert hours[-1] == 182 * 24 and all(h % 24 == 0 for h in hours)


def test_shapes_cover_the_need_within_the_window_least_waste_first():
    # 1 instance for 11 days wastes 112 GPU-hours; 2 for 6 days, 304; 4 for 3 days, 304
    assert shapes(2000, 8, 30 * 24) == [(1, 11 * 24), (2, 6 * 24), (4, 3 * 24)]
    for count, hours in shapes(2000, 8, 30 * 24):
        assert count * 8 * hours >= 2000 and hours <= 30 * 24 and hours in block_durations_hours()
    assert shapes(2000, 8, 20) == []  # no block is shorter than a day


def test_the_alternatives_price_the_chance_on_demand_is_not_there():
    ((name, usd),) = alternatives(campaign())
    assert name == "on-demand" and usd == pytest.approx(0.5 * 2000 * P5 / 8 + 0.5 * 2000 * P5 / 8)
    assert alternatives(campaign(on_demand_chance=1.0))[0][1] == pytest.approx(2000 * P5 / 8)
    spot = dict(
        alternatives(campaign(spot_usd_per_hour=20.0, interruptions_per_month=1.0, hours_lost_per_interruption=0.5))
    )["spot"]
    on_demand = 0.5 * 2000 * P5 / 8 + 0.5 * 2000 * P5 / 8
    assert spot == pytest.approx(0.5 * 2000 * (2.5 + 1 / 730 * 0.5 * P5 / 8) + 0.5 * on_demand)


def test_spot_is_tried_first_with_its_own_chance_and_on_demand_behind_it():
    """Spot capacity there 90 % of the time, on-demand 30 %, the date worth three times the campaign."""
    values = dict(
        spot_usd_per_hour=20.0, interruptions_per_month=0.0, on_demand_chance=0.3, miss_cost_usd=3 * 2000 * P5 / 8
    )
    on_demand = 0.3 * 2000 * P5 / 8 + 0.7 * 3 * 2000 * P5 / 8
    both = dict(alternatives(campaign(spot_chance=0.9, **values)))
    assert both == pytest.approx({"on-demand": on_demand, "spot": 0.9 * 2000 * 2.5 + 0.1 * on_demand})
    assert dict(alternatives(campaign(**values)))["spot"] == pytest.approx(0.3 * 2000 * 2.5 + 0.7 * on_demand)


@pytest.mark.parametrize("fee, buy", [(13_759.0, True), (13_761.0, False)])
def test_a_block_is_bought_only_below_the_cheapest_expected_alternative(fee, buy):
    # the expected on-demand cost at a 50 % chance with the date worth the campaign: exactly 2000 x P5 / 8
    (verdict,) = judge([offering(fee)], campaign())
    assert verdict.buy is buy and verdict.alternative == "on-demand" and verdict.alternative_usd == 13_760.0


def test_a_block_that_covers_less_pays_the_rest_at_on_demand_and_one_ending_late_is_not_judged():
    small = offering(5000.0, instances=1, hours=120)  # 960 GPU-hours of the 2,000
    late = offering(1.0, end=BY + timedelta(hours=1), offering_id="cb-late")
    (verdict,) = judge([small, late], campaign())
    assert verdict.block_usd == pytest.approx(5000 + (2000 - 960) * P5 / 8)
    assert "covers 960 of 2,000 GPU-hours" in verdict.reason


def test_offerings_are_read_as_ec2_answers_them_and_the_purchase_is_a_command_to_run():
    answer = [
        {
            "CapacityBlockOfferingId": "cb-0a",
            "InstanceType": "p5.48xlarge",
            "AvailabilityZone": "us-east-1a",
            "InstanceCount": 2,
            "StartDate": NOW,
            "EndDate": NOW + timedelta(days=5),
            "CapacityBlockDurationHours": 120,
            "UpfrontFee": "10544.64",
            "CurrencyCode": "USD",
            "Tenancy": "default",
        },
        {
            "CapacityBlockOfferingId": "cb-0b",
            "InstanceType": "p5.48xlarge",
            "InstanceCount": 2,
            "StartDate": NOW,
            "EndDate": NOW,
            "CapacityBlockDurationHours": 120,
            "UpfrontFee": "1",
            "CurrencyCode": "EUR",
        },
        {"CapacityBlockOfferingId": "cb-0c", "InstanceType": "p5.48xlarge"},
    ]
    (read,) = offerings_from_answer(answer)
    assert (read.offering_id, read.upfront_usd, read.hours, read.zone) == ("cb-0a", 10544.64, 120, "us-east-1a")
    assert purchase_command(read, "us-east-1") == (
        "aws ec2 purchase-capacity-block --region us-east-1 "
        "--capacity-block-offering-id cb-0a --instance-platform Linux/UNIX"
    )


def test_the_duration_table_and_the_window_edges():
    hours = block_durations_hours()
    assert len(hours) == 14 + 24 and hours[13] == 14 * 24 and hours[14] == 21 * 24 and hours[-2] == 175 * 24
    assert shapes(24 * 8, 8, 24)[0] == (1, 24)  # a block exactly as long as the window fits, no waste first
    assert shapes(24 * 8, 8, 23.9) == []
    assert shapes(64 * 8 * 24, 8, 24) == [(64, 24)]  # 64 instances is the most asked for


def test_a_block_ending_exactly_at_the_date_is_judged_and_a_fee_that_is_no_price_is_not():
    at_the_date = offering(10_000.0, end=BY, offering_id="cb-edge")
    negative, nan = offering(-1.0, offering_id="cb-neg"), offering(float("nan"), offering_id="cb-nan")
    verdicts = judge([negative, nan, at_the_date], campaign())
    assert [v.offering.offering_id for v in verdicts] == ["cb-edge"]
    assert verdicts[0].reason == (
        "covers 2,000 of 2,000 GPU-hours for $10,000.00, below the expected $13,760.00 on-demand"
    )


def test_verdicts_come_cheapest_block_first():
    verdicts = judge([offering(12_000.0, offering_id="cb-b"), offering(11_000.0, offering_id="cb-a")], campaign())
    assert [v.offering.offering_id for v in verdicts] == ["cb-a", "cb-b"] and [v.block_usd for v in verdicts] == [
        11_000.0,
        12_000.0,
    ]


def test_the_cheapest_alternative_sets_the_bar_whichever_it_is_and_an_equal_block_is_not_bought():
    cheap_spot = campaign(spot_usd_per_hour=8.0)
    (verdict,) = judge([offering(100_000.0)], cheap_spot)
    assert verdict.alternative == "spot" and not verdict.buy
    assert verdict.reason.endswith(f"not below the expected ${verdict.alternative_usd:,.2f} spot")
    (equal,) = judge([offering(13_760.0)], campaign())
    assert not equal.buy and equal.block_usd == equal.alternative_usd == 13_760.0
    free, cheap = judge([offering(0.0, offering_id="cb-free"), offering(0.5, offering_id="cb-cheap")], campaign())
    assert (free.offering.offering_id, free.buy, cheap.buy) == ("cb-free", True, True)


def test_amounts_are_rounded_to_the_cent():
    (verdict,) = judge([offering(1234.5678)], campaign(on_demand_chance=0.3333))
    assert verdict.block_usd == 1234.57 and verdict.alternative_usd == round(verdict.alternative_usd, 2)
    assert str(verdict.alternative_usd).split(".")[1].__len__() <= 2


def test_the_spot_alternative_is_priced_per_month_of_interruptions():
    from components.pricing.prices import HOURS_PER_MONTH

    spot = dict(
        alternatives(
            campaign(
                spot_usd_per_hour=20.0,
                interruptions_per_month=2.0,
                hours_lost_per_interruption=0.5,
                on_demand_chance=1.0,
            )
        )
    )["spot"]
    assert spot == pytest.approx(2000 * (2.5 + 2.0 / HOURS_PER_MONTH * 0.5 * P5 / 8), rel=1e-12)


def test_the_least_waste_comes_first_even_when_more_instances_waste_less():
    # 2,880 GPU-hours: one instance needs 15 days, so 21 (a week step); two need 8 days: less waste
    assert shapes(2880, 8, 60 * 24) == [(2, 192), (4, 96), (8, 48)]


def test_every_field_of_an_offering_is_read_and_a_bad_one_does_not_stop_the_rest():
    good = {
        "CapacityBlockOfferingId": "cb-0a",
        "InstanceType": "p5.48xlarge",
        "InstanceCount": 2,
        "StartDate": NOW,
        "EndDate": NOW + timedelta(days=5),
        "CapacityBlockDurationHours": 120,
        "UpfrontFee": "10544.64",
    }
    assert offerings_from_answer([{"CapacityBlockOfferingId": "cb-bad"}, good]) == [
        Offering("cb-0a", "p5.48xlarge", "", 2, NOW, NOW + timedelta(days=5), 120, 10544.64)
    ]
