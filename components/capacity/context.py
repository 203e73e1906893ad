"""One decision's inputs and what every rule reads from them, computed once: the request, the prices,
the time, the settings and the group's reference rate (its cheapest non-spot GPU). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from components.capacity.plan import GroupRequest, PlannerSettings
from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import HOURS_PER_MONTH, InterruptionFrequency, Price, PriceBook
from components.pricing.reserved import RESERVED_INSTANCE


@dataclass(frozen=True)
class DecisionContext:
    request: GroupRequest
    book: PriceBook
    now: datetime
    settings: PlannerSettings
    # The cheapest RI or on-demand GPU the group can run, per GPU-hour: spot must undercut it. None when
    # an on-demand price that could set it is missing or stale (`reference_stale`: that price; None:
    # missing): a type whose price is unknown may be the cheapest, and leaving it out would raise the
    # reference. No spot is added then.
    reference: float | None
    reference_basis: str  # what sets it ("RI g6.xlarge (source)", "on-demand g6.xlarge"), or leaves it unknown
    reference_stale: Price | None = None

    @classmethod
    def of(
        cls, request: GroupRequest, book: PriceBook, now: datetime, settings: PlannerSettings = PlannerSettings()
    ) -> DecisionContext:
        context = cls(request, book, now, settings, None, "")
        rates = []
        for instance_type in request.instance_types:
            rate, price, basis = context.rate_per_gpu(instance_type)
            if rate is None:
                return cls(request, book, now, settings, None, basis)
            if price is not None and not context.fresh(price):
                return cls(request, book, now, settings, None, basis, price)
            rates.append((rate, basis))
        reference, basis = min(rates)
        return cls(request, book, now, settings, reference, basis)

    def fresh(self, price: Price | None) -> bool:
        return price is not None and price.age(self.now) <= self.settings.max_price_age

    def rate_per_gpu(self, instance_type: str) -> tuple[float | None, Price | None, str]:
        """What a GPU of this type costs off spot: the cheapest RI held for it, else on-demand. (Savings
        Plan headroom and reservations cover the base only; a GPU beyond them pays on-demand.)"""
        held = [
            h
            for h in self.request.holdings
            if h.instance_type == instance_type and h.count > 0 and h.kind == RESERVED_INSTANCE
        ]
        gpus = gpu_instance_type(instance_type).gpus
        if held:
            cheapest = min(held, key=lambda h: h.usd_per_hour)
            return cheapest.usd_per_hour / gpus, None, f"RI {instance_type} ({cheapest.source})"
        price = self.book.on_demand_price(instance_type)
        return (price.usd_per_hour / gpus if price else None), price, f"on-demand {instance_type}"

    def zone_spot_prices(self, instance_type: str) -> list[Price | None]:
        return [self.book.spot_price(instance_type, zone) for zone in self.request.zones]

    def interruptions_per_month(self, instance_type: str) -> tuple[float, InterruptionFrequency | None, bool]:
        """Reclaims per month, the Spot Instance Advisor's frequency it comes from, and whether that is
        current; unknown or old: the worst band."""
        frequency = self.book.interruption_frequency(instance_type)
        if frequency is None:
            return self.settings.unknown_interruptions_per_month, None, False
        if self.now - frequency.observed_at > self.settings.max_interruption_data_age:
            return self.settings.unknown_interruptions_per_month, frequency, False
        return frequency.per_month, frequency, True

    def interruption_cost(self, instance_type: str) -> float:
        """Expected cost of interruptions per spot GPU-hour: reclaims per hour x (lost work + warm-up),
        valued at the group's reference GPU rate (needs one)."""
        per_month, _frequency, _current = self.interruptions_per_month(instance_type)
        assert self.reference is not None
        klass = self.request.workload_class
        hours_lost = (klass.lost_work_seconds + klass.warmup_seconds) / 3600
        return per_month / HOURS_PER_MONTH * hours_lost * self.reference

    def spot_gpu_cost(self, price: float, instance_type: str) -> float:
        """A spot GPU's expected cost: its price plus its expected interruption cost."""
        return price + self.interruption_cost(instance_type)
