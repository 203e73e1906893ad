"""What the planner decides over and decides: a group's request, its plan, the decision, the settings. Pure."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from typing import Any

from components.capacity.mix import GroupMix, holdings_constraint, holdings_from_constraints
from components.capacity.workload_classes import WorkloadClass
from components.pricing.prices import PriceBook
from components.pricing.reserved import HOLDING_KINDS, ReservedHolding

SPOT_ALLOCATION_STRATEGY = "price-capacity-optimized"
# On-demand capacity goes to the first type that has capacity: RI-covered types are listed first.
ON_DEMAND_ALLOCATION_STRATEGY = "prioritized"


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


def holding_order(holding: ReservedHolding) -> tuple[int, str, str, str, float, int]:
    """Commitments, then RIs, reservations and blocks; within a kind by type, id, zone and rate."""
    return (
        HOLDING_KINDS.index(holding.kind),
        holding.instance_type,
        holding.reference,
        holding.zone,
        holding.usd_per_hour,
        holding.count,
    )


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

    def constraints(self) -> dict[str, Any]:
        """Everything a plan was decided for; a plan whose constraints differ no longer fits."""
        return {
            "workload_class": asdict(self.workload_class),
            "instance_types": list(self.instance_types),
            "zones": list(self.zones),
            "min_gpus": self.min_gpus,
            "desired_gpus": self.desired_gpus,
            "max_gpus": self.max_gpus,
            # In one order whoever lists them (a decision, or a lock read back), so that equal holdings compare equal.
            "holdings": holdings_constraint(sorted(self.holdings, key=holding_order)),
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
    constraints: dict[str, Any]
    explanation: tuple[str, ...]
    spot_allocation_strategy: str = SPOT_ALLOCATION_STRATEGY
    on_demand_allocation_strategy: str = ON_DEMAND_ALLOCATION_STRATEGY
    # The spot price per GPU-hour the plan was decided at (its spot pools, weighted): the estimate's
    # expected cost; None without spot.
    spot_usd_per_gpu_hour: float | None = None

    @property
    def mix(self) -> GroupMix:
        """The plan's mix in GPUs, with the Reserved Instances it was decided with."""
        return GroupMix(
            self.on_demand_base_gpus,
            self.on_demand_percentage_above_base,
            self.instance_types,
            self.spot_types,
            holdings_from_constraints(self.constraints),
        )

    def spot_share_at(self, gpus: int) -> float:
        """Share of `gpus` the group runs on spot with this distribution."""
        return self.mix.spot_share_at(gpus)

    @property
    def max_spot_share(self) -> float:
        return self.spot_share_at(self.constraints["max_gpus"])

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "instance_types": list(self.instance_types),
            "spot_types": list(self.spot_types),
            "explanation": list(self.explanation),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CapacityPlan:
        return cls(
            **{
                **data,
                "instance_types": tuple(data["instance_types"]),
                "spot_types": tuple(data["spot_types"]),
                "explanation": tuple(data["explanation"]),
            }
        )


@dataclass(frozen=True)
class Decision:
    plan: CapacityPlan
    changed: bool
    # Which rule decided: first-plan, constraint, saving, keep:same-plan, keep:saving-below-roll-cost,
    # keep:stale-prices.
    rule: str
    reasons: tuple[str, ...]
    prices_used: PriceBook = field(repr=False)


def constraint_changes(decided_for: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """The constraints that differ, by name; for a class, its fields (a plan decided by an earlier
    version lacks the fields added since, and is named as such)."""
    changes = []
    for key, value in wanted.items():
        old = decided_for.get(key)
        if old == value:
            continue
        if isinstance(old, dict) and isinstance(value, dict):
            changes += [
                f"{key}.{k}" + (" (new field)" if k not in old else "") for k in value if old.get(k) != value[k]
            ]
        else:
            changes.append(key)
    return sorted(changes)


def same_distribution(a: CapacityPlan, b: CapacityPlan) -> bool:
    """Whether two plans deploy the same mixed instances policy."""
    fields = (
        "instance_types",
        "spot_types",
        "on_demand_base_gpus",
        "on_demand_percentage_above_base",
        "capacity_rebalance",
        "spot_allocation_strategy",
        "on_demand_allocation_strategy",
    )
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def spot_only(plan: CapacityPlan) -> CapacityPlan:
    """The budget breaker's plan (the source: at 95 % of budget, dev and staging GPU groups go spot only).
    It sets aside the class caps on purpose, for non-prod stacks only."""
    return replace(
        plan,
        on_demand_base_gpus=0,
        on_demand_percentage_above_base=0,
        spot_types=plan.instance_types,
        capacity_rebalance=True,
        explanation=(*plan.explanation, "budget breaker on (capacity.budget_breaker): spot only"),
    )
