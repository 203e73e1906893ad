"""The planner's rules, each over one decision context, each returning what it found (the explanation
module words it). Pure. The order they apply in, and why, is in `components.capacity.planner`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from components.capacity.context import DecisionContext
from components.capacity.costs import expected_cost, saving_noise, spot_pools
from components.capacity.explanation import money
from components.capacity.mix import ceil_share, percentage_within_cap
from components.capacity.plan import CapacityPlan, GroupRequest
from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import InterruptionFrequency, PlacementRequest, Price, PriceBook

# Placement scores move by a point or two between queries; a current spot plan is dropped only
# when every zone falls further than this below the class minimum.
PLACEMENT_SCORE_SLACK = 1


@dataclass(frozen=True)
class TypeVerdict:
    """Whether one type may run spot, and from what."""

    instance_type: str
    eligible: bool
    missing_zones: tuple[str, ...] = ()
    stale_zones: tuple[str, ...] = ()
    spot: float = 0.0  # $/GPU-h in its cheapest zone
    zone: str = ""
    oldest: Price | None = None  # its oldest spot price over the zones
    interruptions: float = 0.0  # expected $/GPU-h
    frequency: InterruptionFrequency | None = None
    frequency_current: bool = False
    per_month: float = 0.0
    expected: float = 0.0  # spot + interruptions
    limit: float = 0.0  # the reference, banded
    guard: tuple[float, str, float] | None = None  # (ratio, basis, own rate) of the source's 0.6 rule


def spot_eligibility(context: DecisionContext, current: CapacityPlan | None) -> list[TypeVerdict]:
    """One verdict per type (none without a reference rate). Each zone takes its cheapest listed pool, so
    a type earns its place where it is cheapest; with a current plan the threshold is banded."""
    if context.reference is None:
        return []
    request, settings, reference = context.request, context.settings, context.reference
    verdicts = []
    for instance_type in request.instance_types:
        spot_prices = context.zone_spot_prices(instance_type)
        missing = tuple(z for z, p in zip(request.zones, spot_prices) if p is None)
        stale = tuple(z for z, p in zip(request.zones, spot_prices) if p is not None and not context.fresh(p))
        if missing or stale:
            verdicts.append(TypeVerdict(instance_type, False, missing, stale))
            continue
        # Known: the reference above needs every type's RI or on-demand rate.
        own, _price, own_basis = context.rate_per_gpu(instance_type)
        assert own is not None
        known = [p for p in spot_prices if p is not None]  # all of them: none is missing
        gpus = gpu_instance_type(instance_type).gpus
        spot, zone = min((p.usd_per_hour / gpus, z) for z, p in zip(request.zones, known))
        band = 1.0
        if current is not None:
            band = 1 / settings.noise_band if instance_type in current.spot_types else settings.noise_band
        interruptions = context.interruption_cost(instance_type)
        per_month, frequency, frequency_current = context.interruptions_per_month(instance_type)
        expected = spot + interruptions
        ok = expected < band * reference
        guard = None
        if settings.spot_price_ratio is not None:
            ratio = settings.spot_price_ratio * band
            ok = ok and spot < ratio * own
            guard = (ratio, own_basis, own)
        verdicts.append(
            TypeVerdict(
                instance_type,
                ok,
                spot=spot,
                zone=zone,
                oldest=max(known, key=lambda p: p.age(context.now)),
                interruptions=interruptions,
                frequency=frequency,
                frequency_current=frequency_current,
                per_month=per_month,
                expected=expected,
                limit=band * reference,
                guard=guard,
            )
        )
    return verdicts


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


@dataclass(frozen=True)
class PlacementAnswer:
    label: str
    capacity: int  # instances asked for
    zones_needed: str  # "best zone" or "worst zone"
    score: int | None  # None: not scored fresh in every zone


@dataclass(frozen=True)
class PlacementVerdict:
    allowed: bool | None  # None: no question answered (a failed read)
    asked: bool = True
    answers: tuple[PlacementAnswer, ...] = ()
    needed: int = 0
    action: str = "start"
    few_types: bool = False  # EC2 scores a request of fewer than three types low


def placement_allows_spot(context: DecisionContext, keeping: bool) -> PlacementVerdict:
    """Spot enters when a fresh answer to either question reaches the class minimum in the zones it
    needs: for the whole share the best zone, for each zone's part every zone. A current spot plan
    stays while one is within PLACEMENT_SCORE_SLACK of it: leaving spot rolls every GPU of the group.
    A question counts when it is scored fresh in every zone; None when neither is (a failed read):
    unknown adds no spot and drops none. One answered and short is False, so a question EC2 never
    answers (its target capacity above the account's limit) cannot hold spot forever."""
    request = context.request
    questions = placement_questions(request)
    if not questions:
        return PlacementVerdict(True, asked=False)
    minimum = request.workload_class.min_placement_score
    assert minimum is not None  # a class without one asks no questions
    needed, action = (minimum - PLACEMENT_SCORE_SLACK, "keep") if keeping else (minimum, "start")
    answers, answered = [], False
    whole, part = questions
    for question, label, combine, zones_needed in (
        (whole, "whole spot share", max, "best zone"),
        (part, "a zone's part", min, "worst zone"),
    ):
        scores = [context.book.placement_score(question, zone) for zone in request.zones]
        if any(s is None or s.observed_at < context.now - context.settings.max_price_age for s in scores):
            answers.append(PlacementAnswer(label, question.target_capacity, zones_needed, None))
            continue
        answered = True
        score = combine(s.score for s in scores if s is not None)  # all scored: checked above
        answers.append(PlacementAnswer(label, question.target_capacity, zones_needed, score))
        if score >= needed:
            return PlacementVerdict(True, answers=tuple(answers), needed=needed, action=action)
    return PlacementVerdict(
        False if answered else None,
        answers=tuple(answers),
        needed=needed,
        action=action,
        few_types=len(whole.instance_types) < 3,
    )


def order_types(request: GroupRequest, book: PriceBook, band: float, current: CapacityPlan | None) -> list[str]:
    """On-demand priority: RI-held types first (cheapest RI per GPU), then by on-demand price per GPU.
    The current plan's order stands while no type in it is cheaper than one before it beyond `band`."""
    priced = [t for t in request.instance_types if book.on_demand_price(t) is not None]

    def key(instance_type: str) -> tuple[int, float, str]:
        gpus = gpu_instance_type(instance_type).gpus
        held = [h.usd_per_hour / gpus for h in request.holdings if h.instance_type == instance_type and h.count]
        price = book.on_demand_price(instance_type)
        assert price is not None  # only priced types are ordered
        on_demand = price.usd_per_hour / gpus
        return (0, min(held), instance_type) if held else (1, on_demand, instance_type)

    ordered = sorted(priced, key=key)
    if current is None or not set(current.instance_types) <= set(priced):
        return ordered
    keys = [key(t) for t in current.instance_types]
    if not all(
        a[0] < b[0] or (a[0] == b[0] and b[1] >= band * a[1]) for i, a in enumerate(keys) for b in keys[i + 1 :]
    ):
        return ordered
    # The current plan's types keep their order, in the places they take in the fresh order.
    kept = iter(current.instance_types)
    return [next(kept) if t in current.instance_types else t for t in ordered]


def reserved_gpus(request: GroupRequest) -> int:
    listed = set(request.instance_types)
    return sum(h.count * gpu_instance_type(h.instance_type).gpus for h in request.holdings if h.instance_type in listed)


def baseline_gpus(request: GroupRequest) -> int:
    """The class RI baseline's share of the desired size."""
    return ceil_share(request.workload_class.ri_baseline, request.desired_gpus)


def distribution(request: GroupRequest, use_spot: bool) -> tuple[int, int]:
    """(on-demand base GPUs, on-demand percentage above base) for the group, with or without spot: the
    base covers the RIs the group can use and the class baseline; above it, the smallest percentage
    that keeps the spot share within the class cap at every size up to max."""
    base = min(request.max_gpus, max(reserved_gpus(request), baseline_gpus(request)))
    if not use_spot:
        return base, 100
    return base, percentage_within_cap(base, request.max_gpus, request.workload_class.max_spot_share)


def distributed(request: GroupRequest, instance_types: Sequence[str], spot_types: Sequence[str]) -> CapacityPlan:
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


def held(instance_type: str, request: GroupRequest) -> bool:
    return any(h.instance_type == instance_type and h.count > 0 for h in request.holdings)


def spot_refusal(
    spot_plan: CapacityPlan, on_demand_plan: CapacityPlan, context: DecisionContext, current: CapacityPlan | None
) -> str | None:
    """Why the group as a whole would not beat on-demand with `spot_plan`, or None when it would.

    A type earns its place in its cheapest zone, but every zone's share runs on that zone's cheapest
    listed pool, and the on-demand GPUs on the first listed type, which is dearer when the cheapest
    on-demand type is not spot-eligible. With a current plan the checks are banded like the types':
    a current spot plan keeps spot up to what price noise explains, and one without adds it only beyond."""
    request, book, settings, reference = context.request, context.book, context.settings, context.reference
    if spot_plan.max_spot_share <= 0:
        return f"the on-demand base fills the group up to max {request.max_gpus} GPUs: no room for spot"
    pools = spot_pools(spot_plan.spot_types, request, book)
    # A spot plan's types are eligible: each priced in every zone, against a known reference.
    assert reference is not None and pools is not None
    per_gpu = sum(context.spot_gpu_cost(price, t) for price, t in pools) / len(pools)
    band, margin = 1.0, 0.0
    if current is not None:
        sign = 1 if current.spot_types else -1
        band = settings.noise_band**-sign
        margin = sign * saving_noise(on_demand_plan, spot_plan, request, book, settings)
    if per_gpu >= band * reference:
        return (
            f"a spot GPU on the eligible types, each zone on its cheapest, is expected to cost "
            f"{money(per_gpu)} with interruptions, not below the reference {money(band * reference)}"
        )
    with_spot = expected_cost(spot_plan, context)
    without = expected_cost(on_demand_plan, context)
    assert with_spot is not None and without is not None  # and every on-demand price is fresh
    if with_spot > without + margin:
        noise = f" {'+' if margin > 0 else '-'} {money(abs(margin))} of price noise" if margin else ""
        return (
            f"expected {money(with_spot)}/h with spot on {', '.join(spot_plan.spot_types)} and on-demand on "
            f"{spot_plan.instance_types[0]}, above {money(without)}/h all on-demand{noise}"
        )
    return None


def stale_prices(context: DecisionContext, plan: CapacityPlan) -> list[tuple[str, Price | None]]:
    """The prices `plan` rests on that are stale or missing, by what they price (empty: all fresh)."""
    problems = []
    for instance_type in plan.instance_types:
        price = context.book.on_demand_price(instance_type)
        if not context.fresh(price):
            problems.append((f"on-demand {instance_type}", price))
    for instance_type in plan.spot_types:
        for zone, price in zip(context.request.zones, context.zone_spot_prices(instance_type)):
            if not context.fresh(price):
                problems.append((f"spot {instance_type}@{zone}", price))
    return problems
