"""The AWS regions this package supports, with their Availability Zones (a data table, not code)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_TABLE = Path(__file__).parent / "data" / "aws_regions.json"


@dataclass(frozen=True)
class Region:
    name: str
    partition: str
    zone_names: tuple[str, ...]
    zone_ids: tuple[str, ...]


@cache
def regions() -> dict[str, Region]:
    table = json.loads(_TABLE.read_text())
    return {
        name: Region(
            name=name,
            partition=entry["partition"],
            zone_names=tuple(z[0] for z in entry["zones"]),
            zone_ids=tuple(z[1] for z in entry["zones"]),
        )
        for name, entry in table["regions"].items()
    }

