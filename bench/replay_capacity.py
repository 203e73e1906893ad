"""Replay 30 days of a seeded synthetic GPU spot market through five capacity policies.

No redistributable GPU spot-price history exists, so the market is synthetic (parameters below).
Per instance type and zone the spot price is a mean-reverting log price around a discount to
on-demand, with upward jumps, and capacity droughts (a two-state chain) during which the pool has
no capacity, its price sits near on-demand and running spot instances are interrupted. Every hour
each policy chooses a mix for a `batch` (training) and an `online` (serving) group; one evaluator
prices every mix the same way:

- on-demand GPUs at the cheapest on-demand GPU of the group;
- spot GPUs split evenly over the zones; in each zone on the policy's cheapest pool that has
  capacity (price-capacity-optimized allocation); with no such pool the zone's share runs
  on-demand, so a policy with fewer types falls back to on-demand more often;
- an interruption (a pool a policy used enters a drought) costs the interrupted GPUs their lost
  work (batch: half a checkpoint interval) plus a warm-up on the replacement;
- a plan change rolls the group (an ASG instance refresh): every GPU pays a warm-up.

Policies: all on-demand; the source's naive rule (spot whenever the cheapest type's spot < 0.6 x its
on-demand, on that one type, re-decided every hour); a static 70/30 spot/on-demand mix; our planner
(`components.capacity_plan.decide` with its stability rule, seeing prices as the live source would,
with API outages); and a hindsight oracle (spot whenever the cheapest pool is below on-demand, on
the cheapest pools, with no refresh or interruption costs).

The naive rule, the planner and the oracle differ only in *when* and *where* they use spot: all
three run the same Auto Scaling group form under the same caps, an on-demand base covering the
class RI baseline and one on-demand percentage that keeps the class spot cap at the group's max
size (`components.capacity_plan.distribution`), so each uses the same spot share when it uses spot.
The static mix is outside that form: it is the fixed 70/30 split its name says, and breaks a cap
where the class allows less spot.

Run: .venv/bin/python bench/replay_capacity.py [--seed N] [--days D]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.capacity_plan import CapacityPlan, GroupRequest, decide, distribution  # noqa: E402
from components.gpu_instance_types import gpu_instance_type  # noqa: E402
from components.pricing import PlacementScore, Price, PriceBook  # noqa: E402
from components.workload_classes import workload_classes  # noqa: E402

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
START = datetime(2026, 11, 1, tzinfo=timezone.utc)
ON_DEMAND = {  # us-east-1 $/h, as in the bundled snapshot
    "g4dn.12xlarge": 3.912, "g5.12xlarge": 5.672, "g6.12xlarge": 4.6016, "g6e.12xlarge": 10.49264,
    "g4dn.xlarge": 0.526, "g5.xlarge": 1.006, "g6.xlarge": 0.8048,
}
# Market parameters (per hour). Mean discount: spot's long-run level as a share of on-demand.
MEAN_DISCOUNT = {"g4dn": 0.52, "g5": 0.48, "g6": 0.50, "g6e": 0.58}
REVERSION = 0.08  # share of the log deviation that decays each hour
VOLATILITY = 0.035  # hourly log-price noise
JUMP_RATE, JUMP_MEAN, JUMP_SD = 0.01, 0.35, 0.15  # upward jumps of the log price
DROUGHT_START, DROUGHT_END = 0.004, 0.12  # chance a pool loses / regains capacity each hour
OUTAGE_RATE = 0.02  # chance the live price read fails in an hour (the planner keeps its plan)
# Costs of disruption, in GPU-hours at the group's on-demand GPU rate.
WARMUP_HOURS = 0.1  # node start, image pull, model load
LOST_WORK_HOURS = {"batch": 0.25, "online": 0.0}  # batch checkpoints every 30 min: half is lost

GROUPS = {
    "batch": dict(types=("g6.12xlarge", "g5.12xlarge", "g4dn.12xlarge", "g6e.12xlarge"), desired=32, max_gpus=64),
    "online": dict(types=("g6.xlarge", "g5.xlarge", "g4dn.xlarge"), desired=12, max_gpus=24),
}


class Market:
    """Hourly spot prices and capacity per (type, zone)."""

    def __init__(self, seed: int, types: list[str]):
        self.random = random.Random(seed)
        self.pools = [(t, z) for t in types for z in ZONES]
        self.deviation = {p: self.random.gauss(0, 0.1) for p in self.pools}
        self.drought = {p: False for p in self.pools}

    def step(self) -> None:
        for pool in self.pools:
            jump = self.random.gauss(JUMP_MEAN, JUMP_SD) if self.random.random() < JUMP_RATE else 0.0
            self.deviation[pool] = (1 - REVERSION) * self.deviation[pool] + self.random.gauss(0, VOLATILITY) + jump
            flip = DROUGHT_END if self.drought[pool] else DROUGHT_START
            if self.random.random() < flip:
                self.drought[pool] = not self.drought[pool]

    def price(self, pool: tuple[str, str]) -> float:
        on_demand = ON_DEMAND[pool[0]]
        if self.drought[pool]:
            return on_demand * 0.95
        level = on_demand * MEAN_DISCOUNT[pool[0].split(".")[0]] * math.exp(self.deviation[pool])
        return min(level, on_demand)  # AWS caps spot at the on-demand price

    def available(self, pool) -> bool:
        return not self.drought[pool]


@dataclass(frozen=True)
class Mix:
    """What a policy runs at the group's desired size."""

    spot_gpus: float
    spot_types: tuple[str, ...]


