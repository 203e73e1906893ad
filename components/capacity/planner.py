"""The Spot / On-Demand / Reserved-Instance mix of one GPU node group, decided on expected cost. Pure.

Capacity is decided in GPUs. Every type of a group has the same GPU count, and the node group
renders the sizes and the on-demand base in instances (the base rounded up), because the cluster
autoscaler counts instances; the spot share is the same in either unit.

The rules, in the order they apply:
- A spot GPU of a type is expected to cost its spot price plus its expected interruption cost: how
  often the type is reclaimed (the Spot Instance Advisor's frequency; unknown or old: the worst
  band) x the class's lost work and warm-up, valued at the group's cheapest non-spot GPU (its
  reference). Each zone runs its spot share on its cheapest listed pool, so a type is judged in the
  zone where it is cheapest: it may run spot when its expected cost there is below the reference,
  from fresh prices in every zone; a missing or stale price makes the type ineligible: unknown
  never adds spot. The source's rule (spot below `spot_price_ratio` x the type's RI rate)
  is an optional guard on top. With a current plan, both thresholds are bands (enter below
  `threshold x band`, stay up to `threshold / band`, band = (1 - noise) / (1 + noise)), and the
  on-demand order is kept unless prices moved beyond the band, so price noise cannot change a plan.
- Spot is used only when enough types are eligible (`min_spot_types`, or all of a smaller group),
  and, for classes with `min_placement_score`, when fresh placement scores reach it: in some zone
  for the group's whole spot share at max size, or in every zone for its own part of it.
- The group as a whole must beat on-demand: a spot GPU on the eligible types (each zone on its
  cheapest) must be expected to cost less than the reference, and the plan less than all on-demand
  (its on-demand GPUs run on the first eligible or RI-held type, dearer when the cheapest on-demand
  type is not spot-eligible). Both are banded like the types' thresholds.
- The on-demand base covers the Reserved Instances the group can use and the class RI baseline.
- The on-demand percentage above the base is the smallest that keeps the spot share within the
  class cap at every size up to `max_gpus` (the share grows with size, so the maximum is the bound).
  Spot, when used, always fills the cap: a spot GPU was expected to cost less than the reference
  when spot was adopted, so cost falls with each GPU moved to spot.
- A new plan replaces the current one when its expected saving over `horizon_hours`, less what price
  noise could explain (the noise x the spend the two plans do not share), repays the roll it
  causes (every GPU of the group is replaced and warms up once), or when the current one no longer
  fits the group's constraints. Stale or missing prices keep the current plan.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Sequence

from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import InterruptionFrequency, PlacementRequest, Price, PriceBook
from components.pricing.reserved import ReservedHolding
from components.capacity.mix import (GroupMix, holdings_constraint, holdings_from_constraints,
                                     percentage_within_cap, reserved_cover)
from components.capacity.workload_classes import WorkloadClass

SPOT_ALLOCATION_STRATEGY = "price-capacity-optimized"
# On-demand capacity goes to the first type that has capacity: RI-covered types are listed first.
ON_DEMAND_ALLOCATION_STRATEGY = "prioritized"
# Placement scores move by a point or two between queries; a current spot plan is dropped only
# when every zone falls further than this below the class minimum.
PLACEMENT_SCORE_SLACK = 1
HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class PlannerSettings:
    spot_price_ratio: float | None = None  # optional guard, the source's rule (0.6): spot below this x the RI rate
    horizon_hours: float = 168.0  # a plan change must repay its roll within this many hours of saving
    max_price_age: timedelta = timedelta(hours=6)
    price_noise: float = 0.05  # relative price movement treated as noise
    min_spot_types: int = 1  # spot types to spread over (each in every zone), where the group lists that many
    # The Spot Instance Advisor's frequencies cover a trailing month; older ones, or none, count as
    # the worst band (every instance reclaimed once a month), so unknown never adds spot.
    max_interruption_data_age: timedelta = timedelta(days=35)
    unknown_interruptions_per_month: float = 1.0

    @property
    def noise_band(self) -> float:
        return (1 - self.price_noise) / (1 + self.price_noise)


@dataclass(frozen=True)
class GroupRequest:
    """What one node group asks of the planner: the constraints a plan must fit."""

    name: str
    workload_class: WorkloadClass
    instance_types: tuple[str, ...]
    zones: tuple[str, ...]
    min_gpus: int
    desired_gpus: int
    max_gpus: int
    holdings: tuple[ReservedHolding, ...] = ()

    @property
    def reference_gpus(self) -> int:
        """The size plans are costed at: desired, or max for a group that rests at zero."""
        return self.desired_gpus or self.max_gpus

    def constraints(self) -> dict:
        """Everything a plan was decided for; a plan whose constraints differ no longer fits."""
        return {
            "workload_class": asdict(self.workload_class),
            "instance_types": list(self.instance_types),
            "zones": list(self.zones),
            "min_gpus": self.min_gpus,
            "desired_gpus": self.desired_gpus,
            "max_gpus": self.max_gpus,
            "holdings": holdings_constraint(self.holdings),
        }


@dataclass(frozen=True)
class CapacityPlan:
    group: str
    instance_types: tuple[str, ...]  # launch template overrides, in on-demand priority order
    spot_types: tuple[str, ...]  # the types judged spot-eligible (empty: no spot)
    on_demand_base_gpus: int
    on_demand_percentage_above_base: int
    capacity_rebalance: bool
    expected_usd_per_hour: float  # at the reference size and the prices of the decision
    all_on_demand_usd_per_hour: float
    constraints: dict
    explanation: tuple[str, ...]
    spot_allocation_strategy: str = SPOT_ALLOCATION_STRATEGY
    on_demand_allocation_strategy: str = ON_DEMAND_ALLOCATION_STRATEGY

    @property
    def mix(self) -> GroupMix:
        """The plan's mix in GPUs, with the Reserved Instances it was decided with."""
        return GroupMix(self.on_demand_base_gpus, self.on_demand_percentage_above_base, self.instance_types,
                        self.spot_types, holdings_from_constraints(self.constraints))

    def spot_share_at(self, gpus: int) -> float:
        """Share of `gpus` the group runs on spot with this distribution."""
        return self.mix.spot_share_at(gpus)

    @property
    def max_spot_share(self) -> float:
        return self.spot_share_at(self.constraints["max_gpus"])

    def to_json(self) -> dict:
        return {**asdict(self), "instance_types": list(self.instance_types), "spot_types": list(self.spot_types),
                "explanation": list(self.explanation)}

    @classmethod
    def from_json(cls, data: dict) -> "CapacityPlan":
        return cls(**{**data, "instance_types": tuple(data["instance_types"]), "spot_types": tuple(data["spot_types"]),
                      "explanation": tuple(data["explanation"])})


