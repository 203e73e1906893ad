"""Whether to buy a Capacity Block for ML for one campaign: GPU-hours needed by a date, weighed per
offering against on-demand (which may not be there) and spot (with its interruptions). Pure.

The program never buys: `seedance capacity-blocks plan` prints this recommendation and the purchase
command a person runs. AWS's rules for the request (docs: "Find and purchase Capacity Blocks",
`DescribeCapacityBlockOfferings`): a block lasts 1 to 14 days in whole days, then up to 182 days in
whole weeks; holds 1 to 64 instances; starts within eight weeks; is paid up front, in full, whatever
is used; cannot be cancelled. Savings Plans and RIs do not apply to it.

Each alternative is priced for the campaign's whole need:
- a block: its fee, plus any GPU-hours it does not cover at on-demand;
- on-demand: the need at the on-demand rate, found with probability `on_demand_chance` (GPU capacity
  is often simply not there); otherwise the campaign misses its date, which costs `miss_cost`;
- spot (classes that allow it, from a fresh spot price), tried first with on-demand behind it: the
  need at the spot rate plus each interruption's lost work and warm-up at on-demand when spot capacity
  is there (`spot_chance`, default: on-demand's chance), else the on-demand alternative above.
A block is recommended when it costs less than the cheapest alternative's expected cost.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from components.pricing.prices import HOURS_PER_MONTH, utc_text

HOURS_PER_DAY = 24
MAX_DAILY_DAYS = 14
MAX_WEEKS_DAYS = 182
MAX_INSTANCES = 64
# The instance counts asked about, smallest first (AWS returns offerings per count and duration).
ASKED_COUNTS = (1, 2, 4, 8, 16, 32, 64)


def block_durations_hours() -> list[int]:
    """Every duration AWS takes: 1-14 days, then whole weeks to 182 days."""
    days = list(range(1, MAX_DAILY_DAYS + 1)) + list(range(21, MAX_WEEKS_DAYS + 1, 7))
    return [d * HOURS_PER_DAY for d in days]


def shapes(gpu_hours: float, gpus_per_instance: int, hours_available: float, limit: int = 3) -> list[tuple[int, int]]:
    """(instances, hours) requests that cover `gpu_hours` within `hours_available`, least waste first."""
    found = []
    for count in ASKED_COUNTS:
        needed = gpu_hours / (count * gpus_per_instance)
        duration = next((h for h in block_durations_hours() if h >= needed), None)
        if duration is None or duration > hours_available:
            continue
        found.append((count * gpus_per_instance * duration - gpu_hours, count, duration))
    return [(count, duration) for _waste, count, duration in sorted(found)[:limit]]


@dataclass(frozen=True)
class Offering:
    offering_id: str
    instance_type: str
    zone: str
    instances: int
    start: datetime
    end: datetime
    hours: int
    upfront_usd: float


@dataclass(frozen=True)
class Campaign:
    gpu_hours: float
    by: datetime
    gpus_per_instance: int
    on_demand_usd_per_hour: float  # per instance
    on_demand_chance: float  # 0-1: how likely on-demand capacity is there for the campaign
    miss_cost_usd: float  # what missing the date costs
    spot_usd_per_hour: float | None = None  # per instance, fresh; None: spot not an alternative
    interruptions_per_month: float = 1.0
    hours_lost_per_interruption: float = 0.5  # the class's lost work and warm-up
    spot_chance: float | None = None  # 0-1: how likely spot capacity is there; None: on-demand's chance


@dataclass(frozen=True)
class Verdict:
    offering: Offering
    buy: bool
    block_usd: float
    alternative: str
    alternative_usd: float
    reason: str


def alternatives(campaign: Campaign) -> list[tuple[str, float]]:
    """The expected cost of the campaign without a block, per way of buying it."""
    gpu_rate = campaign.on_demand_usd_per_hour / campaign.gpus_per_instance
    miss = (1 - campaign.on_demand_chance) * campaign.miss_cost_usd
    on_demand = campaign.on_demand_chance * campaign.gpu_hours * gpu_rate + miss
    found = [("on-demand", on_demand)]
    if campaign.spot_usd_per_hour is not None:
        spot_rate = campaign.spot_usd_per_hour / campaign.gpus_per_instance
        lost = campaign.interruptions_per_month / HOURS_PER_MONTH * campaign.hours_lost_per_interruption * gpu_rate
        there = campaign.on_demand_chance if campaign.spot_chance is None else campaign.spot_chance
        found.append(("spot", there * campaign.gpu_hours * (spot_rate + lost) + (1 - there) * on_demand))
    return found


def judge(offerings: Iterable[Offering], campaign: Campaign) -> list[Verdict]:
    """One verdict per offering that ends by the campaign's date, cheapest block first."""
    options = alternatives(campaign)
    best_name, best_usd = min(options, key=lambda option: option[1])
    gpu_rate = campaign.on_demand_usd_per_hour / campaign.gpus_per_instance
    verdicts = []
    for offering in offerings:
        if offering.end > campaign.by or not math.isfinite(offering.upfront_usd) or offering.upfront_usd < 0:
            continue
        covered = min(campaign.gpu_hours, offering.instances * campaign.gpus_per_instance * offering.hours)
        block_usd = offering.upfront_usd + (campaign.gpu_hours - covered) * gpu_rate
        buy = block_usd < best_usd
        share = f"covers {covered:,.0f} of {campaign.gpu_hours:,.0f} GPU-hours"
        reason = (
            f"{share} for ${block_usd:,.2f}, below the expected ${best_usd:,.2f} {best_name}"
            if buy
            else f"{share} for ${block_usd:,.2f}, not below the expected ${best_usd:,.2f} {best_name}"
        )
        verdicts.append(Verdict(offering, buy, round(block_usd, 2), best_name, round(best_usd, 2), reason))
    return sorted(verdicts, key=lambda v: v.block_usd)


