"""Shared GPUs against per-team quotas, on generated demand histories and any public one in bench/data/:
each history replayed under today's per-namespace quotas and under the cohort `seedance quotas plan`
proposes for it (components/tenancy/replay.py is the model), at the prod stack's batch $/GPU-hour.

Generated histories (seeded, 30 days at 10-minute steps, four teams of 16 GPUs each, three quarters of
the capacity committed): peaks together (every team's daily peak at the same hour), peaks apart (a quarter-day apart),
one team idle (it asks for nothing while the others ask for more than their quotas), and bursts of gangs
(each team's base work plus 32-GPU jobs arriving at random for 2 to 12 hours).

Prints, per history and for each way of sharing: GPU-hours idle while a team waited as a share of the
capacity's GPU-hours, p95 wait of work within nominal quota, the share of committed GPU-hours used when
demand allowed, preempted GPUs and cost per useful GPU-hour; then each goal (idle while waiting at most 1 %,
p95 wait at most 5 minutes, committed use at least 87.4 %, cohort cost per useful GPU-hour never above the
per-namespace one) as met or not. Run: .venv/bin/python bench/quota_replay.py [--smoke] (--smoke: 2 days,
as `make test` runs it)
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.tenancy.demand import DemandHistory, read_demand
from components.tenancy.replay import Quota, Replay, Sharing, replay
from seedance.quotas_command import QuotaReport, quota_report

TEAMS = ("team-a", "team-b", "team-c", "team-d")
QUOTA = 16
STEP_MINUTES = 10
COMMITTED_SHARE = 0.75  # a Reserved Instance baseline: the capacity a platform buys for its steady demand
USD_PER_GPU_HOUR = 4.10  # p4d's on-demand $/GPU-hour in us-east-1 (FACTS.md): the ratios do not depend on it
DATA = Path(__file__).resolve().parent / "data"
GOAL_IDLE_WHILE_WAITING = 0.01
GOAL_WAIT_P95_MINUTES = 5.0
GOAL_COMMITTED_USED = 0.874

MEMORY = math.exp(-STEP_MINUTES / 60)  # each step keeps this share of the last: an hour's memory

Demand = Callable[[random.Random, int, float], int]  # (rng, team index, hour) -> GPUs


class _Noise:
    """Each team's departure from its pattern: slow (autoregressive, an hour's memory),
    as work comes and goes in jobs, not independently every step."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.level: dict[int, float] = {}

    def __call__(self, rng: random.Random, team: int) -> float:
        level = MEMORY * self.level.get(team, 0.0) + rng.gauss(0, self.scale * math.sqrt(1 - MEMORY**2))
        self.level[team] = level
        return level


def _daily(phase_hours: Callable[[int], float]) -> Demand:
    noise = _Noise(2.0)

    def demand(rng: random.Random, team: int, hour: float) -> int:
        wave = math.sin(2 * math.pi * (hour - phase_hours(team)) / 24)
        return max(0, round(QUOTA * (1 + 0.9 * wave) + noise(rng, team)))

    return demand


def _one_idle() -> Demand:
    noise = _Noise(3.0)

    def demand(rng: random.Random, team: int, hour: float) -> int:
        return 0 if team == 0 else max(0, round(QUOTA * 1.4 + noise(rng, team)))

    return demand


class _Gangs:
    """Base work of half a quota, and 32-GPU jobs that arrive at random and run 2 to 12 hours."""

    def __init__(self) -> None:
        self.running: dict[int, list[float]] = {}

    def __call__(self, rng: random.Random, team: int, hour: float) -> int:
        ends = [end for end in self.running.get(team, []) if end > hour]
        if rng.random() < 0.02:
            ends.append(hour + rng.uniform(2, 12))
        self.running[team] = ends
        return QUOTA // 2 + 32 * len(ends)