@dataclass(frozen=True)
class Decision:
    plan: CapacityPlan
    changed: bool
    # Which rule decided: first-plan, constraint, saving, keep:same-plan, keep:saving-below-roll-cost,
    # keep:stale-prices.
    rule: str
    reasons: tuple[str, ...]
    prices_used: PriceBook = field(repr=False)


def _money(value: float) -> str:
    return f"${value:,.4f}"


def _observed(price: Price | InterruptionFrequency | None) -> str:
    """When a price was observed, as a date: an explanation then reads the same on any later day (the
    stack's outputs carry it), where an age would change with every run."""
    return "unknown" if price is None else f"observed {price.observed_at.astimezone(timezone.utc):%Y-%m-%d %H:%M}Z"


def _fresh(price: Price | None, now: datetime, settings: PlannerSettings) -> bool:
    return price is not None and price.age(now) <= settings.max_price_age


def _rate_per_gpu(instance_type: str, request: GroupRequest, book: PriceBook) -> tuple[float | None, Price | None, str]:
    """What a GPU of this type costs off spot: the cheapest RI held for it, else on-demand."""
    held = [h for h in request.holdings if h.instance_type == instance_type and h.count > 0]
    gpus = gpu_instance_type(instance_type).gpus
    if held:
        cheapest = min(held, key=lambda h: h.usd_per_hour)
        return cheapest.usd_per_hour / gpus, None, f"RI {instance_type} ({cheapest.source})"
    price = book.on_demand_price(instance_type)
    return (price.usd_per_hour / gpus if price else None), price, f"on-demand {instance_type}"


