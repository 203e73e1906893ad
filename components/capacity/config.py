"""Stack-level settings of the capacity decision: where prices come from, its thresholds, RI holdings."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from components.capacity.plan import PlannerSettings
from components.catalog.instance_types import gpu_instance_types
from components.common.validation import FieldError, IsoTime
from components.pricing.reserved import ReservedHolding


def known_gpu_type(value: str) -> str:
    if value not in gpu_instance_types():
        raise ValueError(f"not in the GPU instance table; known: {', '.join(sorted(gpu_instance_types()))}")
    return value


class ReservedInstanceConfig(BaseModel):
    """Reserved Instances held for one type, at their effective hourly rate per instance."""

    model_config = ConfigDict(extra="forbid")

    instance_type: str = Field(description="GPU instance type the RIs are for.")
    count: int = Field(ge=1, le=10_000, description="Instances reserved.")
    hourly_usd: float = Field(gt=0, le=1000, description="Effective $/h per instance: upfront / term hours + hourly.")

    _known_type = field_validator("instance_type")(lambda value: known_gpu_type(value))


class SavingsPlanConfig(BaseModel):
    """A Savings Plan's unused commitment, as Cost Explorer reports it, and its rates for the group types."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[\w-]{1,64}$", description="The plan's id (savingsPlanId).")
    plan_type: Literal["Compute", "EC2Instance"] = Field(
        "Compute", description="Compute, or EC2Instance (one family in one region)."
    )
    instance_family: str = Field("", pattern=r"^[a-z0-9]{0,16}$", description="An EC2Instance plan's family.")
    unused_usd_per_hour: float = Field(
        ge=0,
        le=100_000,
        allow_inf_nan=False,
        description="Commitment left unused every hour, per hour (live: the least of Cost Explorer's daily figures "
        "over 7 days can prove; docs/capacity-decision.md).",
    )
    rates: dict[str, float] = Field(
        max_length=64,
        description="$/h per instance under the plan, by GPU type "
        "(DescribeSavingsPlanRates: Linux/UNIX, shared tenancy, this region).",
    )
    ends: IsoTime = Field(description="When the plan ends (ISO 8601 with a zone); it counts only until then.")

    @model_validator(mode="after")
    def _family_of_an_instance_plan(self) -> SavingsPlanConfig:
        if self.plan_type == "EC2Instance" and not self.instance_family:
            raise ValueError("an EC2Instance plan covers one family: set instance_family (g6, p5, ...)")
        return self

    @field_validator("rates")
    @classmethod
    def _known_types(cls, rates: dict[str, float]) -> dict[str, float]:
        for instance_type, rate in rates.items():
            known_gpu_type(instance_type)
            if not 0 < rate <= 1000:
                raise ValueError(f"the rate for {instance_type}, {rate}, is not between 0 and 1000 $/h")
        return rates


class CapacityReservationConfig(BaseModel):
    """An On-Demand Capacity Reservation the account holds (billed at on-demand, used or not)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^cr-[0-9a-f]{8,17}$", description="The reservation's id.")
    instance_type: str = Field(description="GPU instance type reserved.")
    zone: str = Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$", description="Availability Zone it reserves in.")
    count: int = Field(ge=1, le=10_000, description="Instances reserved.")
    targeted: bool = Field(False, description="Only instances that name it launch into it (the group names it).")
    ends: IsoTime | None = Field(None, description="When it ends (ISO 8601 with a zone; none: until cancelled).")

    _known_type = field_validator("instance_type")(lambda value: known_gpu_type(value))


class CapacityConfig(BaseModel):
    """How node-group capacity plans are decided (see docs on the capacity decision)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["lock", "live", "snapshot"] = Field(
        "lock",
        description="lock: deploy the reviewed stacks/capacity.<env>.lock.json; live (dev only): decide at "
        "`pulumi up` from the AWS price APIs against the lock; snapshot: the bundled prices.",
    )
    spot_price_ratio: float | None = Field(
        None,
        gt=0,
        le=1,
        description="Optional guard, the source's rule (0.6): spot only below this x the type's RI "
        "rate. Off by default: expected cost decides.",
    )
    horizon_hours: float = Field(
        168,
        ge=1,
        le=8760,
        description="A plan change must repay its roll (every GPU replaced) with this many hours of saving.",
    )
    price_noise: float = Field(0.05, ge=0, le=0.2, description="Relative price movement treated as noise.")
    max_price_age_hours: float = Field(6, gt=0, le=168, description="Older prices never add spot.")
    min_spot_types: int = Field(
        1, ge=1, le=10, description="Eligible spot types needed before spot is used (all of a group that lists fewer)."
    )
    reserved_instances: Literal["config", "live"] = Field(
        "config", description="RI holdings from `reserved` below, or from describe_reserved_instances."
    )
    reserved: list[ReservedInstanceConfig] = Field([], description="RI holdings when reserved_instances is config.")
    commitments: Literal["config", "live"] = Field(
        "config",
        description="Savings Plans and capacity reservations from the two lists below, or read from the "
        "account (savingsplans:DescribeSavingsPlans and DescribeSavingsPlanRates, Cost Explorer "
        "utilisation, ec2:DescribeCapacityReservations).",
    )
    savings_plans: list[SavingsPlanConfig] = Field(
        [],
        max_length=20,
        description="Savings Plans when commitments is config: their headroom is spent on on-demand GPUs first.",
    )
    capacity_reservations: list[CapacityReservationConfig] = Field(
        [],
        max_length=50,
        description="On-Demand Capacity Reservations when commitments is config: the on-demand base fills them first.",
    )
    placement_scores: bool = Field(
        True,
        description="Ask EC2 for spot placement scores (live source only); without them classes with a placement "
        "minimum run no spot.",
    )
    budget_breaker: bool = Field(
        False,
        description="Spot only for every GPU group (dev and staging only): the "
        "durable form of `seedance breaker` at 95 % of the budget.",
    )

    @model_validator(mode="after")
    def _each_holding_once(self) -> CapacityConfig:
        # A repeated id would count one reservation twice, or two plans' headroom as one.
        for key, entries in (
            ("savings_plans", self.savings_plans),
            ("capacity_reservations", self.capacity_reservations),
        ):
            ids = [entry.id for entry in entries]
            repeated = next((i for i in ids if ids.count(i) > 1), None)
            if repeated:
                raise FieldError(key, repeated, "is listed twice; allowed: each id once")
        return self

    def settings(self) -> PlannerSettings:
        return PlannerSettings(
            spot_price_ratio=self.spot_price_ratio,
            horizon_hours=self.horizon_hours,
            max_price_age=timedelta(hours=self.max_price_age_hours),
            price_noise=self.price_noise,
            min_spot_types=self.min_spot_types,
        )

    def configured_holdings(self) -> list[ReservedHolding]:
        return [ReservedHolding(r.instance_type, r.count, r.hourly_usd, "stack config") for r in self.reserved]