@dataclass
class Ledger:
    cost: float = 0.0
    gpu_hours: float = 0.0
    changes: int = 0
    cap_violations: int = 0
    interruptions: float = 0.0
    previous: Mix | None = None
    used_pools: dict = field(default_factory=dict)  # (type, zone) -> spot GPUs last hour


def per_gpu(instance_type: str, price: float) -> float:
    return price / gpu_instance_type(instance_type).gpus


def charge(ledger: Ledger, mix: Mix, market: Market, group: str, desired: int, cap: float, refresh: bool) -> None:
    types = GROUPS[group]["types"]
    on_demand_rate = min(per_gpu(t, ON_DEMAND[t]) for t in types)
    if mix.spot_gpus / desired > cap + 1e-9:
        ledger.cap_violations += 1
    cost = (desired - mix.spot_gpus) * on_demand_rate
    used = {}
    for zone in ZONES:
        share = mix.spot_gpus / len(ZONES)
        pools = sorted((per_gpu(t, market.price((t, zone))), t) for t in mix.spot_types if market.available((t, zone)))
        if not pools:
            cost += share * on_demand_rate
            continue
        price, instance_type = pools[0]
        cost += share * price
        used[(instance_type, zone)] = share
    for pool, gpus in ledger.used_pools.items():
        if not market.available(pool):  # reclaimed: the work since the last checkpoint and a warm-up are lost
            ledger.interruptions += gpus
            cost += gpus * (LOST_WORK_HOURS[group] + WARMUP_HOURS) * on_demand_rate
    if refresh and ledger.previous is not None and mix != ledger.previous:
        ledger.changes += 1
        cost += desired * WARMUP_HOURS * on_demand_rate
    ledger.used_pools = used
    ledger.previous = mix
    ledger.cost += cost
    ledger.gpu_hours += desired


def observed_book(market: Market, now: datetime, types: tuple[str, ...]) -> PriceBook:
    """What the live source would read now: every pool's current price and per-zone placement scores."""
    book = PriceBook(region="us-east-1")
    book.on_demand = {t: Price(ON_DEMAND[t], now, "list price") for t in types}
    book.spot = {(t, z): Price(market.price((t, z)), now, "replay") for t in types for z in ZONES}
    for zone in ZONES:
        free = sum(market.available((t, zone)) for t in types)
        score = 9 if free == len(types) else 6 if free >= 2 else 2
        book.placement[(tuple(sorted(types)), zone)] = PlacementScore(score, now, "replay")
    return book