def _reference_rate(request: GroupRequest, book: PriceBook, now, settings) -> tuple[float | None, str]:
    """The cheapest RI or on-demand GPU the group can run, per GPU-hour: spot must undercut it.

    None when an on-demand price that could set it is missing or stale: a type whose price is
    unknown may be the cheapest, and leaving it out would raise the reference. No spot is added then.
    """
    rates = []
    for instance_type in request.instance_types:
        rate, price, basis = _rate_per_gpu(instance_type, request, book)
        if rate is None:
            return None, f"{basis} price unknown"
        if price is not None and not _fresh(price, now, settings):
            return None, (f"{basis} price {_observed(price)}, not fresh (fresh means observed within "
                          f"{settings.max_price_age.total_seconds() / 3600:g} h of the decision)")
        rates.append((rate, basis))
    return min(rates)


def _zone_spot_prices(instance_type: str, request: GroupRequest, book: PriceBook) -> list[Price | None]:
    return [book.spot_price(instance_type, zone) for zone in request.zones]


def _interruptions_per_month(instance_type: str, book: PriceBook, now, settings) -> tuple[float, str]:
    frequency: InterruptionFrequency | None = book.interruption_frequency(instance_type)
    if frequency is None:
        return settings.unknown_interruptions_per_month, "frequency unknown, worst band assumed"
    if now - frequency.observed_at > settings.max_interruption_data_age:
        return settings.unknown_interruptions_per_month, f"frequency {_observed(frequency)}, older than {settings.max_interruption_data_age.days} days: worst band assumed"
    return frequency.per_month, f"{frequency.per_month:.0%}/month, {frequency.source}"


def interruption_cost_per_gpu_hour(instance_type: str, request: GroupRequest, book: PriceBook, now,
                                   settings: PlannerSettings, reference: float) -> tuple[float, str]:
    """Expected cost of interruptions per spot GPU-hour: reclaims per hour x (lost work + warm-up),
    valued at the group's reference GPU rate."""
    per_month, basis = _interruptions_per_month(instance_type, book, now, settings)
    klass = request.workload_class
    hours_lost = (klass.lost_work_seconds + klass.warmup_seconds) / 3600
    return per_month / HOURS_PER_MONTH * hours_lost * reference, basis


def _spot_eligibility(request, book, now, settings, current: CapacityPlan | None) -> tuple[list[str], list[str]]:
    """The spot-eligible types and the explanation: the reference rate, then one line per type."""
    reference, basis = _reference_rate(request, book, now, settings)
    if reference is None:
        return [], [f"spot: no type eligible, {basis}"]
    lines = [f"spot reference: {basis} at {_money(reference)}/GPU-h, the cheapest non-spot GPU of the group"]
    eligible = []
    for instance_type in request.instance_types:
        spot_prices = _zone_spot_prices(instance_type, request, book)
        missing = [z for z, p in zip(request.zones, spot_prices) if p is None]
        stale = [z for z, p in zip(request.zones, spot_prices) if p is not None and not _fresh(p, now, settings)]
        if missing or stale:
            why = ([f"spot price missing in {', '.join(missing)}"] if missing else []) + (
                [f"spot price older than {settings.max_price_age.total_seconds() / 3600:g} h in {', '.join(stale)}"]
                if stale else [])
            lines.append(f"spot {instance_type}: not eligible, {'; '.join(why)}")
            continue
        # Known: the reference above needs every type's RI or on-demand rate.
        own, _price, own_basis = _rate_per_gpu(instance_type, request, book)
        # Each zone takes its cheapest listed pool, so a type earns its place where it is cheapest.
        gpus = gpu_instance_type(instance_type).gpus
        spot, zone = min((p.usd_per_hour / gpus, z) for z, p in zip(request.zones, spot_prices))
        band = 1.0
        if current is not None:
            band = 1 / settings.noise_band if instance_type in current.spot_types else settings.noise_band
        interruptions, frequency = interruption_cost_per_gpu_hour(instance_type, request, book, now, settings,
                                                                  reference)
        expected = spot + interruptions
        ok = expected < band * reference
        oldest = max(spot_prices, key=lambda p: p.age(now))
        line = (f"spot {instance_type}: {_money(spot)}/GPU-h in {zone}, its cheapest zone ({_observed(oldest)}) + "
                f"interruptions {_money(interruptions)}/GPU-h ({frequency}) = {_money(expected)} vs the reference "
                f"{_money(band * reference)}")
        if settings.spot_price_ratio is not None:
            ratio = settings.spot_price_ratio * band
            ok = ok and spot < ratio * own
            line += f", guard {ratio:.3f} x {own_basis} {_money(own)} = {_money(ratio * own)}"
        lines.append(f"{line}: {'eligible' if ok else 'not eligible'}")
        if ok:
            eligible.append(instance_type)
    return eligible, lines


