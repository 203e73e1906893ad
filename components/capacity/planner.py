"""The Spot / On-Demand / Reserved-Instance mix of one GPU node group, decided on expected cost. Pure.

The model is in `plan`, what a decision reads in `context`, costs in `costs`, each rule in `rules`
and its wording in `explanation`; this module applies the rules in order.

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

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from components.capacity import explanation
from components.capacity.context import DecisionContext
from components.capacity.costs import expected_cost, hourly_cost, saving_noise, spend, switching_cost
from components.capacity.plan import (
    CapacityPlan,
    Decision,
    GroupRequest,
    PlannerSettings,
    constraint_changes,
    same_distribution,
)
from components.capacity.rules import (
    baseline_gpus,
    distributed,
    held,
    order_types,
    placement_allows_spot,
    reserved_gpus,
    spot_eligibility,
    spot_refusal,
    stale_prices,
)
from components.pricing.prices import PriceBook


def plan_capacity(
    request: GroupRequest,
    book: PriceBook,
    now: datetime,
    settings: PlannerSettings = PlannerSettings(),
    current: CapacityPlan | None = None,
) -> CapacityPlan:
    """The best plan for `request` at `book`'s prices; `current` only widens the eligibility band."""
    return _plan(DecisionContext.of(request, book, now, settings), current)


def _plan(context: DecisionContext, current: CapacityPlan | None) -> CapacityPlan:
    request, book, settings = context.request, context.book, context.settings
    klass = request.workload_class
    ordered = order_types(request, book, settings.noise_band, current)
    if not ordered:
        raise ValueError(
            f"group {request.name}: no on-demand price is known for any of "
            f"{', '.join(request.instance_types)} in {book.region}"
        )
    verdicts = spot_eligibility(context, current)
    needed = min(settings.min_spot_types, len(request.instance_types))
    keeping = current is not None and bool(current.spot_types)
    placement = placement_allows_spot(context, keeping)
    eligible = [v.instance_type for v in verdicts if v.eligible and v.instance_type in ordered]
    on_demand_plan = distributed(request, ordered, ())
    plan, why = on_demand_plan, None
    if klass.max_spot_share <= 0:
        why = "class allows no spot"
    elif not eligible or len(eligible) < needed:
        why = f"only {len(eligible)} eligible types, {max(needed, 1)} required"
    elif not placement.allowed:
        why = "placement scores unknown" if placement.allowed is None else "placement scores do not allow it"
    elif unpriced := [t for t in request.instance_types if not context.fresh(book.on_demand_price(t))]:
        # All on-demand is what spot must beat; a type missing from it could be its cheapest.
        why = f"on-demand price missing or stale for {', '.join(unpriced)}, so all on-demand cannot be priced"
    else:
        spot_plan = distributed(request, [t for t in ordered if t in eligible or held(t, request)], eligible)
        why = spot_refusal(spot_plan, on_demand_plan, context, current)
        plan = spot_plan if why is None else on_demand_plan

    all_on_demand = hourly_cost(on_demand_plan, request, book) or 0.0
    expected = hourly_cost(plan, request, book) or 0.0
    spot_lines = [(gpus, rate) for (market, _t, _z), gpus, rate in spend(plan, request, book) or [] if market == "spot"]
    spot_gpus = sum(gpus for gpus, _rate in spot_lines)
    spot_rate = round(sum(g * r for g, r in spot_lines) / spot_gpus, 6) if spot_gpus else None
    lines = [
        *explanation.group_lines(request, book),
        *explanation.eligibility_lines(context, verdicts),
        explanation.placement_line(placement, request),
        *explanation.outcome_lines(plan, on_demand_plan, why, len(eligible), needed),
        *explanation.mix_lines(
            plan,
            request,
            reserved_gpus(request),
            baseline_gpus(request),
            expected,
            all_on_demand,
            expected_cost(plan, context),
        ),
    ]
    return replace(
        plan,
        expected_usd_per_hour=round(expected, 6),
        all_on_demand_usd_per_hour=round(all_on_demand, 6),
        spot_usd_per_gpu_hour=spot_rate,
        explanation=tuple(lines),
    )


def decide(
    request: GroupRequest,
    book: PriceBook,
    now: datetime,
    current: CapacityPlan | None = None,
    settings: PlannerSettings = PlannerSettings(),
) -> Decision:
    """Keep `current` unless the new plan's saving over the horizon repays its roll, or `current` no longer fits."""
    context = DecisionContext.of(request, book, now, settings)
    fits = current is not None and current.constraints == request.constraints()
    # A plan decided for other constraints lends the new one neither its bands nor its order.
    candidate = _plan(context, current if fits else None)

    def decision(plan: CapacityPlan, changed: bool, rule: str, *reasons: str) -> Decision:
        return Decision(plan=plan, changed=changed, rule=rule, reasons=tuple(reasons), prices_used=book)

    if current is None:
        return decision(candidate, True, "first-plan", "no current plan: the new plan is adopted")
    if not fits:
        changed = constraint_changes(current.constraints, request.constraints())
        return decision(
            candidate, True, "constraint", f"the current plan was decided for other {', '.join(changed)}: replaced"
        )
    if current.spot_types:
        placement = placement_allows_spot(context, keeping=True)
        if placement.allowed is False:
            return decision(
                candidate,
                True,
                "constraint",
                f"{explanation.placement_line(placement, request)}: the current spot share is no longer safe",
            )
    stale = stale_prices(context, current)
    if stale:
        return decision(
            current,
            False,
            "keep:stale-prices",
            f"prices stale or missing ({explanation.stale_line(stale)}): the current plan is kept",
        )
    if same_distribution(candidate, current):
        return decision(current, False, "keep:same-plan", "the new plan deploys as the current one: kept")
    current_cost = expected_cost(current, context)
    new_cost = expected_cost(candidate, context)
    roll = switching_cost(context)
    if current_cost is None or new_cost is None or roll is None:
        return decision(current, False, "keep:stale-prices", "the current plan cannot be priced now: kept")
    # A saving counts only beyond what price noise could explain.
    noise = saving_noise(current, candidate, request, book, settings)
    repaid = (current_cost - new_cost - noise) * settings.horizon_hours
    money = explanation.money
    costs = (
        f"expected current {money(current_cost)}/h now, new {money(new_cost)}/h, less "
        f"{money(noise)}/h of price noise: over {settings.horizon_hours:g} h saves {money(repaid)} vs the "
        f"roll's {money(roll)} ({request.reference_gpus} GPUs x {request.workload_class.warmup_seconds} s warm-up)"
    )
    if repaid > roll:
        return decision(candidate, True, "saving", f"{costs}: replaced")
    return decision(current, False, "keep:saving-below-roll-cost", f"{costs}: the current plan is kept")


def decide_all(
    requests: Sequence[GroupRequest],
    book: PriceBook,
    now: datetime,
    current: dict[str, CapacityPlan],
    settings: PlannerSettings = PlannerSettings(),
) -> list[Decision]:
    return [decide(r, book, now, current.get(r.name), settings) for r in requests]
