"""The capacity lock: the plans a stack deploys, with the prices and reasons they were decided from.

`stacks/capacity.<env>.lock.json` is written by `seedance decide` and reviewed in a pull request;
the program deploys exactly its plans. Its recorded prices are also a `PriceSource` (with their
original ages, so they can never pass for fresh ones).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from components.capacity.plan import CapacityPlan, Decision, PlannerSettings
from components.pricing.prices import (
    PlacementRequest,
    PriceBook,
    PriceSourceError,
    book_from_json,
    book_to_json,
    format_time,
    parse_time,
)
from seedance_client.files import InputFileError, load_json

LOCK_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class LockedPrice(_Strict):
    usd_per_hour: float = Field(ge=0)
    observed_at: AwareDatetime
    source: str


class LockedInterruptions(_Strict):
    per_month: float = Field(ge=0, le=1)
    observed_at: AwareDatetime
    source: str


class LockedPrices(_Strict):
    on_demand: dict[str, LockedPrice]
    spot: dict[str, LockedPrice]  # "<type>@<zone>"
    interruptions: dict[str, LockedInterruptions] = {}


class LockedHolding(_Strict):
    """What a holding other than a Reserved Instance is (a Savings Plan, a reservation), as decided."""

    kind: Literal["savings-plan", "capacity-reservation", "capacity-block"]
    reference: str = Field(max_length=64)
    zone: str = Field(max_length=32, pattern=r"^([a-z]{2}(-[a-z]+)+-\d[a-z])?$")
    targeted: bool
    ends_at: str | None = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")

    @model_validator(mode="after")
    def _its_kinds_reference(self) -> LockedHolding:
        # A reservation is named by EC2's id (what a group would target); a plan by its id.
        pattern = r"cr-[0-9a-f]{8,17}" if self.kind != "savings-plan" else r"[\w-]{1,64}"
        if not re.fullmatch(pattern, self.reference):
            raise ValueError(f"reference {self.reference!r} is no {self.kind} id")
        return self


class LockedConstraints(_Strict):
    """What a plan was decided for; with RIs read live, the lock is their only record, so they are
    bounded here like configured ones."""

    workload_class: dict[str, Any]
    instance_types: list[str] = Field(min_length=1)
    zones: list[str] = Field(min_length=1, max_length=6)
    min_gpus: int = Field(ge=0)
    desired_gpus: int = Field(ge=0)
    max_gpus: int = Field(ge=0)
    holdings: list[
        tuple[str, Annotated[int, Field(ge=0)], Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)]]
        | tuple[
            str, Annotated[int, Field(ge=0)], Annotated[float, Field(ge=0, le=1000, allow_inf_nan=False)], LockedHolding
        ]
    ]

    @model_validator(mode="after")
    def _paid_for(self) -> LockedConstraints:
        # Only a Capacity Block is paid up front ($0 an hour); anything else at $0 would price its GPUs free.
        for entry in self.holdings:
            if entry[2] <= 0 and not (len(entry) == 4 and entry[3].kind == "capacity-block"):
                raise ValueError(f"holding {list(entry[:3])}: a rate of 0 $/h is only a Capacity Block's")
        return self


class LockedPlan(_Strict):
    """A `CapacityPlan` as the lock stores it; a hand edit that breaks it is refused by name."""

    group: str
    instance_types: list[str] = Field(min_length=1)
    spot_types: list[str]
    on_demand_base_gpus: int = Field(ge=0)
    on_demand_percentage_above_base: int = Field(ge=0, le=100)
    capacity_rebalance: bool
    expected_usd_per_hour: float = Field(ge=0)
    all_on_demand_usd_per_hour: float = Field(ge=0)
    constraints: LockedConstraints
    explanation: list[str]
    spot_allocation_strategy: str
    on_demand_allocation_strategy: str
    spot_usd_per_gpu_hour: float | None = Field(None, ge=0, le=1000, allow_inf_nan=False)


class LockedGroup(_Strict):
    decided_at: AwareDatetime
    source: str
    rule: str
    reasons: list[str]
    plan: LockedPlan
    prices: LockedPrices


class LockDocument(_Strict):
    lock_version: Literal[1]
    stack: str
    region: str
    updated_at: AwareDatetime
    settings: dict[str, Any]
    notes: list[str] = []
    groups: dict[str, LockedGroup]


class LockError(Exception):
    """The lock file is missing, unreadable or of another version."""


def lock_path(stacks_dir: Path, stack: str) -> Path:
    return stacks_dir / f"capacity.{stack}.lock.json"


@dataclass(frozen=True)
class CapacityLock:
    stack: str
    region: str
    updated_at: datetime
    settings: dict[str, Any]
    groups: dict[str, dict[str, Any]]  # name -> {"decided_at", "source", "rule", "reasons", "plan", "prices"}
    notes: tuple[str, ...] = ()

    def plans(self) -> dict[str, CapacityPlan]:
        return {name: CapacityPlan.from_json(entry["plan"]) for name, entry in self.groups.items()}

    def price_book(self) -> PriceBook:
        """Every group's recorded prices, the newest of each."""
        book = PriceBook(region=self.region)
        for entry in self.groups.values():
            book = book.newest_of(book_from_json(self.region, entry["prices"]))
        return book

    def to_json(self) -> dict[str, Any]:
        return {
            "lock_version": LOCK_VERSION,
            "stack": self.stack,
            "region": self.region,
            "updated_at": format_time(self.updated_at),
            "settings": self.settings,
            "notes": list(self.notes),
            "groups": self.groups,
        }