def placement_questions(request: GroupRequest) -> tuple[PlacementRequest, PlacementRequest] | tuple[()]:
    """What a class with `min_placement_score` asks EC2, scored per zone (`SingleAvailabilityZone`):
    can one zone host the group's whole spot share at max size, and can a zone host its own part
    of it. The group's balanced-best-effort distribution places the share either way: all in a zone
    that has capacity, or split over zones that each take theirs."""
    klass = request.workload_class
    if klass.min_placement_score is None or klass.max_spot_share <= 0:
        return ()
    smallest = min(gpu_instance_type(t).gpus for t in request.instance_types)
    whole = max(1, math.ceil(request.max_gpus * klass.max_spot_share / smallest))
    part = math.ceil(whole / max(1, len(request.zones)))
    return PlacementRequest(request.instance_types, whole), PlacementRequest(request.instance_types, part)


def _placement_allows_spot(request, book, now, settings, keeping: bool) -> tuple[bool | None, str]:
    """Spot enters when a fresh answer to either question reaches the class minimum in the zones it
    needs: for the whole share the best zone, for each zone's part every zone. A current spot plan
    stays while one is within PLACEMENT_SCORE_SLACK of it: leaving spot rolls every GPU of the group.
    A question counts when it is scored fresh in every zone; None when neither is (a failed read):
    unknown adds no spot and drops none. One answered and short is False, so a question EC2 never
    answers (its target capacity above the account's limit) cannot hold spot forever."""
    questions = placement_questions(request)
    if not questions:
        return True, "placement scores: not asked (no placement minimum, or no spot, for this class)"
    minimum = request.workload_class.min_placement_score
    needed, action = (minimum - PLACEMENT_SCORE_SLACK, "keep") if keeping else (minimum, "start")
    answers, answered = [], False
    whole, part = questions
    for question, label, combine, zones_needed in ((whole, "whole spot share", max, "best zone"),
                                                   (part, "a zone's part", min, "worst zone")):
        scores = [book.placement_score(question, zone) for zone in request.zones]
        label += f" ({question.target_capacity} instance{'s' if question.target_capacity > 1 else ''})"
        if any(s is None or s.observed_at < now - settings.max_price_age for s in scores):
            answers.append(f"{label}: not scored fresh in every zone")
            continue
        answered = True
        score = combine(s.score for s in scores)
        answers.append(f"{label}: {zones_needed} {score}")
        if score >= needed:
            return True, f"placement scores: {'; '.join(answers)} (>= {needed} to {action} spot)"
    if len(whole.instance_types) < 3:
        answers.append("EC2 scores a request of fewer than three instance types low")
    line = f"placement scores: {'; '.join(answers)} (class {request.workload_class.name} needs {needed} to {action} spot)"
    return (False if answered else None), line


def _order_types(request: GroupRequest, book: PriceBook, band: float, current: CapacityPlan | None) -> list[str]:
    """On-demand priority: RI-held types first (cheapest RI per GPU), then by on-demand price per GPU.
    The current plan's order stands while no type in it is cheaper than one before it beyond `band`."""
    priced = [t for t in request.instance_types if book.on_demand_price(t) is not None]

    def key(instance_type: str) -> tuple:
        gpus = gpu_instance_type(instance_type).gpus
        held = [h.usd_per_hour / gpus for h in request.holdings if h.instance_type == instance_type and h.count]
        on_demand = book.on_demand_price(instance_type).usd_per_hour / gpus
        return (0, min(held), instance_type) if held else (1, on_demand, instance_type)

    ordered = sorted(priced, key=key)
    if current is None or not set(current.instance_types) <= set(priced):
        return ordered
    keys = [key(t) for t in current.instance_types]
    if not all(a[0] < b[0] or (a[0] == b[0] and b[1] >= band * a[1]) for i, a in enumerate(keys) for b in keys[i + 1:]):
        return ordered
    # The current plan's types keep their order, in the places they take in the fresh order.
    kept = iter(current.instance_types)
    return [next(kept) if t in current.instance_types else t for t in ordered]


