"""Nominal quotas and borrowing limits proposed from a demand history, for a cohort of the given capacity.

Nominal quotas are chosen among a few candidates by replaying the history under each (the cohort's
model, components/tenancy/replay.py): today's quotas, and the capacity split in proportion to each team's
median, 90th-percentile or peak demand (time-weighted; whole GPUs by largest remainder). The candidate
that serves the most GPU-hours wins; then the one that preempts the fewest GPUs (a nominal quota near a
team's typical demand makes it reclaim and lend back and forth); then the shortest p95 wait within nominal
quota; then today's. Borrowing is limited to what the team's peak needed beyond its nominal quota: the
history is served, and a team's runaway submissions cannot take the whole cohort. Lending is not limited:
idle quota is lent and reclaimed by preemption, which is what the cohort is for. Online work never borrows
(its ClusterQueues lend but do not borrow: serving is not preempted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from components.tenancy.demand import DemandHistory
from components.tenancy.replay import Quota, Sharing, replay, weighted_quantile

TODAY = "today's quotas"
PERCENTILES = {"median demand": 0.50, "90th-percentile demand": 0.90, "peak demand": 1.0}
NON_BORROWING = ("online",)


@dataclass(frozen=True)
class Proposal:
    quotas: dict[str, Quota]  # team -> proposed quota
    basis: str  # the candidate chosen: TODAY or a key of PERCENTILES
    scores: dict[str, tuple[float, float, float]]  # candidate -> (GPU-hours served, GPUs preempted, p95 wait)


def demand_percentile(history: DemandHistory, team: str, klass: str, percentile: float) -> int:
    """The demand the team's work stayed at or under for `percentile` of the history's time."""
    levels = history.demand.get((team, klass), ())
    return round(weighted_quantile([(history.hours(i), level) for i, level in enumerate(levels)], percentile))


def propose(history: DemandHistory, klass: str, today: Mapping[str, int], capacity: int) -> Proposal:
    """The proposed quotas in `klass` of the teams `today` names (with their quotas now), for `capacity` GPUs."""
    teams = sorted(today)
    candidates = {TODAY: dict(today)} | {
        name: largest_remainder({t: demand_percentile(history, t, klass, p) for t in teams}, capacity)
        for name, p in PERCENTILES.items()
    }
    proposals = {name: _with_limits(history, klass, nominal) for name, nominal in candidates.items()}
    scores = {}
    for name, quotas in proposals.items():
        total = replay(history, {klass: Sharing(True, quotas, capacity, 0, 0.0)}).total
        scores[name] = (total.gpu_hours_served, total.preemptions, total.wait_p95_minutes_within_nominal)
    order = list(proposals)
    best = min(order, key=lambda name: (-round(scores[name][0], 6), *scores[name][1:], order.index(name)))
    return Proposal(proposals[best], best, scores)


def _with_limits(history: DemandHistory, klass: str, nominal: Mapping[str, int]) -> dict[str, Quota]:
    quotas = {}
    for team, gpus in nominal.items():
        peak = max(history.demand.get((team, klass), (0,)))
        borrowing = 0 if klass in NON_BORROWING else max(0, peak - gpus)
        quotas[team] = Quota(gpus, borrowing_limit=borrowing, lending_limit=None)
    return quotas


def largest_remainder(weights: Mapping[str, int], total: int) -> dict[str, int]:
    """`total` split in proportion to `weights`, in whole units summing to `total` (nothing when no weight)."""
    weight = sum(weights.values())
    if weight == 0:
        return dict.fromkeys(weights, 0)
    exact = {team: total * w / weight for team, w in weights.items()}
    given = {team: math.floor(value) for team, value in exact.items()}
    order = sorted(weights, key=lambda team: (given[team] - exact[team], team))
    for team in order[: total - sum(given.values())]:
        given[team] += 1
    return given
