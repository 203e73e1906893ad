"""Small price books for planner tests: fresh prices at a fixed time, in the shapes the planner reads."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from components.capacity.plan import GroupRequest
from components.capacity.workload_classes import workload_classes
from components.pricing.prices import PlacementRequest, PlacementScore, Price, PriceBook, PriceSourceError
from components.pricing.reserved import ReservedHolding

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
LAST_ZONE_PREMIUM = 1.02  # `book` prices the last zone this much dearer
ZONE_MEAN = (len(ZONES) - 1 + LAST_ZONE_PREMIUM) / len(ZONES)  # a type's mean spot price over the zones = ratio x this
# us-east-1 on-demand $/h, as in the bundled snapshot
ON_DEMAND = {
    "g5.xlarge": 1.006,
    "g5.48xlarge": 16.288,
    "g6.xlarge": 0.8048,
    "g6e.xlarge": 1.861,
    "g4dn.xlarge": 0.526,
    "g5.12xlarge": 5.672,
    "g6.12xlarge": 4.6016,
    "g4dn.12xlarge": 3.912,
    "g6e.12xlarge": 10.49264,
}


def book(
    spot_ratio: dict[str, float],
    *,
    age: timedelta = timedelta(minutes=5),
    on_demand: dict | None = None,
    zones=ZONES,
    scores: dict | None = None,
) -> PriceBook:
    """Spot at `ratio` x on-demand in every zone (the last one dearer), all observed `age` ago;
    `scores`: a placement question's score per zone."""
    observed = NOW - age
    prices = ON_DEMAND if on_demand is None else on_demand
    result = PriceBook(region="us-east-1")
    result.on_demand = {t: Price(p, observed, "test on-demand") for t, p in prices.items()}
    for instance_type, ratio in spot_ratio.items():
        for index, zone in enumerate(zones):
            bump = LAST_ZONE_PREMIUM if index == len(zones) - 1 else 1.0
            result.spot[(instance_type, zone)] = Price(prices[instance_type] * ratio * bump, observed, "test spot")
    for question, per_zone in (scores or {}).items():
        for zone, score in zip(zones, per_zone):
            result.placement[(question, zone)] = PlacementScore(score, observed, "test score")
    return result


def request(
    workload="batch",
    types=("g6.12xlarge", "g5.12xlarge", "g6e.12xlarge"),
    *,
    min_gpus=0,
    desired=16,
    max_gpus=64,
    holdings: Iterable[ReservedHolding | tuple[str, int, float]] = (),  # a tuple: an RI (type, count, rate)
    zones=ZONES,
    name=None,
) -> GroupRequest:
    return GroupRequest(
        name=name or workload,
        workload_class=workload_classes()[workload],
        instance_types=tuple(types),
        zones=tuple(zones),
        min_gpus=min_gpus,
        desired_gpus=desired,
        max_gpus=max_gpus,
        holdings=tuple(h if isinstance(h, ReservedHolding) else ReservedHolding(*h, "test RI") for h in holdings),
    )


class FakeLiveSource:
    """Stands in for `LivePriceSource`: fresh prices from `book`, or an outage (every call fails)."""

    name = "live"

    def __init__(self, spot_ratio: float = 0.3, fail: str | None = None, zones=ZONES, placement_score=None):
        self.spot_ratio, self.fail, self.zones = spot_ratio, fail, zones
        self.placement_score = placement_score  # question -> its score in every zone; None: scores unavailable
        self.asked: list[PlacementRequest] = []

    def prices(self, region, instance_types, zones, placement=()):
        if self.fail:
            raise PriceSourceError(self.fail)
        self.asked += placement
        known = [t for t in instance_types if t in ON_DEMAND]
        scores = {q: (self.placement_score(q),) * len(zones) for q in placement} if self.placement_score else {}
        return book(
            {t: self.spot_ratio for t in known}, zones=zones, on_demand={t: ON_DEMAND[t] for t in known}, scores=scores
        )

    def available_zones(self, region):
        """Name -> zone ID; the IDs sort the zones as their names do."""
        if self.fail:
            raise PriceSourceError(self.fail)
        return {zone: zone_id for zone, zone_id in zip(self.zones, ("use1-az1", "use1-az2", "use1-az4", "use1-az5"))}

    def reserved_holdings(self, region):
        if self.fail:
            raise PriceSourceError(self.fail)
        return []

    def capacity_reservations(self, region, now):
        if self.fail:
            raise PriceSourceError(self.fail)
        return []

    def savings_plans(self, region, now, instance_types=()):
        if self.fail:
            raise PriceSourceError(self.fail)
        return []