def reserved_gpus(request: GroupRequest) -> int:
    listed = set(request.instance_types)
    return sum(h.count * gpu_instance_type(h.instance_type).gpus for h in request.holdings if h.instance_type in listed)


def distribution(request: GroupRequest, use_spot: bool) -> tuple[int, int]:
    """(on-demand base GPUs, on-demand percentage above base) for the group, with or without spot."""
    klass = request.workload_class
    baseline = math.ceil(klass.ri_baseline * request.desired_gpus - 1e-9)
    base = min(request.max_gpus, max(reserved_gpus(request), baseline))
    if not use_spot:
        return base, 100
    return base, percentage_within_cap(base, request.max_gpus, klass.max_spot_share)


Pool = tuple[str, str, str]  # (market, instance type, zone); on-demand and reserved pools have no zone


def _spot_pools(spot_types: Sequence[str], request: GroupRequest, book: PriceBook) -> list[tuple[float, str]] | None:
    """Per zone, the pool price-capacity-optimized allocation takes: the cheapest of the types per GPU
    (all with capacity, as far as prices tell), as ($/GPU-h, type). None when there are no types or
    a type lacks a price in a zone."""
    pools = []
    for zone in request.zones:
        prices = [(book.spot_price(t, zone), t) for t in spot_types]
        if not prices or any(p is None for p, _t in prices):
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
    mix = plan.mix
    spot_gpus = mix.spot_units(gpus)
    offers = [(h.instance_type, h.count * gpu_instance_type(h.instance_type).gpus,
               h.usd_per_hour / gpu_instance_type(h.instance_type).gpus)
              for h in request.holdings if h.instance_type in plan.instance_types]
    lines = [(("reserved", t, ""), covered, rate) for t, covered, rate in reserved_cover(mix.on_demand_units(gpus), offers)]
    remaining = mix.on_demand_units(gpus) - sum(covered for _pool, covered, _rate in lines)
    if remaining > 0:
        top = plan.instance_types[0]
        price = book.on_demand_price(top)
        if price is None:
            return None
        lines.append((("on-demand", top, ""), remaining, price.usd_per_hour / gpu_instance_type(top).gpus))
    if spot_gpus > 0:
        pools = _spot_pools(plan.spot_types, request, book)
        if pools is None:
            return None
        lines += [(("spot", t, zone), spot_gpus / len(request.zones), price)
                  for zone, (price, t) in zip(request.zones, pools)]
    return lines


def hourly_cost(plan: CapacityPlan, request: GroupRequest, book: PriceBook) -> float | None:
    """Expected $/h of `plan` at the request's reference size and `book`'s prices (see `spend`); None if a
    price is missing."""
    lines = spend(plan, request, book)
    return None if lines is None else sum(gpus * price for _pool, gpus, price in lines)


def expected_cost(plan: CapacityPlan, request: GroupRequest, book: PriceBook, now: datetime,
                  settings: PlannerSettings) -> float | None:
    """What decisions compare: `hourly_cost` plus the spot GPUs' expected interruption cost."""
    lines = spend(plan, request, book)
    reference, _basis = _reference_rate(request, book, now, settings)
    if lines is None or reference is None:
        return None
    return sum(gpus * (_spot_gpu_cost(price, t, request, book, now, settings, reference) if market == "spot" else price)
               for (market, t, _zone), gpus, price in lines)


def _spot_gpu_cost(price: float, instance_type: str, request: GroupRequest, book: PriceBook, now: datetime,
                   settings: PlannerSettings, reference: float) -> float:
    """A spot GPU's expected cost: its price plus its expected interruption cost."""
    return price + interruption_cost_per_gpu_hour(instance_type, request, book, now, settings, reference)[0]


def saving_noise(current: CapacityPlan, new: CapacityPlan, request: GroupRequest, book: PriceBook,
                 settings: PlannerSettings) -> float:
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


def switching_cost(request: GroupRequest, book: PriceBook, now: datetime, settings: PlannerSettings) -> float | None:
    """What a plan change costs once: the roll replaces every GPU of the group, each warming up."""
    reference, _basis = _reference_rate(request, book, now, settings)
    if reference is None:
        return None
    return request.reference_gpus * request.workload_class.warmup_seconds / 3600 * reference


