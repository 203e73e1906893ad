"""A demand history replayed under two ways of sharing a class's GPUs: each team held to its own quota (the
per-namespace ResourceQuotas), or the teams' ClusterQueues in one cohort (Kueue: nominal quotas, borrowing
and lending limits, preemption that reclaims a team's nominal quota from borrowers).

A fluid model, interval by interval: demand is GPUs, not jobs, so a gang's all-or-nothing start is not
modelled (the real controller's is tested in tests/engines/test_kueue_admission.py). Within one interval:

- each team first gets its demand up to its nominal quota (its quota, per namespace); if the capacity is
  short of those, it is shared max-min fairly;
- in the cohort, what the teams lend of their idle nominal (and any capacity beyond the quotas) is spare:
  borrowers keep what they ran in the interval before while they still want it, preempted (the excess over
  the spare, shared in proportion) when owners reclaim; the rest of the spare goes to new borrowing,
  max-min fairly, up to each team's borrowing limit.

Work within a team's nominal quota that is not served waits in first-in-first-out order; its wait is the
time from when the team's unmet share rose to when it fell (withdrawn work counts as served), and work
still waiting at the end counts until the end. Cost: committed GPUs (reserved and the on-demand base) are
paid every hour, GPUs above them only while they serve, all at the class's $/GPU-hour; a team pays the
committed GPUs in proportion to its nominal quota and the rest in proportion to what it ran.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.tenancy.demand import DemandHistory


@dataclass(frozen=True)
class Quota:
    nominal: int
    borrowing_limit: int | None = None  # None: as much as the cohort has spare
    lending_limit: int | None = None  # None: all of its idle nominal quota


@dataclass(frozen=True)
class Sharing:
    """How one class's GPUs are shared: per team (`cohort=False`: quotas are hard caps) or in a cohort."""

    cohort: bool
    quotas: Mapping[str, Quota]
    capacity: int
    committed: int  # GPUs paid whether used or not
    usd_per_gpu_hour: float


@dataclass(frozen=True)
class Outcome:
    capacity_gpu_hours: float
    gpu_hours_served: float
    idle_while_waiting_gpu_hours: float
    wait_p50_minutes_within_nominal: float
    wait_p95_minutes_within_nominal: float
    preemptions: float  # GPUs of running borrowed work evicted to reclaim quota (an 8-GPU job counts 8)
    usd_per_useful_gpu_hour: float | None  # None: nothing served

    def to_json(self) -> dict[str, float | None]:
        return {
            "capacity_gpu_hours": round(self.capacity_gpu_hours, 3),
            "gpu_hours_served": round(self.gpu_hours_served, 3),
            "idle_while_waiting_gpu_hours": round(self.idle_while_waiting_gpu_hours, 3),
            "wait_p50_minutes_within_nominal": round(self.wait_p50_minutes_within_nominal, 3),
            "wait_p95_minutes_within_nominal": round(self.wait_p95_minutes_within_nominal, 3),
            "preemptions": round(self.preemptions, 3),
            "usd_per_useful_gpu_hour": None
            if self.usd_per_useful_gpu_hour is None
            else round(self.usd_per_useful_gpu_hour, 4),
        }


@dataclass(frozen=True)
class Replay:
    total: Outcome
    teams: Mapping[str, Outcome]
    committed_used: float | None  # committed GPU-hours used over those demand could have used; None: no such hour

    def to_json(self) -> dict[str, object]:
        return {
            **self.total.to_json(),
            "committed_used_share": None if self.committed_used is None else round(self.committed_used, 4),
            "teams": {team: outcome.to_json() for team, outcome in sorted(self.teams.items())},
        }


