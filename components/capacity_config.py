"""Stack-level settings of the capacity decision: where prices come from, its thresholds, RI holdings."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from components.config_validation import FieldError
from components.capacity_plan import PlannerSettings, ReservedHolding
from components.gpu_instance_types import gpu_instance_types


class ReservedInstanceConfig(BaseModel):
    """Reserved Instances held for one type, at their effective hourly rate per instance."""

    model_config = ConfigDict(extra="forbid")

    instance_type: str = Field(description="GPU instance type the RIs are for.")
    count: int = Field(ge=1, le=10_000, description="Instances reserved.")
    hourly_usd: float = Field(gt=0, le=1000, description="Effective $/h per instance: upfront / term hours + hourly.")

    @field_validator("instance_type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in gpu_instance_types():
            raise ValueError(f"not in the GPU instance table; known: {', '.join(sorted(gpu_instance_types()))}")
        return value


class CapacityConfig(BaseModel):
    """How node-group capacity plans are decided (see docs on the capacity decision)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["lock", "live", "snapshot"] = Field(
        "lock", description="lock: deploy the reviewed stacks/capacity.<env>.lock.json; live (dev only): decide at "
                            "`pulumi up` from the AWS price APIs against the lock; snapshot: the bundled prices.")
    spot_price_ratio: float = Field(0.6, gt=0, le=1, description="Spot is eligible below this x the RI rate.")
    min_saving: float = Field(0.10, ge=0.01, le=0.5, description="A new plan must save this share of $/h to replace one.")
    price_noise: float = Field(0.05, ge=0, le=0.2, description="Relative price movement treated as noise.")
    max_price_age_hours: float = Field(6, gt=0, le=168, description="Older prices never add spot.")
    min_spot_types: int = Field(3, ge=1, le=10, description="Spot pools a group spreads over when it lists that many.")
    reserved_instances: Literal["config", "live"] = Field(
        "config", description="RI holdings from `reserved` below, or from describe_reserved_instances.")
    reserved: list[ReservedInstanceConfig] = Field([], description="RI holdings when reserved_instances is config.")
    placement_scores: bool = Field(True, description="Ask EC2 for spot placement scores (live source only).")
    budget_breaker: bool = Field(False, description="Spot only for every GPU group (dev and staging only): the "
                                                    "durable form of `seedance breaker` at 95 % of the budget.")

    @model_validator(mode="after")
    def _saving_beats_noise(self) -> "CapacityConfig":
        # Noise of +-n moves a plan's cost by up to 1 - (1-n)/(1+n); a smaller min_saving would flip-flop.
        noise_effect = 1 - (1 - self.price_noise) / (1 + self.price_noise)
        if self.min_saving <= noise_effect:
            raise FieldError("min_saving", self.min_saving, f"must exceed {noise_effect:.4f}, the cost change that "
                             f"price_noise {self.price_noise} alone can cause")
        return self

    def settings(self) -> PlannerSettings:
        return PlannerSettings(spot_price_ratio=self.spot_price_ratio, min_saving=self.min_saving,
                               max_price_age=timedelta(hours=self.max_price_age_hours),
                               price_noise=self.price_noise, min_spot_types=self.min_spot_types)

    def configured_holdings(self) -> list[ReservedHolding]:
        return [ReservedHolding(r.instance_type, r.count, r.hourly_usd, "stack config") for r in self.reserved]
