"""What a plan costs: the pools it buys per hour, their expected cost with interruptions, the price
noise between two plans, and the roll a change causes. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from components.capacity.context import DecisionContext
from components.capacity.mix import Pool, price_mix
from components.capacity.plan import CapacityPlan, GroupRequest, PlannerSettings
from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import PriceBook


def spot_pools(spot_types: Sequence[str], request: GroupRequest, book: PriceBook) -> list[tuple[float, str]] | None:
    """Per zone, the pool price-capacity-optimized allocation takes: the cheapest of the types per GPU
    (all with capacity, as far as prices tell), as ($/GPU-h, type). None when there are no types or
    a type lacks a price in a zone."""
    pools = []
    for zone in request.zones:
        prices = [(p, t) for t in spot_types if (p := book.spot_price(t, zone)) is not None]
        if not spot_types or len(prices) < len(spot_types):
            return None
        pools.append(min((p.usd_per_hour / gpu_instance_type(t).gpus, t) for p, t in prices))
    return pools


def spend(plan: CapacityPlan, request: GroupRequest, book: PriceBook) -> list[tuple[Pool, float, float]] | None:
    """What `plan` buys per hour at the request's reference size, as (pool, GPUs, $/GPU-h) lines.
    None when a price is missing.

    On-demand GPUs: first the Reserved Instances of the plan's types at their rates, the rest at the
    on-demand rate of the top-priority type. Spot GPUs: split evenly over the zones (the group
    balances them), each zone's on its cheapest spot type.
    """
    gpus = request.reference_gpus
    if gpus <= 0 or not plan.instance_types:
        return []
    mix, top = plan.mix, plan.instance_types[0]
    offers = [
        (
            h.instance_type,
            h.count * gpu_instance_type(h.instance_type).gpus,
            h.usd_per_hour / gpu_instance_type(h.instance_type).gpus,
        )
        for h in request.holdings
        if h.instance_type in plan.instance_types
    ]
    price = book.on_demand_price(top)
    pools = spot_pools(plan.spot_types, request, book) if mix.spot_units(gpus) > 0 else []
    return price_mix(
        mix,
        gpus,
        (top, price.usd_per_hour / gpu_instance_type(top).gpus if price else None),
        None if pools is None else [(t, zone, rate) for zone, (rate, t) in zip(request.zones, pools)],
        offers,
    )


def hourly_cost(plan: CapacityPlan, request: GroupRequest, book: PriceBook) -> float | None:
    """Expected $/h of `plan` at the request's reference size and `book`'s prices (see `spend`); None if a
    price is missing."""
    lines = spend(plan, request, book)
    return None if lines is None else sum(gpus * price for _pool, gpus, price in lines)


def expected_cost(plan: CapacityPlan, context: DecisionContext) -> float | None:
    """What decisions compare: `hourly_cost` plus the spot GPUs' expected interruption cost."""
    lines = spend(plan, context.request, context.book)
    if lines is None or context.reference is None:
        return None
    return sum(
        gpus * (context.spot_gpu_cost(price, t) if market == "spot" else price)
        for (market, t, _zone), gpus, price in lines
    )


def saving_noise(
    current: CapacityPlan, new: CapacityPlan, request: GroupRequest, book: PriceBook, settings: PlannerSettings
) -> float:
    """How far the saving of `new` over `current` ($/h) can be off when each market price moves by
    `price_noise`: the noise x the spend the two plans do not share, pool by pool (Reserved
    Instances have fixed rates). Plans on the same pools share their prices, so only what differs is uncertain."""
    gpus: dict[Pool, float] = {}
    price: dict[Pool, float] = {}
    for plan, sign in ((current, 1), (new, -1)):
        for pool, pool_gpus, pool_price in spend(plan, request, book) or []:
            if pool[0] != "reserved":
                gpus[pool] = gpus.get(pool, 0.0) + sign * pool_gpus
                price[pool] = pool_price
    return settings.price_noise * sum(abs(g) * price[pool] for pool, g in gpus.items())


def switching_cost(context: DecisionContext) -> float | None:
    """What a plan change costs once: the roll replaces every GPU of the group, each warming up."""
    if context.reference is None:
        return None
    request = context.request
    return request.reference_gpus * request.workload_class.warmup_seconds / 3600 * context.reference