@dataclass
class _Tally:
    capacity: float = 0.0
    served: float = 0.0
    idle_while_waiting: float = 0.0
    preempted: float = 0.0
    usd: float = 0.0
    waits: list[tuple[float, float]] = field(default_factory=list)  # (GPU-hours, minutes waited)

    def outcome(self) -> Outcome:
        return Outcome(
            self.capacity,
            self.served,
            self.idle_while_waiting,
            weighted_quantile(self.waits, 0.50),
            weighted_quantile(self.waits, 0.95),
            self.preempted,
            self.usd / self.served if self.served > 0 else None,
        )


def replay(history: DemandHistory, sharings: Mapping[str, Sharing]) -> Replay:
    """The history replayed with each class shared as `sharings` says (a class it lacks is not replayed)."""
    total, teams = _Tally(), dict[str, _Tally]()
    committed_used, committed_possible = 0.0, 0.0
    for klass in history.classes():
        if klass not in sharings:
            continue
        sharing = sharings[klass]
        names = sorted(set(history.teams(klass)) | set(sharing.quotas))
        queues = {team: _WaitQueue() for team in names}
        borrowed = dict.fromkeys(names, 0.0)
        idle = (0,) * history.intervals  # a team of the sharing the history never names
        levels = {team: history.demand.get((team, klass), idle) for team in names}
        for interval in range(history.intervals):
            hours = history.hours(interval)
            at = history.times[interval] / 3600.0
            demand = {team: levels[team][interval] for team in names}
            nominal = {team: _nominal(history, sharing, team, klass, interval) for team in names}
            served, preempted = _step(sharing, demand, nominal, borrowed)
            busy = sum(served.values())
            waiting = any(served[t] < demand[t] - 1e-9 for t in names)
            elastic = max(0.0, busy - sharing.committed)
            committed_used += min(busy, sharing.committed) * hours
            committed_possible += min(sum(demand.values()), sharing.committed, sharing.capacity) * hours
            quota_total = sum(nominal.values())
            for team in names:
                tally = teams.setdefault(team, _Tally())
                tally.capacity += nominal[team] * hours
                tally.served += served[team] * hours
                tally.preempted += preempted[team]
                share = nominal[team] / quota_total if quota_total else 0.0
                paid = sharing.committed * share + (elastic * served[team] / busy if busy else 0.0)
                tally.usd += paid * hours * sharing.usd_per_gpu_hour
                others_wait = any(served[o] < demand[o] - 1e-9 for o in names if o != team)
                if others_wait:
                    tally.idle_while_waiting += max(0.0, nominal[team] - served[team]) * hours
                within = min(demand[team], nominal[team])
                queues[team].move(within, max(0.0, within - min(served[team], nominal[team])), at, tally.waits)
            total.capacity += sharing.capacity * hours
            total.served += busy * hours
            total.preempted += sum(preempted.values())
            total.usd += (sharing.committed + elastic) * hours * sharing.usd_per_gpu_hour
            if waiting:
                total.idle_while_waiting += max(0.0, sharing.capacity - busy) * hours
        end = history.times[-1] / 3600.0
        for team in names:
            queues[team].move(0.0, 0.0, end, teams[team].waits)
    total.waits = [w for tally in teams.values() for w in tally.waits]
    return Replay(
        total.outcome(),
        {team: tally.outcome() for team, tally in teams.items()},
        committed_used / committed_possible if committed_possible > 0 else None,
    )


def _nominal(history: DemandHistory, sharing: Sharing, team: str, klass: str, interval: int) -> int:
    """The team's quota: the history's own for the per-namespace replay where it gives one, else the sharing's."""
    if not sharing.cohort:
        given = history.quotas.get((team, klass), ())
        held = given[interval] if given else None
        if held is not None:
            return held
    quota = sharing.quotas.get(team)
    return quota.nominal if quota else 0


