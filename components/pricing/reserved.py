"""What the account already holds for a group's on-demand units, as the account reports it: Reserved
Instances, Savings Plan commitment, On-Demand Capacity Reservations and Capacity Blocks. Pure.

Each is a holding of whole instances of one type at an hourly rate per instance that is paid whether the
instances run or not (an RI's effective rate, a Savings Plan's rate for the type, the on-demand rate a
reservation bills, a block's fee over its hours), so a group's on-demand base covers its holdings before
anything else, and no spot unit displaces one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

RESERVED_INSTANCE = "reserved-instance"
SAVINGS_PLAN = "savings-plan"
CAPACITY_RESERVATION = "capacity-reservation"
CAPACITY_BLOCK = "capacity-block"
# The order the decision explains them in: commitments, reservations, blocks (then on-demand, then spot).
HOLDING_KINDS = (SAVINGS_PLAN, RESERVED_INSTANCE, CAPACITY_RESERVATION, CAPACITY_BLOCK)


@dataclass(frozen=True)
class ReservedHolding:
    instance_type: str
    count: int
    usd_per_hour: float  # per instance, paid whether it runs: see the module's docstring
    source: str
    kind: str = RESERVED_INSTANCE
    reference: str = ""  # the Savings Plan's or the reservation's id
    zone: str = ""  # a reservation's zone; "" for what applies in every zone of the region
    ends_at: datetime | None = None
    targeted: bool = False  # a reservation only instances that name it launch into

    @property
    def described(self) -> str:
        """The holding as a decision's explanation names it."""
        where = f" in {self.zone}" if self.zone else ""
        until = f", ends {self.ends_at.astimezone(UTC):%Y-%m-%d %H:%M}Z" if self.ends_at else ""
        name = f"{self.kind} {self.reference}".strip() if self.reference else self.kind
        return (
            f"{name}: {self.count} x {self.instance_type}{where} at ${self.usd_per_hour:,.4f}/h{until}, {self.source}"
        )


def effective_hourly_rate(
    fixed_price: float, duration_seconds: int, usage_price: float, recurring_hourly: float
) -> float:
    """Upfront spread over the term's hours, plus the hourly usage and recurring charges."""
    hours = duration_seconds / 3600
    return (fixed_price / hours if hours else 0.0) + usage_price + recurring_hourly


def holdings_from_reserved_instances(reserved: Iterable[dict[str, Any]]) -> list[ReservedHolding]:
    """Active Linux RIs from `describe_reserved_instances`, summed per type at the count-weighted mean rate."""
    counts: dict[str, int] = defaultdict(int)
    spend: dict[str, float] = defaultdict(float)
    for ri in reserved:
        if ri.get("State") != "active":
            continue
        recurring = sum(float(c["Amount"]) for c in ri.get("RecurringCharges", []) if c.get("Frequency") == "Hourly")
        rate = effective_hourly_rate(
            float(ri.get("FixedPrice", 0)), int(ri.get("Duration", 0)), float(ri.get("UsagePrice", 0)), recurring
        )
        counts[ri["InstanceType"]] += int(ri["InstanceCount"])
        spend[ri["InstanceType"]] += rate * int(ri["InstanceCount"])
    return [
        ReservedHolding(
            instance_type=t,
            count=counts[t],
            usd_per_hour=round(spend[t] / counts[t], 6),
            source="describe_reserved_instances (active)",
        )
        for t in sorted(counts)
    ]
