"""Reserved Instance holdings as the account reports them, and their effective hourly rate. Pure."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class ReservedHolding:
    instance_type: str
    count: int
    usd_per_hour: float  # effective rate per instance: upfront / term hours + usage + recurring
    source: str


def effective_hourly_rate(fixed_price: float, duration_seconds: int, usage_price: float,
                          recurring_hourly: float) -> float:
    """Upfront spread over the term's hours, plus the hourly usage and recurring charges."""
    hours = duration_seconds / 3600
    return (fixed_price / hours if hours else 0.0) + usage_price + recurring_hourly


def holdings_from_reserved_instances(reserved: Iterable[dict]) -> list[ReservedHolding]:
    """Active Linux RIs from `describe_reserved_instances`, summed per type at the count-weighted mean rate."""
    counts: dict[str, int] = defaultdict(int)
    spend: dict[str, float] = defaultdict(float)
    for ri in reserved:
        if ri.get("State") != "active":
            continue
        recurring = sum(float(c["Amount"]) for c in ri.get("RecurringCharges", []) if c.get("Frequency") == "Hourly")
        rate = effective_hourly_rate(float(ri.get("FixedPrice", 0)), int(ri.get("Duration", 0)),
                                     float(ri.get("UsagePrice", 0)), recurring)
        counts[ri["InstanceType"]] += int(ri["InstanceCount"])
        spend[ri["InstanceType"]] += rate * int(ri["InstanceCount"])
    return [ReservedHolding(instance_type=t, count=counts[t], usd_per_hour=round(spend[t] / counts[t], 6),
                            source="describe_reserved_instances (active)")
            for t in sorted(counts)]
