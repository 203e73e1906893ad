"""Prices the capacity planner decides from, behind one interface (`PriceSource`).

Implementations: the bundled snapshot (`SnapshotPriceSource`, here), the live AWS APIs
(`components.pricing.live.LivePriceSource`) and the prices recorded in a capacity lock
(`components.capacity.lock`). Every price carries its source and when it was observed, so a
decision can say how old each number was. A price that is not known is absent, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, TypeVar

# Prices are per hour and budgets per month: the one conversion every reader of a price uses.
HOURS_PER_MONTH = 730

SNAPSHOT_FILE = Path(__file__).parent / "data" / "price_snapshot.json"
# A snapshot price copied from another region (no licensed table of its own was found) says so in its source.
ASSUMED_PRICE_MARK = "unverified"


class PriceSourceError(Exception):
    """A price source could not answer (endpoint down, throttled past the retry budget, no data)."""


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    observed_at: datetime  # when the price was read (for live prices: the query time)
    source: str

    def age(self, now: datetime) -> timedelta:
        return now - self.observed_at

    @property
    def assumed(self) -> bool:
        return ASSUMED_PRICE_MARK in self.source


@dataclass(frozen=True)
class PlacementRequest:
    """One spot placement score question: these types, this many capacity units, per zone."""

    instance_types: tuple[str, ...]
    target_capacity: int

    def __post_init__(self) -> None:  # the same types in another order ask the same question
        object.__setattr__(self, "instance_types", tuple(sorted(self.instance_types)))


@dataclass(frozen=True)
class PlacementScore:
    score: int  # 1-10, EC2's likelihood that a spot request of this shape succeeds in the zone
    observed_at: datetime
    source: str


@dataclass(frozen=True)
class InterruptionFrequency:
    """How often spot capacity of a type is reclaimed in the region: the share of its spot instances
    interrupted over a trailing month (the Spot Instance Advisor's band, at its upper edge)."""

    per_month: float
    observed_at: datetime
    source: str

    def age(self, now: datetime) -> timedelta:
        return now - self.observed_at


class _Observed(Protocol):
    @property
    def observed_at(self) -> datetime: ...


_Key = TypeVar("_Key")
_Value = TypeVar("_Value", bound=_Observed)


@dataclass
class PriceBook:
    """The prices known for one region at one time; lookups return None when a price is unknown."""

    region: str
    on_demand: dict[str, Price] = field(default_factory=dict)
    spot: dict[tuple[str, str], Price] = field(default_factory=dict)  # (instance type, zone)
    placement: dict[tuple[PlacementRequest, str], PlacementScore] = field(default_factory=dict)  # (question, zone)
    interruptions: dict[str, InterruptionFrequency] = field(default_factory=dict)  # instance type
    notes: list[str] = field(default_factory=list)  # fallbacks taken, endpoints that failed

    def on_demand_price(self, instance_type: str) -> Price | None:
        return self.on_demand.get(instance_type)

    def spot_price(self, instance_type: str, zone: str) -> Price | None:
        return self.spot.get((instance_type, zone))

    def placement_score(self, question: PlacementRequest, zone: str) -> PlacementScore | None:
        return self.placement.get((question, zone))

    def interruption_frequency(self, instance_type: str) -> InterruptionFrequency | None:
        return self.interruptions.get(instance_type)

    def newest_observation(self) -> datetime | None:
        """When the most recently observed value of the book was read."""
        values: list[_Observed] = [
            *self.on_demand.values(),
            *self.spot.values(),
            *self.placement.values(),
            *self.interruptions.values(),
        ]
        return max((v.observed_at for v in values), default=None)

    def restricted_to(self, instance_types: Sequence[str], zones: Sequence[str]) -> PriceBook:
        wanted = set(instance_types)
        return PriceBook(
            region=self.region,
            on_demand={t: p for t, p in self.on_demand.items() if t in wanted},
            spot={(t, z): p for (t, z), p in self.spot.items() if t in wanted and z in zones},
            interruptions={t: f for t, f in self.interruptions.items() if t in wanted},
            notes=list(self.notes),
        )

    def newest_of(self, other: PriceBook) -> PriceBook:
        """Both books together, keeping the more recently observed value of each price."""

        def merge(mine: dict[_Key, _Value], theirs: dict[_Key, _Value]) -> dict[_Key, _Value]:
            merged = dict(theirs)
            for key, value in mine.items():
                if key not in merged or value.observed_at >= merged[key].observed_at:
                    merged[key] = value
            return merged

        return PriceBook(
            region=self.region,
            on_demand=merge(self.on_demand, other.on_demand),
            spot=merge(self.spot, other.spot),
            placement=merge(self.placement, other.placement),
            interruptions=merge(self.interruptions, other.interruptions),
            notes=[*self.notes, *other.notes],
        )


class PriceSource(Protocol):
    name: str

    def prices(
        self,
        region: str,
        instance_types: Sequence[str],
        zones: Sequence[str],
        placement: Sequence[PlacementRequest] = (),
    ) -> PriceBook:
        """Prices for these types in these zones; raises `PriceSourceError` when it cannot answer."""
        ...


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def utc_text(moment: datetime) -> str:
    """UTC to the second, `YYYY-MM-DDThh:mm:ssZ`: how the lock records an end and AWS's scheduled actions
    take a start."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_time(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def price_to_json(price: Price) -> dict[str, Any]:
    return {"usd_per_hour": price.usd_per_hour, "observed_at": format_time(price.observed_at), "source": price.source}


def price_from_json(entry: dict[str, Any]) -> Price:
    return Price(
        usd_per_hour=float(entry["usd_per_hour"]), observed_at=parse_time(entry["observed_at"]), source=entry["source"]
    )


def book_to_json(book: PriceBook) -> dict[str, Any]:
    """A region's entry in the snapshot (and the prices section of a lock)."""
    document = {
        "on_demand": {t: price_to_json(p) for t, p in sorted(book.on_demand.items())},
        "spot": {f"{t}@{z}": price_to_json(p) for (t, z), p in sorted(book.spot.items())},
    }
    if book.interruptions:
        document["interruptions"] = {
            t: {"per_month": f.per_month, "observed_at": format_time(f.observed_at), "source": f.source}
            for t, f in sorted(book.interruptions.items())
        }
    return document


def book_from_json(region: str, entry: dict[str, Any]) -> PriceBook:
    spot = {}
    for key, value in entry.get("spot", {}).items():
        instance_type, zone = key.split("@")
        spot[(instance_type, zone)] = price_from_json(value)
    interruptions = {
        t: InterruptionFrequency(float(v["per_month"]), parse_time(v["observed_at"]), v["source"])
        for t, v in entry.get("interruptions", {}).items()
    }
    return PriceBook(
        region=region,
        on_demand={t: price_from_json(v) for t, v in entry.get("on_demand", {}).items()},
        spot=spot,
        interruptions=interruptions,
    )


@dataclass(frozen=True)
class UnitPrice:
    """A price per unit other than an instance-hour (a GB processed, an endpoint's AZ-hour)."""

    usd: float
    observed_at: datetime
    source: str


class SnapshotPriceSource:
    """The dated price table shipped in the package (regenerate with `seedance prices refresh`)."""

    name = "snapshot"

    def __init__(self, path: Path = SNAPSHOT_FILE):
        self.path = path

    def document(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.path.read_text())
        return document

    def service_prices(self, region: str) -> dict[str, UnitPrice]:
        """Network prices (NAT, endpoints, cross-AZ transfer) for the region, by name."""
        entry = self.document()["regions"].get(region, {}).get("services")
        if entry is None:
            raise PriceSourceError(f"the price snapshot {self.path.name} has no network prices for {region}")
        return {name: UnitPrice(v["usd"], parse_time(v["observed_at"]), v["source"]) for name, v in entry.items()}

    def book(self, region: str) -> PriceBook:
        """Every EC2 price the snapshot holds for the region."""
        entry = self.document()["regions"].get(region)
        if entry is None:
            raise PriceSourceError(f"the price snapshot {self.path.name} has no prices for {region}")
        return book_from_json(region, entry)

    def prices(
        self,
        region: str,
        instance_types: Sequence[str],
        zones: Sequence[str],
        placement: Sequence[PlacementRequest] = (),
    ) -> PriceBook:
        return self.book(region).restricted_to(instance_types, zones)