def plan_capacity(
    request: GroupRequest,
    book: PriceBook,
    now: datetime,
    settings: PlannerSettings = PlannerSettings(),
    current: CapacityPlan | None = None,
) -> CapacityPlan:
    """The best plan for `request` at `book`'s prices; `current` only widens the eligibility band."""
    klass = request.workload_class
    ordered = _order_types(request, book, settings.noise_band, current)
    if not ordered:
        raise ValueError(f"group {request.name}: no on-demand price is known for any of "
                         f"{', '.join(request.instance_types)} in {book.region}")
    lines = [
        f"group {request.name}: class {klass.name} (max spot share {klass.max_spot_share:.0%}, RI baseline "
        f"{klass.ri_baseline:.0%}, interruption tolerance {klass.interruption_tolerance_seconds} s), "
        f"GPUs min {request.min_gpus} / desired {request.desired_gpus} / max {request.max_gpus}, "
        f"zones {', '.join(request.zones)}",
    ]
    for instance_type in request.instance_types:
        price = book.on_demand_price(instance_type)
        gpus = gpu_instance_type(instance_type).gpus
        if price is None:
            lines.append(f"on-demand {instance_type}: price unknown in {book.region}, type left out")
            continue
        lines.append(f"on-demand {instance_type}: {_money(price.usd_per_hour)}/h = {_money(price.usd_per_hour / gpus)}"
                     f"/GPU-h ({gpus} GPUs), {price.source}, {_observed(price)}")
    for holding in request.holdings:
        lines.append(f"reserved {holding.instance_type}: {holding.count} x {_money(holding.usd_per_hour)}/h, {holding.source}")

    eligible, eligibility_lines = _spot_eligibility(request, book, now, settings, current)
    lines += eligibility_lines
    needed = min(settings.min_spot_types, len(request.instance_types))
    keeping = current is not None and bool(current.spot_types)
    placement_ok, placement_line = _placement_allows_spot(request, book, now, settings, keeping)
    lines.append(placement_line)
    eligible = [t for t in eligible if t in ordered]
    on_demand_plan = _distributed(request, ordered, ())
    plan, why = on_demand_plan, None
    if klass.max_spot_share <= 0:
        why = "class allows no spot"
    elif not eligible or len(eligible) < needed:
        why = f"only {len(eligible)} eligible types, {max(needed, 1)} required"
    elif not placement_ok:
        why = "placement scores unknown" if placement_ok is None else "placement scores do not allow it"
    elif unpriced := [t for t in request.instance_types if not _fresh(book.on_demand_price(t), now, settings)]:
        # All on-demand is what spot must beat; a type missing from it could be its cheapest.
        why = f"on-demand price missing or stale for {', '.join(unpriced)}, so all on-demand cannot be priced"
    else:
        spot_plan = _distributed(request, [t for t in ordered if t in eligible or _held(t, request)], eligible)
        why = _spot_refusal(spot_plan, on_demand_plan, request, book, now, settings, current)
        plan = spot_plan if why is None else on_demand_plan
    if why is None:
        lines.append(f"spot: used, {len(eligible)} eligible types >= {needed} required, allocation {SPOT_ALLOCATION_STRATEGY}")
        if plan.instance_types[0] != on_demand_plan.instance_types[0]:
            lines.append(f"on-demand GPUs on {plan.instance_types[0]}, the first spot-eligible or RI-held type, not "
                         f"{on_demand_plan.instance_types[0]}: the plan is cheaper than all on-demand all the same")
    else:
        lines.append(f"spot: not used ({why}): on-demand only")

    ri = reserved_gpus(request)
    baseline = math.ceil(klass.ri_baseline * request.desired_gpus - 1e-9)
    lines.append(f"on-demand base {plan.on_demand_base_gpus} GPUs = max(reserved {ri}, ceil({klass.ri_baseline:.0%} "
                 f"x desired {request.desired_gpus}) = {baseline}), at most max {request.max_gpus}")
    all_on_demand = hourly_cost(on_demand_plan, request, book) or 0.0
    expected = hourly_cost(plan, request, book) or 0.0
    lines.append(f"on-demand above base {plan.on_demand_percentage_above_base}%: spot share "
                 f"{plan.spot_share_at(request.reference_gpus):.1%} at {request.reference_gpus} GPUs, "
                 f"{plan.max_spot_share:.1%} at max {request.max_gpus} (cap {klass.max_spot_share:.0%})")
    saving = 1 - expected / all_on_demand if all_on_demand else 0.0
    with_interruptions = expected_cost(plan, request, book, now, settings)
    risk = (f", {_money(with_interruptions)}/h with expected interruptions"
            if plan.spot_types and with_interruptions else "")
    lines.append(f"expected {_money(expected)}/h at {request.reference_gpus} GPUs{risk} vs all on-demand "
                 f"{_money(all_on_demand)}/h (saving {saving:.1%})")
    return replace(plan, expected_usd_per_hour=round(expected, 6), all_on_demand_usd_per_hour=round(all_on_demand, 6),
                   explanation=tuple(lines))


