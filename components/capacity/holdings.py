"""Reserved Instance holdings split between a stack's GPU groups. Pure."""

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

