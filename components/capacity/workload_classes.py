"""Workload classes: how much interruption a kind of work tolerates, and so how much spot it may use."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_TABLE = Path(__file__).parent / "data" / "workload_classes.json"


@dataclass(frozen=True)
class WorkloadClass:
    name: str
    description: str
    max_spot_share: float  # of the group's GPUs, at any size the autoscaler picks
    interruption_tolerance_seconds: int
    ri_baseline: float  # share of the group's desired GPUs always on on-demand / RI capacity
    # Spot starts only when EC2 scores some zone at least this for the group's spot share (None: no gate).
    min_placement_score: int | None
    lost_work_seconds: int  # work an interrupted GPU loses on average (batch: half a checkpoint interval)
    warmup_seconds: int  # a replacement node's start, image pull and model load, paid per interruption and roll


@cache
def workload_classes() -> dict[str, WorkloadClass]:
    table = json.loads(_TABLE.read_text())["classes"]
    return {name: WorkloadClass(name=name, **entry) for name, entry in table.items()}