def _step(
    sharing: Sharing, demand: Mapping[str, int], nominal: Mapping[str, int], borrowed: dict[str, float]
) -> tuple[dict[str, float], dict[str, float]]:
    """One interval: each team's GPUs served and the GPUs of its borrowed work preempted; `borrowed` updated."""
    own = water_fill({t: float(min(demand[t], nominal[t])) for t in demand}, float(sharing.capacity))
    preempted = dict.fromkeys(demand, 0.0)
    if not sharing.cohort:
        return own, preempted
    quotas = sharing.quotas
    unlendable = 0.0
    for team in demand:
        idle = nominal[team] - own[team]
        limit = quotas[team].lending_limit if team in quotas else None
        unlendable += max(0.0, idle - (limit if limit is not None else idle))
    spare = max(0.0, sharing.capacity - sum(own.values()) - unlendable)
    want = {}
    for team in demand:
        limit = quotas[team].borrowing_limit if team in quotas else None
        want[team] = min(max(0.0, demand[team] - nominal[team]), limit if limit is not None else math.inf)
    keep = {t: min(borrowed[t], want[t]) for t in demand}
    kept = sum(keep.values())
    if kept > spare + 1e-9:  # owners reclaim: borrowers give back the excess, in proportion
        scale = spare / kept
        for team in demand:
            preempted[team] = keep[team] * (1 - scale)
            keep[team] *= scale
    extra = water_fill({t: want[t] - keep[t] for t in demand}, max(0.0, spare - sum(keep.values())))
    for team in demand:
        borrowed[team] = keep[team] + extra[team]
    return {t: own[t] + borrowed[t] for t in demand}, preempted


def water_fill(wants: Mapping[str, float], capacity: float) -> dict[str, float]:
    """Max-min fair shares of `capacity`: every want met if it fits, else the smallest met first and the rest
    shared equally."""
    given = dict.fromkeys(wants, 0.0)
    left = capacity
    pending = sorted(wants, key=lambda t: (wants[t], t))
    while pending and left > 1e-12:
        equal = left / len(pending)
        smallest = wants[pending[0]]
        if smallest <= equal:
            given[pending[0]] = smallest
            left -= smallest
            pending.pop(0)
        else:
            for team in pending:
                given[team] = equal
            left = 0.0
            pending = []
    return given


class _WaitQueue:
    """A team's work within its nominal quota: what is unmet waits first in first out, as (GPUs, hour it began
    waiting); what is served as it arrives waited nothing. Weighted by GPUs (an 8-GPU job is 8 units)."""

    def __init__(self) -> None:
        self.segments: deque[list[float]] = deque()
        self.within = 0.0
        self.unmet = 0.0

    def move(self, within: float, unmet: float, at: float, waits: list[tuple[float, float]]) -> None:
        """From hour `at` the team asks `within` GPUs within its quota, `unmet` of them unserved: a rise of
        the unmet level joins the queue, a fall leaves it from the front, recording (GPUs, minutes waited)."""
        arrived, joined = max(0.0, within - self.within), max(0.0, unmet - self.unmet)
        if arrived - joined > 1e-9:
            waits.append((arrived - joined, 0.0))
        if joined > 0:
            self.segments.append([joined, at])
        leaving = max(0.0, self.unmet - unmet)
        while leaving > 1e-9 and self.segments:
            segment = self.segments[0]
            taken = min(segment[0], leaving)
            waits.append((taken, (at - segment[1]) * 60.0))
            segment[0] -= taken
            leaving -= taken
            if segment[0] <= 1e-9:
                self.segments.popleft()
        self.within, self.unmet = within, unmet


def weighted_quantile(weighted: Sequence[tuple[float, float]], quantile: float) -> float:
    """The value that `quantile` of the weight did not exceed, of (weight, value) pairs: a wait by the GPUs
    that waited it, a demand by the hours it lasted; 0 when there are none."""
    ordered = sorted(weighted, key=lambda pair: pair[1])
    total = sum(weight for weight, _value in ordered)
    reached = 0.0
    for weight, value in ordered:
        reached += weight
        if reached >= quantile * total - 1e-9:
            return value
    return 0.0
