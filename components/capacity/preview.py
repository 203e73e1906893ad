"""What a group would run at the Spot Instance Advisor's reference discount: the decision's worth shown
before any account is read, never the decision. Pure.

The bundled snapshot carries no spot prices (they move hourly), so an offline plan decides every group
on-demand. This asks the same planner what it would decide if each type's spot price were on-demand
less the advisor's average saving for it, in every zone, with the advisor's interruption band: a
reference, dated by the advisor's data, for `seedance plan` to show beside the decision. A class that
needs placement scores gets none here, so it runs no spot in the preview either.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from components.capacity.plan import GroupRequest, PlannerSettings
from components.capacity.planner import plan_capacity
from components.pricing.advisor import interruption_frequencies
from components.pricing.prices import Price, PriceBook

ADVISOR_SNAPSHOT = Path(__file__).resolve().parents[1] / "pricing" / "data" / "spot_advisor.json"


@dataclass(frozen=True)
class Preview:
    group: str
    spot_share: float  # at the group's reference size
    expected_usd_per_hour: float
    all_on_demand_usd_per_hour: float
    observed: str  # the advisor data's date
    why_none: str  # the decision's reason when the preview runs no spot ("" when it does)
    assumed_in: str = ""  # the region, when its on-demand prices in the snapshot are copied from another's

    def _caveat(self) -> str:
        return (
            f"; {self.assumed_in}'s on-demand prices are assumed, unverified: `seedance prices refresh "
            f"--region {self.assumed_in}` reads them"
            if self.assumed_in
            else ""
        )

    @property
    def saving(self) -> float:
        return (
            1 - self.expected_usd_per_hour / self.all_on_demand_usd_per_hour if self.all_on_demand_usd_per_hour else 0.0
        )

    def line(self) -> str:
        if self.spot_share <= 0:
            return (
                f"reference preview (Spot Instance Advisor, {self.observed}; not a decision): no spot even at the "
                f"advisor's discount ({self.why_none}){self._caveat()}"
            )
        return (
            f"reference preview (Spot Instance Advisor, {self.observed}; not a decision): at the advisor's "
            f"average discount this group would run {self.spot_share:.0%} spot for about "
            f"${self.expected_usd_per_hour:,.2f}/h (-{self.saving:.0%} vs ${self.all_on_demand_usd_per_hour:,.2f}/h "
            f"all on-demand){self._caveat()}"
        )


def advisor_book(book: PriceBook, request: GroupRequest, document: dict[str, Any], now: datetime) -> PriceBook:
    """`book` with each of the request's types priced on spot at on-demand less the advisor's saving in
    every zone, and its interruption band, as observed `now` (so the planner reads them as current)."""
    linux = document["spot_advisor"].get(book.region, {}).get("Linux", {})
    observed = document["_source"]["observed"]
    spot = {}
    for instance_type in request.instance_types:
        on_demand, advice = book.on_demand_price(instance_type), linux.get(instance_type)
        if on_demand is None or advice is None:
            continue
        price = Price(
            on_demand.usd_per_hour * (1 - advice["s"] / 100),
            now,
            f"Spot Instance Advisor average saving {advice['s']}% ({observed})",
        )
        spot.update({(instance_type, zone): price for zone in request.zones})
    interruptions = interruption_frequencies(document, book.region, request.instance_types, now)
    fresh_on_demand = {t: replace(p, observed_at=now) for t, p in book.on_demand.items()}
    return PriceBook(region=book.region, on_demand=fresh_on_demand, spot=spot, interruptions=interruptions)


def reference_preview(
    request: GroupRequest,
    book: PriceBook,
    now: datetime,
    settings: PlannerSettings = PlannerSettings(),
    document: dict[str, Any] | None = None,
) -> Preview:
    document = document or json.loads(ADVISOR_SNAPSHOT.read_text())
    plan = plan_capacity(request, advisor_book(book, request, document, now), now, settings)
    why = next(
        (line.split(" (", 1)[1].rsplit(")", 1)[0] for line in plan.explanation if line.startswith("spot: not used (")),
        "",
    )
    assumed = any(p.assumed for p in map(book.on_demand_price, request.instance_types) if p)
    return Preview(
        request.name,
        plan.spot_share_at(request.reference_gpus),
        plan.expected_usd_per_hour,
        plan.all_on_demand_usd_per_hour,
        document["_source"]["observed"],
        why,
        book.region if assumed else "",
    )