def generated(demand: Demand, days: int, seed: int) -> DemandHistory:
    rng = random.Random(seed)
    rows = ["time,tenant,class,gpus"]
    for step in range(days * 24 * 60 // STEP_MINUTES):
        hour = step * STEP_MINUTES / 60
        rows += [f"{hour * 3600:.0f},{team},batch,{demand(rng, i, hour)}" for i, team in enumerate(TEAMS)]
    return read_demand("\n".join(rows) + "\n", "generated")


def _shares(history: DemandHistory) -> tuple[dict[str, int], int]:
    """Each team's quota (its history's own where it gives one, as a public trace's; else the generated
    teams') and the committed GPUs."""
    teams = sorted({team for team, _klass in history.demand})
    given = {team: [q for q in history.quotas[(team, "batch")] if q is not None] for team in teams}
    quotas = {team: max(given[team], default=QUOTA) for team in teams}
    return quotas, round(COMMITTED_SHARE * sum(quotas.values()))


def _report(history: DemandHistory) -> QuotaReport:
    quotas, committed = _shares(history)
    capacity = {"batch": sum(quotas.values())}
    return quota_report(history, {"batch": quotas, "online": {}}, capacity, {"batch": (USD_PER_GPU_HOUR, committed)})


def _pooled_as_today(history: DemandHistory) -> Replay:
    """The cohort with today's quotas as nominal quotas and no limits: pooling alone, without the proposal."""
    quotas, committed = _shares(history)
    nominal = {team: Quota(gpus) for team, gpus in quotas.items()}
    return replay(history, {"batch": Sharing(True, nominal, sum(quotas.values()), committed, USD_PER_GPU_HOUR)})


def _line(name: str, result: Replay) -> str:
    total = result.total
    committed = "n/a" if result.committed_used is None else f"{result.committed_used:6.1%}"
    return (
        f"    {name:<16} idle while waiting {total.idle_while_waiting_gpu_hours / total.capacity_gpu_hours:6.2%}, "
        f"p95 wait {total.wait_p95_minutes_within_nominal:6.1f} min, committed used {committed}, "
        f"preempted {total.preemptions:8,.0f} GPUs, ${total.usd_per_useful_gpu_hour or 0:,.3f}/useful GPU-h"
    )


def _goals(report: QuotaReport) -> list[str]:
    cohort, today = report.cohort.total, report.per_namespace.total
    committed = report.cohort.committed_used
    checks = {
        "idle while waiting <= 1 %": cohort.idle_while_waiting_gpu_hours
        <= GOAL_IDLE_WHILE_WAITING * cohort.capacity_gpu_hours,
        "p95 wait <= 5 min": cohort.wait_p95_minutes_within_nominal <= GOAL_WAIT_P95_MINUTES,
        "committed used >= 87.4 %": committed is None or committed >= GOAL_COMMITTED_USED,
        "cost per useful GPU-h <= per-namespace": (cohort.usd_per_useful_gpu_hour or 0)
        <= (today.usd_per_useful_gpu_hour or 0) + 1e-9,
    }
    return [f"{goal}: {'met' if met else 'NOT met'}" for goal, met in checks.items()]


def _public(path: Path) -> DemandHistory:
    return read_demand(path.read_text(), str(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="2 days of each history: that it runs")
    args = parser.parse_args()
    days = 2 if args.smoke else 30
    histories: dict[str, Callable[[], DemandHistory]] = {
        "peaks together": lambda: generated(_daily(lambda team: 0.0), days, 1),
        "peaks apart": lambda: generated(_daily(lambda team: 6.0 * team), days, 2),
        "one team idle": lambda: generated(_one_idle(), days, 3),
        "bursts of gangs": lambda: generated(_Gangs(), days, 4),
    }
    for path in sorted(DATA.glob("*.csv")) if not args.smoke else []:
        histories[f"{path.name} (public)"] = functools.partial(_public, path)
    print(
        f"{len(TEAMS)} teams x {QUOTA} GPUs (generated), {days} days at {STEP_MINUTES}-minute steps, "
        f"{COMMITTED_SHARE:.0%} of capacity committed, ${USD_PER_GPU_HOUR}/GPU-h"
    )
    for name, make in histories.items():
        history = make()
        report = _report(history)
        print(f"{name}: {history.intervals:,} intervals, {len({t for t, _k in history.demand})} teams")
        print(_line("per namespace", report.per_namespace))
        print(_line("cohort, today's", _pooled_as_today(history)))
        print(_line("cohort, proposed", report.cohort))
        served = report.cohort.total.gpu_hours_served / report.per_namespace.total.gpu_hours_served - 1
        print(f"    cohort serves {served:+.1%} GPU-hours; " + "; ".join(_goals(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
