"""The account's holdings split between a stack's GPU groups. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from components.catalog.instance_types import gpu_instance_type
from components.pricing.reserved import CAPACITY_BLOCK, ReservedHolding


def allocate_holdings(
    holdings: Iterable[ReservedHolding], groups: Iterable[tuple[str, tuple[str, ...], int, Sequence[str]]]
) -> dict[str, tuple[ReservedHolding, ...]]:
    """Split account-level holdings between node groups, in the order given (name, instance types,
    max GPUs, zones).

    Each group takes, of every type it lists, as many held instances as fit in its max size (a
    reservation only where the group runs in its zone); what is left passes to the next group. A
    holding bills per instance, so it is never counted twice. Capacity Blocks are left out: only a
    launch template that names a block launches into it.
    """
    left = [h for h in holdings if h.kind != CAPACITY_BLOCK and h.count > 0]
    allocated: dict[str, tuple[ReservedHolding, ...]] = {}
    for name, instance_types, max_gpus, zones in groups:
        taken = []
        room = max_gpus
        for instance_type in instance_types:
            gpus = gpu_instance_type(instance_type).gpus
            for index, holding in enumerate(left):
                if (
                    holding.instance_type != instance_type
                    or holding.count == 0
                    or room < gpus
                    or (holding.zone and holding.zone not in zones)
                ):
                    continue
                count = min(holding.count, room // gpus)
                taken.append(replace(holding, count=count))
                left[index] = replace(holding, count=holding.count - count)
                room -= count * gpus
        allocated[name] = tuple(taken)
    return allocated