def replay(seed: int, days: int, group: str) -> tuple[dict[str, Ledger], float]:
    spec = GROUPS[group]
    klass = workload_classes()[group]
    desired, types = spec["desired"], spec["types"]
    # A violation: more spot at the desired size than the class cap or its RI baseline allow.
    cap = min(klass.max_spot_share, 1 - klass.ri_baseline)
    request = GroupRequest(group, klass, types, ZONES, 0, desired, spec["max_gpus"])
    base, percentage = distribution(request, use_spot=True)
    spot_when_used = (desired - base) * (100 - percentage) / 100  # GPUs on spot at the desired size
    market = Market(seed, list(types))
    ledgers = {name: Ledger() for name in ("all on-demand", "naive 0.6 rule", "static 70/30", "planner", "oracle")}
    plan: CapacityPlan | None = None
    book: PriceBook | None = None
    planner_seconds = 0.0
    for hour in range(days * 24):
        now = START + timedelta(hours=hour)
        market.step()
        on_demand_rate = min(per_gpu(t, ON_DEMAND[t]) for t in types)

        charge(ledgers["all on-demand"], Mix(0, ()), market, group, desired, cap, refresh=True)

        cheapest = min(types, key=lambda t: min(per_gpu(t, market.price((t, z))) for z in ZONES))
        eligible = min(market.price((cheapest, z)) for z in ZONES) < 0.6 * ON_DEMAND[cheapest]
        naive = Mix(spot_when_used if eligible else 0, (cheapest,) if eligible else ())
        charge(ledgers["naive 0.6 rule"], naive, market, group, desired, cap, refresh=True)

        charge(ledgers["static 70/30"], Mix(desired * 0.7, types), market, group, desired, cap, refresh=True)

        if book is None or random.Random(seed * 100_003 + hour).random() >= OUTAGE_RATE:
            book = observed_book(market, now, types)  # else: the read failed, the last book goes stale
        started = time.perf_counter()
        plan = decide(request, book, now, plan).plan
        planner_seconds += time.perf_counter() - started
        ours = Mix(desired * plan.spot_share_at(desired), plan.spot_types)
        charge(ledgers["planner"], ours, market, group, desired, cap, refresh=True)

        spot_now = [per_gpu(t, market.price((t, z))) for t in types for z in ZONES if market.available((t, z))]
        oracle = Mix(spot_when_used if spot_now and min(spot_now) < on_demand_rate else 0, types)
        oracle_ledger = ledgers["oracle"]
        oracle_ledger.used_pools = {}  # hindsight: never caught by a reclaim
        charge(oracle_ledger, oracle, market, group, desired, cap, refresh=False)
    return ledgers, planner_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--days", type=int, default=30)
    args = parser.parse_args()
    print(f"Synthetic spot market, seed {args.seed}, {args.days} days hourly, zones {', '.join(ZONES)}")
    verdicts = []
    for group in GROUPS:
        ledgers, planner_seconds = replay(args.seed, args.days, group)
        oracle = ledgers["oracle"].cost / ledgers["oracle"].gpu_hours
        print(f"\n{group} ({GROUPS[group]['desired']} GPUs, types {', '.join(GROUPS[group]['types'])}):")
        print(f"  {'policy':16} {'$/GPU-h':>8} {'x oracle':>9} {'changes':>8} {'cap viol.':>9} {'interrupted GPU':>15}")
        for name, ledger in ledgers.items():
            rate = ledger.cost / ledger.gpu_hours
            print(f"  {name:16} {rate:8.4f} {rate / oracle:9.3f} {ledger.changes:8d} {ledger.cap_violations:9d} "
                  f"{ledger.interruptions:15.1f}")
        ours = ledgers["planner"]
        ours_rate = ours.cost / ours.gpu_hours
        others = {n: l.cost / l.gpu_hours for n, l in ledgers.items() if n not in ("planner", "oracle")}
        compliant = {n: r for n, r in others.items() if ledgers[n].cap_violations == 0}
        hours = args.days * 24
        print(f"  planner: {planner_seconds / hours * 1e3:.3f} ms per hourly decision")
        verdicts += [
            (f"{group}: planner within 10% of the oracle", ours_rate <= 1.10 * oracle),
            (f"{group}: planner has zero cap violations", ours.cap_violations == 0),
            (f"{group}: planner cheaper than every policy that keeps the caps ({', '.join(compliant)})",
             all(ours_rate < r for r in compliant.values())),
            (f"{group}: planner changes far less than the naive rule ({ours.changes} vs "
             f"{ledgers['naive 0.6 rule'].changes})", ours.changes * 5 <= max(ledgers["naive 0.6 rule"].changes, 1)),
        ]
        cheaper_violators = [n for n, r in others.items() if n not in compliant and r < ours_rate]
        if cheaper_violators:
            print(f"  note: cheaper only by breaking the class cap: {', '.join(cheaper_violators)}")
    print()
    for text, ok in verdicts:
        print(f"{'ok  ' if ok else 'MISS'} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