def _spot_refusal(spot_plan: CapacityPlan, on_demand_plan: CapacityPlan, request: GroupRequest, book: PriceBook,
                  now: datetime, settings: PlannerSettings, current: CapacityPlan | None) -> str | None:
    """Why the group as a whole would not beat on-demand with `spot_plan`, or None when it would.

    A type earns its place in its cheapest zone, but every zone's share runs on that zone's cheapest
    listed pool, and the on-demand GPUs on the first listed type, which is dearer when the cheapest
    on-demand type is not spot-eligible. With a current plan the checks are banded like the types':
    a current spot plan keeps spot up to what price noise explains, and one without adds it only beyond."""
    if spot_plan.max_spot_share <= 0:
        return f"the on-demand base fills the group up to max {request.max_gpus} GPUs: no room for spot"
    reference, _basis = _reference_rate(request, book, now, settings)
    pools = _spot_pools(spot_plan.spot_types, request, book)
    per_gpu = sum(_spot_gpu_cost(price, t, request, book, now, settings, reference) for price, t in pools) / len(pools)
    band, margin = 1.0, 0.0
    if current is not None:
        sign = 1 if current.spot_types else -1
        band = settings.noise_band ** -sign
        margin = sign * saving_noise(on_demand_plan, spot_plan, request, book, settings)
    if per_gpu >= band * reference:
        return (f"a spot GPU on the eligible types, each zone on its cheapest, is expected to cost "
                f"{_money(per_gpu)} with interruptions, not below the reference {_money(band * reference)}")
    with_spot = expected_cost(spot_plan, request, book, now, settings)
    without = expected_cost(on_demand_plan, request, book, now, settings)
    if with_spot > without + margin:
        noise = f" {'+' if margin > 0 else '-'} {_money(abs(margin))} of price noise" if margin else ""
        return (f"expected {_money(with_spot)}/h with spot on {', '.join(spot_plan.spot_types)} and on-demand on "
                f"{spot_plan.instance_types[0]}, above {_money(without)}/h all on-demand{noise}")
    return None


def _distributed(request: GroupRequest, instance_types: Sequence[str], spot_types: Sequence[str]) -> CapacityPlan:
    """A plan over `instance_types` (on-demand priority order) with spot on `spot_types` (none: on-demand only)."""
    base, percentage = distribution(request, bool(spot_types))
    return CapacityPlan(
        group=request.name,
        instance_types=tuple(instance_types),
        spot_types=tuple(t for t in instance_types if t in spot_types),
        on_demand_base_gpus=base,
        on_demand_percentage_above_base=percentage,
        capacity_rebalance=bool(spot_types),
        expected_usd_per_hour=0.0,
        all_on_demand_usd_per_hour=0.0,
        constraints=request.constraints(),
        explanation=(),
    )


def _held(instance_type: str, request: GroupRequest) -> bool:
    return any(h.instance_type == instance_type and h.count > 0 for h in request.holdings)


def _stale_prices(request: GroupRequest, plan: CapacityPlan, book: PriceBook, now, settings) -> list[str]:
    """The prices the current plan rests on that are stale or missing (empty: all fresh)."""
    problems = []
    for instance_type in plan.instance_types:
        price = book.on_demand_price(instance_type)
        if not _fresh(price, now, settings):
            problems.append(f"on-demand {instance_type} ({_observed(price)})")
    for instance_type in plan.spot_types:
        for zone, price in zip(request.zones, _zone_spot_prices(instance_type, request, book)):
            if not _fresh(price, now, settings):
                problems.append(f"spot {instance_type}@{zone} ({_observed(price)})")
    return problems


