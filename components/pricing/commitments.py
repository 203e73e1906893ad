"""Savings Plans and capacity reservations as the account reports them, read into holdings. Pure.

Savings Plans (`savingsplans:DescribeSavingsPlans`, `DescribeSavingsPlanRates`) bill a dollar commitment
per hour whether or not usage fills it; Cost Explorer's utilisation (`GetSavingsPlansUtilizationDetails`)
says how much of it went unused on the last full day. That unused part is headroom: on-demand instance
hours inside it are already paid, at the plan's rate for the type, so the decision puts them in a
group's on-demand base (and never on spot). On-Demand Capacity Reservations
(`ec2:DescribeCapacityReservations`) bill the on-demand rate for every reserved instance, used or not;
Capacity Blocks for ML are reservations of type `capacity-block`, paid up front for their window.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import parse_time
from components.pricing.reserved import CAPACITY_BLOCK, CAPACITY_RESERVATION, SAVINGS_PLAN, ReservedHolding

LINUX = "Linux/UNIX"


@dataclass(frozen=True)
class SavingsPlanCommitment:
    plan_id: str
    plan_type: str  # Compute or EC2Instance
    instance_family: str  # an EC2Instance plan's family ("" for Compute)
    region: str  # an EC2Instance plan's region ("" for Compute: any)
    hourly_commitment: float
    unused_per_hour: float  # the headroom: commitment every hour left unused (HEADROOM_READING)
    rates: Mapping[str, float]  # instance type -> $/h under this plan (Linux, shared tenancy, the region)
    ends_at: datetime
    source: str

    def covers(self, instance_type: str, region: str) -> bool:
        if self.plan_type == "EC2Instance":
            return self.region == region and instance_type.split(".")[0] == self.instance_family
        return self.plan_type == "Compute"


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _when(value: Any) -> datetime | None:
    """An answer's time, in UTC when it names no zone (AWS's are UTC); None when it is no time."""
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = parse_time(str(value))
        except ValueError:
            return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def plan_rates(search_results: Iterable[Mapping[str, Any]], region: str) -> dict[str, float]:
    """A plan's hourly Linux, shared-tenancy EC2 rates in `region`, by instance type, from
    `DescribeSavingsPlanRates` (each result's `properties` name the type, region, OS and tenancy)."""
    rates = {}
    for result in search_results:
        properties = {p.get("name"): p.get("value") for p in result.get("properties") or []}
        rate = _number(result.get("rate"))
        if (
            result.get("productType") == "EC2"
            and result.get("unit") == "Hrs"
            and rate
            and properties.get("region") == region
            and properties.get("productDescription") == LINUX
            and properties.get("tenancy") in ("shared", None)
            and properties.get("instanceType")
        ):
            rates[properties["instanceType"]] = rate
    return rates


def savings_plan_commitments(
    plans: Iterable[Mapping[str, Any]],
    rates: Mapping[str, Mapping[str, float]],
    unused_by_arn: Mapping[str, float],
    now: datetime,
) -> list[SavingsPlanCommitment]:
    """The active Compute and EC2 Instance Savings Plans with their headroom (`unused_by_arn`: unused
    commitment per hour by plan ARN, `every_hour_headroom`; a plan Cost Explorer does not report has none:
    nothing is assumed unused that no one measured)."""
    found = []
    for plan in plans:
        ends = _when(plan.get("end"))
        commitment = _number(plan.get("commitment"))
        if (
            plan.get("state") != "active"
            or plan.get("savingsPlanType") not in ("Compute", "EC2Instance")
            or ends is None
            or ends <= now
            or commitment is None
            or plan.get("currency", "USD") != "USD"
        ):
            continue
        unused = min(commitment, unused_by_arn.get(plan.get("savingsPlanArn", ""), 0.0))
        plan_id = plan.get("savingsPlanId")
        found.append(
            SavingsPlanCommitment(
                plan_id=str(plan_id),
                plan_type=str(plan["savingsPlanType"]),
                instance_family=str(plan.get("ec2InstanceFamily") or ""),
                region=str(plan.get("region") or ""),
                hourly_commitment=commitment,
                unused_per_hour=unused,
                rates=dict(rates.get(plan_id, {}) if isinstance(plan_id, str) else {}),
                ends_at=ends,
                source=f"describe_savings_plans and {HEADROOM_READING}",
            )
        )
    return found


# Cost Explorer gives a Savings Plan's utilisation by the day at the finest (GetSavingsPlansUtilization takes
# DAILY or MONTHLY; hourly figures are only in the Cost and Usage Report, which this does not read), and its data
# is a day late. A day's average per hour overstates the headroom: a plan idle 12 hours and full the other 12
# shows half its commitment unused "per hour" while none is left while it is full. What a day guarantees is
# the headroom its fullest hour still had: with unused U and total T (T/24 an hour), at least U - 23/24 T.
# The least of that over the last UTILISATION_DAYS full days is what the capacity decision counts on.
UTILISATION_DAYS = 7
HOURS_A_DAY = 24
HEADROOM_READING = (
    f"the least headroom every hour of the last {UTILISATION_DAYS} days had, from Cost Explorer's daily "
    "utilisation (hourly utilisation is in the Cost and Usage Report only)"
)


def last_full_day(now: datetime) -> dict[str, str]:
    """Cost Explorer's TimePeriod for the day before `now` (Start inclusive, End exclusive)."""
    return {"Start": (now - timedelta(days=1)).date().isoformat(), "End": now.date().isoformat()}


def full_days(now: datetime, days: int = UTILISATION_DAYS) -> list[dict[str, str]]:
    """The TimePeriods of the `days` full days before `now`, the latest first."""
    return [last_full_day(now - timedelta(days=back)) for back in range(days)]


def every_hour_headroom(days: Iterable[Iterable[Mapping[str, Any]]]) -> dict[str, float]:
    """Unused commitment per hour that every hour of every day had, by plan ARN: for each day's
    `GetSavingsPlansUtilizationDetails`, max(0, unused - 23/24 of the day's total), the least over the days
    that report the plan."""
    floors: dict[str, float] = {}
    for details in days:
        for detail in details:
            utilization = detail.get("Utilization") or {}
            unused, total = _number(utilization.get("UnusedCommitment")), _number(utilization.get("TotalCommitment"))
            arn = detail.get("SavingsPlanArn")
            if not arn or unused is None or total is None or total <= 0:
                continue
            floor = max(0.0, unused - total * (HOURS_A_DAY - 1) / HOURS_A_DAY)
            floors[arn] = min(floors.get(arn, floor), floor)
    return floors


def commitment_holdings(
    commitments: Sequence[SavingsPlanCommitment], region: str, groups: Sequence[tuple[str, Sequence[str], int]]
) -> dict[str, tuple[ReservedHolding, ...]]:
    """Savings Plan headroom as instances of the groups' types, group by group in the order given
    ((name, instance types in on-demand order, desired GPUs)): each group takes, of the first type a
    plan covers, the whole instances the headroom pays for at the plan's rate, up to its desired size
    (the units it runs); what is left passes on. Plans are spent cheapest rate first."""
    left = {c.plan_id: c.unused_per_hour for c in commitments}
    allocated: dict[str, tuple[ReservedHolding, ...]] = {}
    for name, instance_types, desired_gpus in groups:
        taken: list[ReservedHolding] = []
        room = desired_gpus
        for instance_type in instance_types:
            gpus = gpu_instance_type(instance_type).gpus
            offers = sorted(
                (
                    (c.rates[instance_type], c)
                    for c in commitments
                    if instance_type in c.rates and c.covers(instance_type, region)
                ),
                key=lambda offer: (offer[0], offer[1].plan_id),
            )  # plans of one rate: by id
            for rate, commitment in offers:
                count = min(int(left[commitment.plan_id] / rate + 1e-9), room // gpus)  # 1.2 / 0.4 is 3
                if count <= 0:
                    continue
                left[commitment.plan_id] -= count * rate
                room -= count * gpus
                taken.append(
                    ReservedHolding(
                        instance_type,
                        count,
                        rate,
                        commitment.source,
                        SAVINGS_PLAN,
                        commitment.plan_id,
                        ends_at=commitment.ends_at,
                    )
                )
        allocated[name] = tuple(taken)
    return allocated


def reservation_holdings(
    reservations: Iterable[Mapping[str, Any]], on_demand_rate: Callable[[str], float | None], now: datetime
) -> list[ReservedHolding]:
    """Active Linux, default-tenancy capacity reservations as holdings in their zones: an On-Demand
    Capacity Reservation at the on-demand rate it bills (left out when that rate is unknown), a Capacity
    Block at its fee over its hours (not reported here: counted at 0, as paid)."""
    holdings = []
    for reservation in reservations:
        ends = _when(reservation.get("EndDate"))
        count = reservation.get("TotalInstanceCount")
        if (
            reservation.get("State") != "active"
            or reservation.get("InstancePlatform") != LINUX
            or reservation.get("Tenancy", "default") != "default"
            or not isinstance(count, int)
            or count <= 0
            or (ends is not None and ends <= now)
        ):
            continue
        block = reservation.get("ReservationType") == CAPACITY_BLOCK
        rate = 0.0 if block else on_demand_rate(str(reservation.get("InstanceType")))
        if rate is None:
            continue
        holdings.append(
            ReservedHolding(
                str(reservation["InstanceType"]),
                count,
                rate,
                "describe_capacity_reservations"
                + (" (paid up front)" if block else " (billed at on-demand, used or not)"),
                CAPACITY_BLOCK if block else CAPACITY_RESERVATION,
                str(reservation.get("CapacityReservationId", "")),
                str(reservation.get("AvailabilityZone", "")),
                ends,
                block or reservation.get("InstanceMatchCriteria") == "targeted",
            )
        )
    return holdings
