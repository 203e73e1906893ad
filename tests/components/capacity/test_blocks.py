"""Whether a Capacity Block is worth buying for a campaign (issue 38, item 3): the request shapes AWS
takes, each offering against on-demand that may not be there and spot with its interruptions."""

from datetime import datetime, timedelta, timezone

import pytest

from components.capacity.blocks import (Campaign, Offering, alternatives, block_durations_hours, judge,
                                        offerings_from_answer, purchase_command, shapes)

NOW = datetime(2026, 12, 5, tzinfo=timezone.utc)
BY = NOW + timedelta(days=30)
P5 = 55.04  # us-east-1 p5.48xlarge on-demand $/h, 8 GPUs


def campaign(**changes):
    values = dict(gpu_hours=2000, by=BY, gpus_per_instance=8, on_demand_usd_per_hour=P5, on_demand_chance=0.5,
                  miss_cost_usd=2000 * P5 / 8)
    return Campaign(**{**values, **changes})


def offering(fee, instances=2, hours=168, end=None, offering_id="cb-0123456789abcdef0"):
    start = NOW + timedelta(days=7)
    return Offering(offering_id, "p5.48xlarge", "us-east-1a", instances, start, end or start + timedelta(hours=hours),
                    hours, fee)


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
    (name, usd), = alternatives(campaign())
    assert name == "on-demand" and usd == pytest.approx(0.5 * 2000 * P5 / 8 + 0.5 * 2000 * P5 / 8)
    assert alternatives(campaign(on_demand_chance=1.0))[0][1] == pytest.approx(2000 * P5 / 8)
    spot = dict(alternatives(campaign(spot_usd_per_hour=20.0, interruptions_per_month=1.0,
                                      hours_lost_per_interruption=0.5)))["spot"]
    assert spot == pytest.approx(0.5 * 2000 * (2.5 + 1 / 730 * 0.5 * P5 / 8) + 0.5 * 2000 * P5 / 8)


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
    answer = [{"CapacityBlockOfferingId": "cb-0a", "InstanceType": "p5.48xlarge", "AvailabilityZone": "us-east-1a",
               "InstanceCount": 2, "StartDate": NOW, "EndDate": NOW + timedelta(days=5),
               "CapacityBlockDurationHours": 120, "UpfrontFee": "10544.64", "CurrencyCode": "USD", "Tenancy": "default"},
              {"CapacityBlockOfferingId": "cb-0b", "InstanceType": "p5.48xlarge", "InstanceCount": 2,
               "StartDate": NOW, "EndDate": NOW, "CapacityBlockDurationHours": 120, "UpfrontFee": "1", "CurrencyCode": "EUR"},
              {"CapacityBlockOfferingId": "cb-0c", "InstanceType": "p5.48xlarge"}]
    (read,) = offerings_from_answer(answer)
    assert (read.offering_id, read.upfront_usd, read.hours, read.zone) == ("cb-0a", 10544.64, 120, "us-east-1a")
    assert purchase_command(read, "us-east-1") == ("aws ec2 purchase-capacity-block --region us-east-1 "
                                                   "--capacity-block-offering-id cb-0a --instance-platform Linux/UNIX")
