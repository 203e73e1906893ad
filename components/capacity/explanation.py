"""The planner's explanation: the text of each rule's finding, apart from the rules. Pure.

Prices are named with when they were observed, never their age: the stack's outputs carry the
explanation, and the same decision must read the same on any later day.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import TYPE_CHECKING

from components.capacity.context import DecisionContext
from components.capacity.plan import SPOT_ALLOCATION_STRATEGY, CapacityPlan, GroupRequest
from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import InterruptionFrequency, Price, PriceBook
from components.pricing.reserved import HOLDING_KINDS, RESERVED_INSTANCE

if TYPE_CHECKING:  # the rules word their findings with `money`; this module only reads their verdicts
    from components.capacity.rules import PlacementVerdict, TypeVerdict


def money(value: float) -> str:
    return f"${value:,.4f}"


def observed(price: Price | InterruptionFrequency | None) -> str:
    """When a price was observed, as a date (an age would change with every run)."""
    return "unknown" if price is None else f"observed {price.observed_at.astimezone(UTC):%Y-%m-%d %H:%M}Z"


def group_lines(request: GroupRequest, book: PriceBook) -> list[str]:
    """The group, its class, and the prices and holdings the decision starts from."""
    klass = request.workload_class
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
        lines.append(
            f"on-demand {instance_type}: {money(price.usd_per_hour)}/h = {money(price.usd_per_hour / gpus)}"
            f"/GPU-h ({gpus} GPUs), {price.source}, {observed(price)}"
        )
    for holding in sorted(request.holdings, key=lambda h: HOLDING_KINDS.index(h.kind)):
        if holding.kind == RESERVED_INSTANCE:
            lines.append(
                f"reserved {holding.instance_type}: {holding.count} x {money(holding.usd_per_hour)}/h, {holding.source}"
            )
        else:
            lines.append(
                f"held by {holding.described}: paid whether used or not, so in the on-demand base"
                + (" (targeted: the group names it)" if holding.targeted else "")
            )
    return lines


def eligibility_lines(context: DecisionContext, verdicts: Sequence[TypeVerdict]) -> list[str]:
    """The reference rate, then one line per type."""
    settings = context.settings
    max_age_hours = settings.max_price_age.total_seconds() / 3600
    if not any(price for t in context.request.instance_types for price in context.zone_spot_prices(t)):
        return [
            "spot: no type eligible: no spot price is known for any of the group's types (the bundled snapshot "
            "carries none, they move hourly: `seedance decide --source live` reads them)"
        ]
    if context.reference is None:
        why = (
            f"{context.reference_basis} price unknown"
            if context.reference_stale is None
            else f"{context.reference_basis} price {observed(context.reference_stale)}, not fresh (fresh means "
            f"observed within {max_age_hours:g} h of the decision)"
        )
        return [f"spot: no type eligible, {why}"]
    lines = [
        f"spot reference: {context.reference_basis} at {money(context.reference)}/GPU-h, the cheapest non-spot "
        "GPU of the group"
    ]
    for v in verdicts:
        if v.missing_zones or v.stale_zones:
            gaps = ([f"spot price missing in {', '.join(v.missing_zones)}"] if v.missing_zones else []) + (
                [f"spot price older than {max_age_hours:g} h in {', '.join(v.stale_zones)}"] if v.stale_zones else []
            )
            lines.append(f"spot {v.instance_type}: not eligible, {'; '.join(gaps)}")
            continue
        if v.frequency is None:
            frequency = "frequency unknown, worst band assumed"
        elif not v.frequency_current:
            frequency = (
                f"frequency {observed(v.frequency)}, older than {settings.max_interruption_data_age.days} "
                "days: worst band assumed"
            )
        else:
            frequency = f"{v.per_month:.0%}/month, {v.frequency.source}"
        line = (
            f"spot {v.instance_type}: {money(v.spot)}/GPU-h in {v.zone}, its cheapest zone ({observed(v.oldest)}) + "
            f"interruptions {money(v.interruptions)}/GPU-h ({frequency}) = {money(v.expected)} vs the reference "
            f"{money(v.limit)}"
        )
        if v.guard is not None:
            ratio, own_basis, own = v.guard
            line += f", guard {ratio:.3f} x {own_basis} {money(own)} = {money(ratio * own)}"
        lines.append(f"{line}: {'eligible' if v.eligible else 'not eligible'}")
    return lines


def stale_line(problems: Sequence[tuple[str, Price | None]]) -> str:
    return "; ".join(f"{what} ({observed(price)})" for what, price in problems)


def placement_line(verdict: PlacementVerdict, request: GroupRequest) -> str:
    if not verdict.asked:
        return "placement scores: not asked (no placement minimum, or no spot, for this class)"
    answers = []
    for answer in verdict.answers:
        label = f"{answer.label} ({answer.capacity} instance{'s' if answer.capacity > 1 else ''})"
        answers.append(
            f"{label}: not scored fresh in every zone"
            if answer.score is None
            else f"{label}: {answer.zones_needed} {answer.score}"
        )
    if verdict.allowed:
        return f"placement scores: {'; '.join(answers)} (>= {verdict.needed} to {verdict.action} spot)"
    if verdict.few_types:
        answers.append("EC2 scores a request of fewer than three instance types low")
    return (
        f"placement scores: {'; '.join(answers)} (class {request.workload_class.name} needs {verdict.needed} to "
        f"{verdict.action} spot)"
    )


def outcome_lines(
    plan: CapacityPlan, on_demand_plan: CapacityPlan, refusal: str | None, eligible: int, needed: int
) -> list[str]:
    if refusal is not None:
        return [f"spot: not used ({refusal}): on-demand only"]
    lines = [f"spot: used, {eligible} eligible types >= {needed} required, allocation {SPOT_ALLOCATION_STRATEGY}"]
    if plan.instance_types[0] != on_demand_plan.instance_types[0]:
        lines.append(
            f"on-demand GPUs on {plan.instance_types[0]}, the first spot-eligible or RI-held type, not "
            f"{on_demand_plan.instance_types[0]}: the plan is cheaper than all on-demand all the same"
        )
    return lines


def mix_lines(
    plan: CapacityPlan,
    request: GroupRequest,
    reserved: int,
    baseline: int,
    expected: float,
    all_on_demand: float,
    with_interruptions: float | None,
) -> list[str]:
    """The base, the share it leaves spot, and what the plan is expected to cost."""
    klass = request.workload_class
    saving = 1 - expected / all_on_demand if all_on_demand else 0.0
    risk = (
        f", {money(with_interruptions)}/h with expected interruptions" if plan.spot_types and with_interruptions else ""
    )
    kinds = {
        kind: sum(h.count * gpu_instance_type(h.instance_type).gpus for h in request.holdings if h.kind == kind)
        for kind in HOLDING_KINDS
    }
    parts = " + ".join(f"{gpus} {kind}" for kind, gpus in kinds.items() if gpus)
    held = f" ({parts})" if parts and set(k for k, g in kinds.items() if g) != {RESERVED_INSTANCE} else ""
    return [
        f"on-demand base {plan.on_demand_base_gpus} GPUs = max(reserved {reserved}{held}, ceil({klass.ri_baseline:.0%} "
        f"x desired {request.desired_gpus}) = {baseline}), at most max {request.max_gpus}",
        f"on-demand above base {plan.on_demand_percentage_above_base}%: spot share "
        f"{plan.spot_share_at(request.reference_gpus):.1%} at {request.reference_gpus} GPUs, "
        f"{plan.max_spot_share:.1%} at max {request.max_gpus} (cap {klass.max_spot_share:.0%})",
        f"expected {money(expected)}/h at {request.reference_gpus} GPUs{risk} vs all on-demand "
        f"{money(all_on_demand)}/h (saving {saving:.1%})",
    ]