def decide(
    request: GroupRequest,
    book: PriceBook,
    now: datetime,
    current: CapacityPlan | None = None,
    settings: PlannerSettings = PlannerSettings(),
) -> Decision:
    """Keep `current` unless the new plan's saving over the horizon repays its roll, or `current` no longer fits."""
    fits = current is not None and current.constraints == request.constraints()
    # A plan decided for other constraints lends the new one neither its bands nor its order.
    candidate = plan_capacity(request, book, now, settings, current if fits else None)

    def decision(plan, changed, rule, *reasons):
        return Decision(plan=plan, changed=changed, rule=rule, reasons=tuple(reasons), prices_used=book)

    if current is None:
        return decision(candidate, True, "first-plan", "no current plan: the new plan is adopted")
    if not fits:
        changed = constraint_changes(current.constraints, request.constraints())
        return decision(candidate, True, "constraint",
                        f"the current plan was decided for other {', '.join(changed)}: replaced")
    if current.spot_types:
        placement_ok, line = _placement_allows_spot(request, book, now, settings, keeping=True)
        if placement_ok is False:
            return decision(candidate, True, "constraint", f"{line}: the current spot share is no longer safe")
    stale = _stale_prices(request, current, book, now, settings)
    if stale:
        return decision(current, False, "keep:stale-prices",
                        f"prices stale or missing ({'; '.join(stale)}): the current plan is kept")
    if same_distribution(candidate, current):
        return decision(current, False, "keep:same-plan", "the new plan deploys as the current one: kept")
    current_cost = expected_cost(current, request, book, now, settings)
    new_cost = expected_cost(candidate, request, book, now, settings)
    roll = switching_cost(request, book, now, settings)
    if current_cost is None or new_cost is None or roll is None:
        return decision(current, False, "keep:stale-prices", "the current plan cannot be priced now: kept")
    # A saving counts only beyond what price noise could explain.
    noise = saving_noise(current, candidate, request, book, settings)
    repaid = (current_cost - new_cost - noise) * settings.horizon_hours
    costs = (f"expected current {_money(current_cost)}/h now, new {_money(new_cost)}/h, less "
             f"{_money(noise)}/h of price noise: over {settings.horizon_hours:g} h saves {_money(repaid)} vs the "
             f"roll's {_money(roll)} ({request.reference_gpus} GPUs x {request.workload_class.warmup_seconds} s warm-up)")
    if repaid > roll:
        return decision(candidate, True, "saving", f"{costs}: replaced")
    return decision(current, False, "keep:saving-below-roll-cost", f"{costs}: the current plan is kept")


def constraint_changes(decided_for: dict, wanted: dict) -> list[str]:
    """The constraints that differ, by name; for a class, its fields (a plan decided by an earlier
    version lacks the fields added since, and is named as such)."""
    changes = []
    for key, value in wanted.items():
        old = decided_for.get(key)
        if old == value:
            continue
        if isinstance(old, dict) and isinstance(value, dict):
            changes += [f"{key}.{k}" + (" (new field)" if k not in old else "")
                        for k in value if old.get(k) != value[k]]
        else:
            changes.append(key)
    return sorted(changes)


def same_distribution(a: CapacityPlan, b: CapacityPlan) -> bool:
    """Whether two plans deploy the same mixed instances policy."""
    fields = ("instance_types", "spot_types", "on_demand_base_gpus", "on_demand_percentage_above_base",
              "capacity_rebalance", "spot_allocation_strategy", "on_demand_allocation_strategy")
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def decide_all(requests: Sequence[GroupRequest], book: PriceBook, now: datetime,
               current: dict[str, CapacityPlan], settings: PlannerSettings = PlannerSettings()) -> list[Decision]:
    return [decide(r, book, now, current.get(r.name), settings) for r in requests]


BREAKER_TAG = "seedance.io/budget-breaker"


def spot_only(plan: CapacityPlan) -> CapacityPlan:
    """The budget breaker's plan (the source: at 95 % of budget, dev and staging GPU groups go spot only).
    It sets aside the class caps on purpose, for non-prod stacks only."""
    return replace(plan, on_demand_base_gpus=0, on_demand_percentage_above_base=0, spot_types=plan.instance_types,
                   capacity_rebalance=True,
                   explanation=(*plan.explanation, "budget breaker on (capacity.budget_breaker): spot only"))
