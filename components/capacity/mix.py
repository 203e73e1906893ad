"""A GPU group's Spot / On-Demand / Reserved-Instance mix: the only copy of its arithmetic. Pure.

An Auto Scaling group runs an on-demand base, then a percentage of the units above it on-demand and
the rest on spot; Reserved Instances bill against the running on-demand units, cheapest rate first.
The arithmetic is the same in GPUs (a `CapacityPlan`) and in instances (the Auto Scaling group, which
counts instances): `GroupMix` is unit-free, and `in_instances` turns a plan's GPU mix into the group's,
rounding the base up so spot never exceeds the plan's share at any size.

Read by the planner, the node group's rendering, the cost estimate, the policy rules and the replay
benchmark; the Reserved Instances a plan was decided with travel in its constraints (the lock) and in
one tag on the group (the plan), both read and written here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from components.plan.resources import PlanResource, is_unknown, tags_of
from components.pricing.prices import parse_time, utc_text
from components.pricing.reserved import RESERVED_INSTANCE, ReservedHolding

# The tag that carries a GPU group's Reserved Instances in the plan, so every reader of the plan (the
# cost estimate offline and in the policy pack) prices them as the capacity decision did.
HOLDINGS_TAG = "seedance.io/reserved-instances"
# The spot price per instance-hour a group's plan was decided at: the estimate's expected cost of its spot
# units (never above on-demand: the tag is plan data, which a hand can edit).
EXPECTED_SPOT_TAG = "seedance.io/expected-spot-usd-per-hour"

Key = TypeVar("Key")


@dataclass(frozen=True)
class GroupMix:
    """How a group splits its units between on-demand (and the RIs that cover it) and spot."""

    on_demand_base: float
    on_demand_percentage_above_base: float  # 0 to 100
    instance_types: tuple[str, ...] = ()  # in on-demand priority order
    spot_types: tuple[str, ...] = ()
    holdings: tuple[ReservedHolding, ...] = ()  # counts in instances, rates per instance

    def spot_units(self, size: float) -> float:
        """Units on spot when the group runs `size` units."""
        return max(0.0, size - self.on_demand_base) * (100 - self.on_demand_percentage_above_base) / 100

    def on_demand_units(self, size: float) -> float:
        return size - self.spot_units(size)

    def spot_share_at(self, size: float) -> float:
        """Share of `size` units on spot (0 for an empty group)."""
        return self.spot_units(size) / size if size > 0 else 0.0

    def in_instances(self, gpus_per_instance: int) -> GroupMix:
        """This mix of GPUs as the Auto Scaling group runs it (no weights: it counts instances)."""
        return GroupMix(
            math.ceil(self.on_demand_base / gpus_per_instance - 1e-9),
            self.on_demand_percentage_above_base,
            self.instance_types,
            self.spot_types,
            self.holdings,
        )


def ceil_share(share: float, size: float) -> int:
    """Whole units that hold `share` of `size` (the RI baseline's rounding): up, with float slack."""
    return math.ceil(share * size - 1e-9)


def percentage_within_cap(base: float, max_size: float, cap: float) -> int:
    """The smallest whole on-demand percentage above `base` that keeps the spot share within `cap` at
    every size up to `max_size` (the share grows with size, so the maximum is the bound)."""
    if cap <= 0 or base >= max_size:
        return 100
    # share at max = (max - base) x (100 - p) / 100 / max <= cap
    allowed = cap * max_size / (max_size - base)
    return max(0, math.ceil(100 * (1 - allowed) - 1e-9))


def reserved_cover(
    on_demand_units: float, offers: Iterable[tuple[Key, float, float]]
) -> list[tuple[Key, float, float]]:
    """Which on-demand units Reserved Instances bill against: (key, units available, rate per unit)
    offers, cheapest rate first, until the units run out; returns (key, units covered, rate)."""
    covered, left = [], on_demand_units
    for key, units, rate in sorted(offers, key=lambda offer: offer[2]):
        if left <= 0:
            break
        take = min(left, units)
        if take > 0:
            covered.append((key, take, rate))
            left -= take
    return covered


Pool = tuple[str, str, str]  # (market, instance type, zone); on-demand and reserved pools have no zone


def price_mix(
    mix: GroupMix,
    units: float,
    on_demand: tuple[str, float | None],
    spot: Sequence[tuple[str, str, float]] | None,
    reserved: Iterable[tuple[str, float, float]] = (),
) -> list[tuple[Pool, float, float]] | None:
    """The one pricing of a mix, as (pool, units, $ per unit-hour) lines, at `units` in the group: the
    on-demand units bill first against `reserved` offers ((type, units, rate): cheapest first), the
    rest at the `on_demand` (type, rate); the spot units split evenly over the `spot` pools (type, zone,
    rate). None when a rate it needs is missing (None). Every reader prices a mix with it, each with its
    rates: the planner with the market's, the estimate with the plan's expected spot rate and, for the
    worst case, with spot at on-demand."""
    on_demand_units, spot_units = mix.on_demand_units(units), mix.spot_units(units)
    lines: list[tuple[Pool, float, float]] = [
        (("reserved", t, ""), covered, rate) for t, covered, rate in reserved_cover(on_demand_units, reserved)
    ]
    remaining = on_demand_units - sum(covered for _pool, covered, _rate in lines)
    if remaining > 0:
        if on_demand[1] is None:
            return None
        lines.append((("on-demand", on_demand[0], ""), remaining, on_demand[1]))
    if spot_units > 0:
        if not spot:
            return None
        lines += [(("spot", t, zone), spot_units / len(spot), rate) for t, zone, rate in spot]
    return lines


def hourly(lines: Iterable[tuple[Pool, float, float]]) -> float:
    return sum(units * rate for _pool, units, rate in lines)


def holdings_tag(holdings: Iterable[ReservedHolding]) -> str:
    """`<type>=<count>@<usd per hour>` per holding, space separated (characters AWS tags allow)."""
    return " ".join(f"{h.instance_type}={h.count}@{h.usd_per_hour:.6f}" for h in holdings if h.count > 0)


def holdings_from_tag(value: str, source: str = "plan tag") -> tuple[ReservedHolding, ...]:
    """The holdings `holdings_tag` wrote; `ValueError` for anything else (a plan file is edited by hand:
    a negative or non-finite rate would lower every estimate that reads it)."""
    held = []
    for entry in str(value).split():
        match = re.fullmatch(r"([a-z0-9][a-z0-9.-]*)=(\d{1,6})@(\d{1,6}(?:\.\d{1,9})?)", entry)
        if match is None:
            raise ValueError(f"{HOLDINGS_TAG} entry {entry!r} is not <type>=<count>@<usd per hour>")
        held.append(ReservedHolding(match.group(1), int(match.group(2)), float(match.group(3)), source))
    return tuple(held)


def expected_spot_rate(resource: PlanResource) -> float | None:
    """The group's expected spot $/instance-hour from its tag; None when absent or not a finite price."""
    value = (tags_of(resource) or {}).get(EXPECTED_SPOT_TAG)
    if value is None or is_unknown(value) or not re.fullmatch(r"\d{1,6}(\.\d{1,9})?", str(value)):
        return None
    return float(value)


def holdings_constraint(holdings: Sequence[ReservedHolding]) -> list[list[Any]]:
    """The holdings as a plan's constraints (and so the lock) record them: [type, count, usd per hour],
    and for what is not a Reserved Instance what it is: {kind, reference, zone, ends_at, targeted}."""
    recorded = []
    for h in holdings:
        entry: list[Any] = [h.instance_type, h.count, h.usd_per_hour]
        if h.kind != RESERVED_INSTANCE:
            entry.append(
                {
                    "kind": h.kind,
                    "reference": h.reference,
                    "zone": h.zone,
                    "targeted": h.targeted,
                    "ends_at": utc_text(h.ends_at) if h.ends_at else None,
                }
            )
        recorded.append(entry)
    return recorded


def holdings_from_constraints(constraints: dict[str, Any], source: str = "plan") -> tuple[ReservedHolding, ...]:
    """The holdings a plan was decided with, from its constraints."""
    held = []
    for entry in constraints.get("holdings", []):
        instance_type, count, rate, *what = entry
        meta = dict(what[0]) if what else {}
        ends = meta.get("ends_at")
        held.append(
            ReservedHolding(
                str(instance_type),
                int(count),
                float(rate),
                source,
                meta.get("kind", RESERVED_INSTANCE),
                meta.get("reference", ""),
                meta.get("zone", ""),
                parse_time(ends) if ends else None,
                bool(meta.get("targeted", False)),
            )
        )
    return tuple(held)


def asg_mix(resource: PlanResource) -> GroupMix | None:
    """An Auto Scaling group's mix from its plan inputs (camelCase) and tags; None without a
    MixedInstancesPolicy or while the base or the percentage is unknown at preview."""
    policy = resource.props.get("mixedInstancesPolicy") or {}
    if not policy:
        return None
    distribution = policy.get("instancesDistribution") or {}
    base = distribution.get("onDemandBaseCapacity")
    percentage = distribution.get("onDemandPercentageAboveBaseCapacity")
    if is_unknown(base) or is_unknown(percentage):
        return None
    overrides = (policy.get("launchTemplate") or {}).get("overrides") or []
    tag = (tags_of(resource) or {}).get(HOLDINGS_TAG) or ""
    return GroupMix(
        float(base or 0),
        float(100 if percentage is None else percentage),
        tuple(o.get("instanceType") for o in overrides),
        (),
        holdings_from_tag(tag),
    )