def settings_to_json(settings: PlannerSettings) -> dict[str, Any]:
    values = asdict(settings)
    for name in [k for k, v in values.items() if isinstance(v, timedelta)]:
        values[f"{name}_hours"] = values.pop(name).total_seconds() / 3600
    return values


def build_lock(
    previous: CapacityLock | None,
    stack: str,
    region: str,
    now: datetime,
    source: str,
    settings: PlannerSettings,
    decisions: list[Decision],
    book: PriceBook,
) -> CapacityLock:
    """The new lock: a group whose plan was kept keeps its entry as decided (with the prices it was
    decided from); a changed group gets the new plan, its reasons and the prices used."""
    groups = {}
    for decision in decisions:
        name = decision.plan.group
        if not decision.changed and previous is not None and name in previous.groups:
            groups[name] = previous.groups[name]
            continue
        types = decision.plan.constraints["instance_types"]
        groups[name] = {
            "decided_at": format_time(now),
            "source": source,
            "rule": decision.rule,
            "reasons": list(decision.reasons),
            "plan": decision.plan.to_json(),
            "prices": book_to_json(book.restricted_to(types, decision.plan.constraints["zones"])),
        }
    return CapacityLock(
        stack=stack,
        region=region,
        updated_at=now,
        settings=settings_to_json(settings),
        groups=groups,
        notes=tuple(book.notes),
    )


def render_lock(lock: CapacityLock) -> str:
    return json.dumps(lock.to_json(), indent=2, sort_keys=True) + "\n"


def read_lock(path: Path) -> CapacityLock:
    try:
        document = load_json(path, "capacity lock")
    except InputFileError as error:
        raise LockError(str(error)) from None
    if not isinstance(document, dict):
        raise LockError(
            f"{path} holds a JSON {type(document).__name__}, not a lock object; restore it from git, or "
            "delete it and run `seedance decide` again"
        )
    if document.get("lock_version") != LOCK_VERSION:
        raise LockError(f"{path} has lock_version {document.get('lock_version')!r}; this package reads {LOCK_VERSION}")
    try:
        # JSON has no datetime: times are validated as ISO strings with a zone. What is read on is the
        # validated document, in JSON's types again, never the raw one (a number where a time or a string
        # where a count belongs would otherwise pass through).
        document = LockDocument.model_validate(document, strict=False).model_dump(mode="json")
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        shown = "(missing)" if first["type"] == "missing" else json.dumps(first.get("input"), default=str)[:80]
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise LockError(
            f"{path}: {key} = {shown}: {first['msg']}{more}; locks are written by `seedance decide`, "
            "not by hand: restore it from git, or delete it and decide again"
        ) from None
    return CapacityLock(
        stack=document["stack"],
        region=document["region"],
        updated_at=parse_time(document["updated_at"]),
        settings=document["settings"],
        groups=document["groups"],
        notes=tuple(document.get("notes", ())),
    )


class LockPriceSource:
    """The prices a lock was decided from, with their original observation times."""

    name = "lock"

    def __init__(self, lock: CapacityLock):
        self.lock = lock

    def prices(
        self,
        region: str,
        instance_types: Sequence[str],
        zones: Sequence[str],
        placement: Sequence[PlacementRequest] = (),
    ) -> PriceBook:
        if region != self.lock.region:
            raise PriceSourceError(f"the lock holds prices for {self.lock.region}, not {region}")
        return self.lock.price_book().restricted_to(instance_types, zones)
