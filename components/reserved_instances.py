"""Reserved Instance holdings and their effective hourly rate. Pure: parses EC2's answer."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from components.capacity_plan import ReservedHolding
from components.gpu_instance_types import gpu_instance_type


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


def allocate_holdings(holdings: Iterable[ReservedHolding],
                      groups: Iterable[tuple[str, tuple[str, ...], int]]) -> dict[str, tuple[ReservedHolding, ...]]:
    """Split account-level RIs between node groups, in the order given (name, instance types, max GPUs).

    Each group takes, of every type it lists, as many held instances as fit in its max size; what
    is left passes to the next group. RIs bill per instance, so a holding is never counted twice.
    """
    left = {h.instance_type: h for h in holdings}
    allocated: dict[str, tuple[ReservedHolding, ...]] = {}
    for name, instance_types, max_gpus in groups:
        taken = []
        room = max_gpus
        for instance_type in instance_types:
            holding = left.get(instance_type)
            gpus = gpu_instance_type(instance_type).gpus
            if holding is None or holding.count == 0 or room < gpus:
                continue
            count = min(holding.count, room // gpus)
            taken.append(ReservedHolding(instance_type, count, holding.usd_per_hour, holding.source))
            left[instance_type] = ReservedHolding(instance_type, holding.count - count, holding.usd_per_hour,
                                                  holding.source)
            room -= count * gpus
        allocated[name] = tuple(taken)
    return allocated


# The tag that carries a GPU group's Reserved Instances in the plan, so every reader of the plan (the
# cost estimate offline and in the policy pack) prices them as the capacity decision did.
HOLDINGS_TAG = "seedance.io/reserved-instances"


def holdings_tag(holdings: Iterable[ReservedHolding]) -> str:
    """`<type>=<count>@<usd per hour>` per holding, space separated (characters AWS tags allow)."""
    return " ".join(f"{h.instance_type}={h.count}@{h.usd_per_hour:.6f}" for h in holdings if h.count > 0)


def holdings_from_tag(value: str) -> list[tuple[str, int, float]]:
    """(type, count, usd per hour) from `holdings_tag`'s text."""
    held = []
    for entry in value.split():
        instance_type, rest = entry.split("=", 1)
        count, rate = rest.split("@", 1)
        held.append((instance_type, int(count), float(rate)))
    return held
