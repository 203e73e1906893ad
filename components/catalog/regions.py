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


# Zones EKS refuses control-plane subnets in (EKS User Guide, "VPC and subnet requirements": "use1-az3
# in us-east-1, usw1-az2 in us-west-1, cac1-az3 in ca-central-1"). By zone ID: zone names map to
# different physical zones in each account.
EKS_EXCLUDED_ZONE_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})


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
