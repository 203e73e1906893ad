"""Reserved Instance holdings split between a stack's GPU groups, and their record in a plan's tags. Pure."""

from __future__ import annotations

from typing import Iterable

from components.pricing.reserved import ReservedHolding
from components.catalog.instance_types import gpu_instance_type


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