def block_config_entry(group: str, offering: Offering) -> str:
    """The stack-file entry that runs a purchased block: YAML for the group's `capacity_blocks`."""
    return "\n".join(
        [
            f"capacity_blocks:  # in seedance-gpu:gpu_node_groups, the entry named {group}",
            "  - reservation_id: cr-...  # from the purchase",
            f"    instance_type: {offering.instance_type}",
            f"    zone: {offering.zone}",
            f"    instance_count: {offering.instances}",
            f'    starts_at: "{utc_text(offering.start)}"',
            f'    ends_at: "{utc_text(offering.end)}"',
        ]
    )


def purchase_command(offering: Offering, region: str) -> str:
    """What a person runs to buy it (the program never does): blocks cannot be cancelled."""
    return (
        f"aws ec2 purchase-capacity-block --region {region} --capacity-block-offering-id {offering.offering_id} "
        "--instance-platform Linux/UNIX"
    )


def offerings_from_answer(answer: Sequence[dict[str, Any]]) -> list[Offering]:
    """`DescribeCapacityBlockOfferings`' CapacityBlockOfferings (UpfrontFee is a decimal string, in USD only)."""
    found = []
    for item in answer:
        try:
            fee = float(item["UpfrontFee"])
            start, end = (_utc(item["StartDate"]), _utc(item["EndDate"]))
            found.append(
                Offering(
                    str(item["CapacityBlockOfferingId"]),
                    str(item["InstanceType"]),
                    str(item.get("AvailabilityZone", "")),
                    int(item["InstanceCount"]),
                    start,
                    end,
                    int(item["CapacityBlockDurationHours"]),
                    fee,
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # an offering of another shape is not judged
        if item.get("CurrencyCode", "USD") != "USD":
            found.pop()
    return found


def _utc(moment: datetime) -> datetime:
    """EC2's times, which botocore parses aware; one without a zone is UTC, as AWS's are."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
