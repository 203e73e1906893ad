"""Replay 30 days of seeded synthetic GPU spot markets, in several regimes, through seven capacity policies.

No redistributable GPU spot-price history exists, so the markets are synthetic. A regime (below, or
your own in a JSON market file) sets, per instance family, spot's long-run level as a share of
on-demand, and how prices move: per instance type and zone the spot price is a mean-reverting log
price with upward jumps, and capacity droughts (a two-state chain) during which the pool has no
capacity, its price sits near on-demand and running spot instances are interrupted. The price API
fails now and then for a few hours. Every hour each policy chooses a mix for a `batch` (training)
and an `online` (serving) group; one evaluator prices every mix the same way:

- on-demand GPUs at the cheapest on-demand GPU of the group;
- spot GPUs split evenly over the zones, each zone's part on the policy's cheapest pool there
  that has capacity (price-capacity-optimized allocation). A zone with no such pool sends its part
  to the cheapest listed pool with capacity left in another zone (the group's balanced-best-effort
  distribution). A pool hosts one zone's part and no more (the market's depth), so a policy
  listing one type has nowhere to move a part, and one listing more has spare pools. A part with
  nowhere to go is priced on-demand, as if bought elsewhere; an Auto Scaling group does not make
  that substitution (its spot stays unlaunched, kubernetes/autoscaler#2075), so the table also
  counts those GPU-hours as "unlaunched". The same depth gives the placement scores (see
  `observed_book`);
- an interruption (a pool a policy used enters a drought) costs the interrupted GPUs their lost
  work (batch: half a checkpoint interval) plus a warm-up on the replacement;
- a plan change rolls the group (an ASG instance refresh): every GPU pays a warm-up;
- a zone holding fewer parts than last hour in pools that kept capacity (a part moved back after
  a drought, AZ rebalancing) pays like a reclaim for those GPUs (not counted as interrupted). A
  moved part stays on its pool while it has capacity; a zone's own part is re-placed on its
  cheapest pool each hour at no charge, for every policy alike.

Policies: all on-demand; the source's naive rule (spot whenever the cheapest type's spot < 0.6 x its
on-demand, on that one type, re-decided every hour); a static 70/30 spot/on-demand mix; spot at the
class cap on every type, always; the planner with the source's 0.6 rule as its guard; the planner
(`components.capacity.planner.decide`, expected cost, seeing prices and the trailing month's
interruption frequency as the live source would, with API outages); and a hindsight oracle (each
hour, the cheapest listing of the group's types, each part on its pool or on-demand, whichever is
cheaper; never a roll or a reclaim): no policy of the same form (the same spot share when it
uses spot) can pay less.

The naive rule, the planners, spot at cap and the oracle differ only in *when* and *where* they use
spot: all run the same Auto Scaling group form under the same caps, an on-demand base covering the
class RI baseline and one on-demand percentage that keeps the class spot cap at the group's max
size (`components.capacity.planner.distribution`), so each uses the same spot share when it uses spot.
The static mix is outside that form: it is the fixed 70/30 split its name says, and breaks a cap
where the class allows less spot.

With `--commitment-share S` (default 0.25; 0 turns it off) every regime is replayed a second time with
each group holding a Savings Plan commitment for S of its desired GPUs at `--commitment-rate` x on-demand:
billed every hour whether used or not, so an on-demand GPU inside it costs nothing more. The planner is
told of it (a holding, as `seedance decide` reads one); the baselines are not, as a policy that spends
spot without reading commitments is not; the oracle is, and never leaves it unused. The ledger counts the
commitment's GPU-hours left unused in hours a policy bought spot.

Capacity Blocks (issue 38): in regimes where a block type's on-demand capacity comes and goes (`scarce`,
`long-droughts`), `--campaigns N` campaigns per seed each need 2 x p5.48xlarge for 5 days within 14.
Each is offered the request shapes AWS takes, starting within three days, at 0.6-1.0 x on-demand. The
verdict is `components.capacity.blocks.judge` with what a person would pass from the trailing month (the
share of campaign-long windows in which on-demand, and spot, were there for the hours needed); a block
covers what it holds, the rest runs from its end as without one (spot first, on-demand behind it, waiting
when neither is there; what is left at the date costs twice on-demand). Against it: never buying, always
buying the cheapest block, and the oracle (the cheapest of all of those, in hindsight).

Run: .venv/bin/python bench/replay_capacity.py [--regime NAME ...] [--market FILE] [--seeds N] [--days D]
     [--no-placement-gate] [--commitment-share S] [--commitment-rate R] [--campaigns N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import sys
import time
from collections import deque
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.capacity.mix import GroupMix
from components.capacity.plan import CapacityPlan, GroupRequest, PlannerSettings
from components.capacity.planner import decide
from components.capacity.rules import distribution, placement_questions
from components.capacity.workload_classes import workload_classes
from components.catalog.instance_types import gpu_instance_type
from components.pricing.prices import (
    HOURS_PER_MONTH,
    InterruptionFrequency,
    PlacementScore,
    Price,
    PriceBook,
)
from components.pricing.reserved import SAVINGS_PLAN, ReservedHolding

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
START = datetime(2026, 11, 1, tzinfo=UTC)
ON_DEMAND = {  # us-east-1 $/h, as in the bundled snapshot
    "g4dn.12xlarge": 3.912,
    "g5.12xlarge": 5.672,
    "g6.12xlarge": 4.6016,
    "g6e.12xlarge": 10.49264,
    "g4dn.xlarge": 0.526,
    "g5.xlarge": 1.006,
    "g6.xlarge": 0.8048,
    "p5.48xlarge": 55.04,
}
# Costs of disruption, in GPU-hours at the group's on-demand GPU rate: the workload classes' own figures.
CLASSES = workload_classes()
WARMUP_HOURS = {name: klass.warmup_seconds / 3600 for name, klass in CLASSES.items()}
LOST_WORK_HOURS = {name: klass.lost_work_seconds / 3600 for name, klass in CLASSES.items()}
FREQUENCY_WINDOW_HOURS = HOURS_PER_MONTH  # the Spot Instance Advisor reports a trailing month


class GroupSpec(TypedDict):
    types: tuple[str, ...]
    desired: int
    max_gpus: int


GROUPS = {
    "batch": GroupSpec(types=("g6.12xlarge", "g5.12xlarge", "g4dn.12xlarge", "g6e.12xlarge"), desired=32, max_gpus=64),
    "online": GroupSpec(types=("g6.xlarge", "g5.xlarge", "g4dn.xlarge"), desired=12, max_gpus=24),
}


@dataclass(frozen=True)
class Regime:
    """How a synthetic market behaves, per hour."""

    name: str
    description: str
    mean_discount: dict  # instance family -> spot's long-run level as a share of on-demand
    reversion: float = 0.08  # share of the log deviation that decays each hour
    volatility: float = 0.035  # hourly log-price noise
    jump_rate: float = 0.01  # chance of an upward jump of the log price
    jump_mean: float = 0.35
    jump_sd: float = 0.15
    drought_start: float = 0.004  # chance a pool loses its capacity
    drought_end: float = 0.12  # chance a pool in drought regains it
    outage_rate: float = 0.02  # chance the live price read starts failing
    outage_hours: int = 1  # how long a failure lasts (the planner keeps its plan, prices age)
    # A block type's on-demand capacity (the campaign pass): chance it goes, and comes back, each hour.
    # 0 to go: always there. The block pass runs in regimes where it is not.
    on_demand_drought_start: float = 0.0
    on_demand_drought_end: float = 0.1


DEFAULT_DISCOUNT = {"g4dn": 0.52, "g5": 0.48, "g6": 0.50, "g6e": 0.58, "p5": 0.55}
REGIMES = {
    r.name: r
    for r in (
        Regime("default", "spot about half of on-demand, rare jumps and droughts", DEFAULT_DISCOUNT),
        Regime(
            "hover-0.6",
            "spot hovering around 0.6 of on-demand for weeks, calm",
            {"g4dn": 0.61, "g5": 0.60, "g6": 0.62, "g6e": 0.63},
            volatility=0.02,
            jump_rate=0.002,
        ),
        Regime(
            "long-droughts",
            "pools lose capacity often and for two days at a time",
            DEFAULT_DISCOUNT,
            drought_start=0.01,
            drought_end=0.02,
            on_demand_drought_start=0.01,
            on_demand_drought_end=0.02,
        ),
        Regime("deep-discount", "spot at 0.25-0.35 of on-demand", {"g4dn": 0.30, "g5": 0.25, "g6": 0.28, "g6e": 0.35}),
        Regime(
            "jumpy",
            "frequent large jumps and high volatility",
            DEFAULT_DISCOUNT,
            volatility=0.08,
            jump_rate=0.06,
            jump_mean=0.5,
            reversion=0.15,
        ),
        Regime(
            "scarce",
            "GPU spot near on-demand (popular types in a shortage)",
            {"g4dn": 0.97, "g5": 0.90, "g6": 0.88, "g6e": 0.90, "p5": 0.95},
            on_demand_drought_start=0.03,
            on_demand_drought_end=0.03,
        ),
        Regime(
            "api-outages",
            "the price API fails for half a day, often",
            DEFAULT_DISCOUNT,
            outage_rate=0.04,
            outage_hours=12,
        ),
    )
}


def regimes_from_file(path: Path) -> list[Regime]:
    """A market file: a JSON list of regimes, each with `name`, `description`, `mean_discount` and any
    other field of `Regime`; omitted fields take the default regime's values."""
    known = {f.name for f in fields(Regime)}
    regimes = []
    for entry in json.loads(path.read_text()):
        unknown = set(entry) - known
        if unknown:
            raise SystemExit(f"{path}: unknown regime fields {sorted(unknown)}; known: {sorted(known)}")
        regimes.append(Regime(**entry))
    return regimes


class Market:
    """Hourly spot prices and capacity per (type, zone), and each pool's reclaims."""

    def __init__(self, regime: Regime, seed: int, types: list[str]):
        self.regime = regime
        self.random = random.Random(seed)
        self.pools = [(t, z) for t in types for z in ZONES]
        self.deviation = {p: self.random.gauss(0, 0.1) for p in self.pools}
        self.drought = {p: False for p in self.pools}
        self.reclaims: dict[str, deque] = {t: deque() for t in types}  # hours a pool of the type went dry
        self.hour = 0
        for _ in range(FREQUENCY_WINDOW_HOURS):  # a month of history before the replay, as the advisor has
            self.step()

    def step(self) -> None:
        r = self.regime
        self.hour += 1
        for pool in self.pools:
            jump = self.random.gauss(r.jump_mean, r.jump_sd) if self.random.random() < r.jump_rate else 0.0
            self.deviation[pool] = (1 - r.reversion) * self.deviation[pool] + self.random.gauss(0, r.volatility) + jump
            flip = r.drought_end if self.drought[pool] else r.drought_start
            if self.random.random() < flip:
                self.drought[pool] = not self.drought[pool]
                if self.drought[pool]:
                    self.reclaims[pool[0]].append(self.hour)

    def price(self, pool: tuple[str, str]) -> float:
        on_demand = ON_DEMAND[pool[0]]
        if self.drought[pool]:
            return on_demand * 0.95
        level = on_demand * self.regime.mean_discount[pool[0].split(".")[0]] * math.exp(self.deviation[pool])
        return min(level, on_demand)  # AWS caps spot at the on-demand price

    def available(self, pool) -> bool:
        return not self.drought[pool]

    def reclaimed_per_month(self, instance_type: str) -> float:
        """The type's reclaims per pool over the trailing window, per month (what the advisor reports)."""
        events = self.reclaims[instance_type]
        while events and events[0] <= self.hour - FREQUENCY_WINDOW_HOURS:
            events.popleft()
        return len(events) / len(ZONES) / FREQUENCY_WINDOW_HOURS * HOURS_PER_MONTH


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
    unlaunched: float = 0.0  # spot GPU-hours of parts with no listed pool to launch on
    unused_commitment: float = 0.0  # committed GPU-hours left unused in hours the policy bought spot
    previous: Mix | None = None
    used_pools: dict = field(default_factory=dict)  # (type, zone) -> spot GPUs last hour

    @property
    def rate(self) -> float:
        return self.cost / self.gpu_hours


def per_gpu(instance_type: str, price: float) -> float:
    return price / gpu_instance_type(instance_type).gpus


def allocate(types, market: Market, running=()) -> tuple[list[tuple[float, tuple[str, str]]], int]:
    """Where a spot share split evenly over the zones lands: each zone's part on its cheapest listed
    pool with capacity (price-capacity-optimized); a zone with none sends its part to a listed pool
    with capacity left in another zone (balanced-best-effort): one it already runs on (`running`),
    else the cheapest. A pool hosts one part: the market's depth. Returns (per GPU price, pool) for
    each placed part, and the parts left over."""
    placed, homeless = [], 0
    for zone in ZONES:
        pools = sorted((per_gpu(t, market.price((t, zone))), (t, zone)) for t in types if market.available((t, zone)))
        if pools:
            placed.append(pools[0])
        else:
            homeless += 1
    taken = {pool for _, pool in placed}
    spare = sorted(
        ((t, z) not in running, per_gpu(t, market.price((t, z))), (t, z))
        for t in types
        for z in ZONES
        if market.available((t, z)) and (t, z) not in taken
    )
    moved = [(price, pool) for _, price, pool in spare[:homeless]]
    return placed + moved, homeless - len(moved)


@dataclass(frozen=True)
class Commitment:
    """A Savings Plan's headroom for a group: GPUs billed at `rate` per GPU-hour whether used or not."""

    gpus: int = 0
    rate: float = 0.0


def charge(
    ledger: Ledger,
    mix: Mix,
    market: Market,
    group: str,
    desired: int,
    cap: float,
    hindsight: bool = False,
    commitment: Commitment = Commitment(),
) -> None:
    """One hour of `mix`, its spot share placed by `allocate`; a part left over is priced on-demand.
    With hindsight (the oracle) the hour costs the least any listing of the group's types would
    pay, each part at its pool or on-demand, whichever is cheaper, and no reclaim or roll is paid.
    A commitment is paid in full; on-demand GPUs beyond it at the on-demand rate."""
    types = GROUPS[group]["types"]
    on_demand_rate = min(per_gpu(t, ON_DEMAND[t]) for t in types)
    if mix.spot_gpus / desired > cap + 1e-9:
        ledger.cap_violations += 1
    part = mix.spot_gpus / len(ZONES)
    on_demand_gpus = desired - mix.spot_gpus
    cost = commitment.gpus * commitment.rate + max(0.0, on_demand_gpus - commitment.gpus) * on_demand_rate
    if mix.spot_gpus > 0:
        ledger.unused_commitment += max(0.0, commitment.gpus - on_demand_gpus)
    if hindsight:
        listings = [s for size in range(1, len(types) + 1) for s in itertools.combinations(types, size)]
        cost += min(
            part * (sum(min(price, on_demand_rate) for price, _ in placed) + left * on_demand_rate)
            for placed, left in (allocate(s, market) for s in listings)
        )
        ledger.cost += cost
        ledger.gpu_hours += desired
        return
    placed, left = allocate(mix.spot_types, market, ledger.used_pools)
    ledger.unlaunched += left * part
    cost += left * part * on_demand_rate + sum(part * price for price, _ in placed)
    used = {pool: part for _, pool in placed}
    # An ended spot GPU loses its work since the last checkpoint and pays a warm-up on its replacement.
    ended_per_gpu = (LOST_WORK_HOURS[group] + WARMUP_HOURS[group]) * on_demand_rate
    for pool, gpus in ledger.used_pools.items():
        if not market.available(pool):  # reclaimed
            ledger.interruptions += gpus
            cost += gpus * ended_per_gpu
    if ledger.previous is not None and mix != ledger.previous:
        ledger.changes += 1
        cost += desired * WARMUP_HOURS[group] * on_demand_rate
    else:  # a part going back to a zone that regained capacity: AZ rebalancing ends its instances elsewhere
        cost += rebalanced(ledger.used_pools, used, market) * ended_per_gpu
    ledger.used_pools = used
    ledger.previous = mix
    ledger.cost += cost
    ledger.gpu_hours += desired


def rebalanced(before: dict, after: dict, market: Market) -> float:
    """Spot GPUs ended because their zone holds fewer parts now (reclaims are charged apart): per
    zone, last hour's GPUs in pools that still have capacity, above what the zone runs this hour."""
    ended = 0.0
    for zone in ZONES:
        survivors = sum(gpus for (t, z), gpus in before.items() if z == zone and market.available((t, z)))
        ended += max(0.0, survivors - sum(gpus for (t, z), gpus in after.items() if z == zone))
    return ended


def observed_book(market: Market, now: datetime, request: GroupRequest) -> PriceBook:
    """What the live source would read now: every pool's price, per-zone placement scores and the
    trailing month's interruption frequency of each type (refreshed daily, like the advisor's)."""
    types = request.instance_types
    book = PriceBook(region="us-east-1")
    book.on_demand = {t: Price(ON_DEMAND[t], now, "list price") for t in types}
    book.spot = {(t, z): Price(market.price((t, z)), now, "replay") for t in types for z in ZONES}
    # EC2 scores a zone 1-10 for how likely a question's capacity launches there. Here a pool with
    # capacity hosts one zone's part of the spot share and no more (as in `allocate`).
    questions = placement_questions(request)  # (whole share, a zone's part), or none for an ungated class
    if questions:
        for zone in ZONES:
            hosted = sum(market.available((t, zone)) for t in types) * questions[1].target_capacity
            for question in questions:
                score = 1 + round(9 * min(1.0, hosted / question.target_capacity))
                book.placement[(question, zone)] = PlacementScore(score, now, "replay")
    day = now.replace(hour=0)
    book.interruptions = {t: InterruptionFrequency(market.reclaimed_per_month(t), day, "replay") for t in types}
    return book


# Two policies within 0.01 % of each other tie (a cent in 23,000 GPU-hours of the hover regime).
TIE = 1e-4
POLICIES = ("all on-demand", "naive 0.6 rule", "static 70/30", "spot at cap", "planner, 0.6 guard", "planner", "oracle")
PLANNERS = {"planner, 0.6 guard": PlannerSettings(spot_price_ratio=0.6), "planner": PlannerSettings()}


def replay(
    regime: Regime,
    seed: int,
    days: int,
    group: str,
    placement_gate: bool = True,
    commitment_share: float = 0.0,
    commitment_rate: float = 0.7,
) -> tuple[dict[str, Ledger], float]:
    spec = GROUPS[group]
    klass = CLASSES[group] if placement_gate else replace(CLASSES[group], min_placement_score=None)
    desired, types = spec["desired"], spec["types"]
    # A violation: more spot at the desired size than the class cap or its RI baseline allow.
    cap = min(klass.max_spot_share, 1 - klass.ri_baseline)
    # The commitment in whole instances of the group's first type, at a share of that type's on-demand rate.
    unit = gpu_instance_type(types[0]).gpus
    instances = math.floor(desired * commitment_share / unit)
    commitment = Commitment(instances * unit, commitment_rate * per_gpu(types[0], ON_DEMAND[types[0]]))
    holdings = (
        (
            ReservedHolding(
                types[0],
                instances,
                commitment_rate * ON_DEMAND[types[0]],
                "replay",
                SAVINGS_PLAN,
                "sp-replay",
                ends_at=START + timedelta(days=365),
            ),
        )
        if instances
        else ()
    )
    request = GroupRequest(group, klass, types, ZONES, 0, desired, spec["max_gpus"], holdings)
    # The baselines' form knows no commitment; the planner's and the oracle's do.
    base, percentage = distribution(replace(request, holdings=()), use_spot=True)
    spot_when_used = GroupMix(base, percentage).spot_units(desired)  # GPUs on spot at the desired size
    held_base, held_percentage = distribution(request, use_spot=True)
    spot_when_held = GroupMix(held_base, held_percentage).spot_units(desired)
    market = Market(regime, seed, list(types))
    outages = random.Random(seed * 100_003 + 17)
    ledgers = {name: Ledger() for name in POLICIES}
    plans: dict[str, CapacityPlan | None] = {name: None for name in PLANNERS}
    book: PriceBook | None = None
    failing_until = -1
    planner_seconds = 0.0
    for hour in range(days * 24):
        now = START + timedelta(hours=hour)
        market.step()

        charge(ledgers["all on-demand"], Mix(0, ()), market, group, desired, cap, commitment=commitment)

        cheapest = min(types, key=lambda t: min(per_gpu(t, market.price((t, z))) for z in ZONES))
        eligible = min(market.price((cheapest, z)) for z in ZONES) < 0.6 * ON_DEMAND[cheapest]
        naive = Mix(spot_when_used if eligible else 0, (cheapest,) if eligible else ())
        charge(ledgers["naive 0.6 rule"], naive, market, group, desired, cap, commitment=commitment)
        charge(ledgers["static 70/30"], Mix(desired * 0.7, types), market, group, desired, cap, commitment=commitment)
        charge(ledgers["spot at cap"], Mix(spot_when_used, types), market, group, desired, cap, commitment=commitment)

        if hour > failing_until and outages.random() < regime.outage_rate:
            failing_until = hour + regime.outage_hours - 1
        if book is None or hour > failing_until:
            book = observed_book(market, now, request)  # else: the read failed, the last book goes stale
        for name, settings in PLANNERS.items():
            started = time.perf_counter()
            plan = plans[name] = decide(request, book, now, plans[name], settings).plan
            if name == "planner":
                planner_seconds += time.perf_counter() - started
            mix = Mix(plan.mix.spot_units(desired), plan.spot_types)
            charge(ledgers[name], mix, market, group, desired, cap, commitment=commitment)

        charge(
            ledgers["oracle"],
            Mix(spot_when_held, types),
            market,
            group,
            desired,
            cap,
            hindsight=True,
            commitment=commitment,
        )
    return ledgers, planner_seconds


def pooled(runs: list[dict[str, Ledger]]) -> dict[str, Ledger]:
    """Seeds pooled: costs and GPU-hours summed, changes and violations summed."""
    total = {name: Ledger() for name in POLICIES}
    for run in runs:
        for name, ledger in run.items():
            t = total[name]
            t.cost += ledger.cost
            t.gpu_hours += ledger.gpu_hours
            t.changes += ledger.changes
            t.cap_violations += ledger.cap_violations
            t.interruptions += ledger.interruptions
            t.unlaunched += ledger.unlaunched
            t.unused_commitment += ledger.unused_commitment
    return total


def verdicts(
    group: str, ledgers: dict[str, Ledger], worst_seed_ratio: float, months: float, committed: bool = False
) -> list[tuple[str, bool]]:
    """The issue's goals. "Far fewer changes": at most a fifth of the naive rule's, or at most one a
    month (per seed) where the naive rule itself barely changes, since then a fifth is below one. With
    a commitment (issue 38): within 2 % of the oracle, and no committed hour left unused while buying spot."""
    ours = ledgers["planner"]
    oracle = ledgers["oracle"].rate
    baselines = {n: ledger for n, ledger in ledgers.items() if n not in ("planner", "oracle")}
    compliant = {n: ledger.rate for n, ledger in baselines.items() if ledger.cap_violations == 0}
    cheapest = min(compliant, key=compliant.__getitem__)
    naive = ledgers["naive 0.6 rule"].changes
    within = 1.02 if committed else 1.05
    extra = (
        [
            (
                f"{group}: no committed GPU-hour unused while buying spot ({ours.unused_commitment:g})",
                ours.unused_commitment == 0,
            )
        ]
        if committed
        else []
    )
    return extra + [
        (
            f"{group}: within {within - 1:.0%} of the oracle (pooled {ours.rate / oracle:.3f}, worst seed "
            f"{worst_seed_ratio:.3f})",
            worst_seed_ratio <= within,
        ),
        (
            f"{group}: never above the cheapest cap-keeping baseline ({cheapest}, "
            f"{ours.rate / compliant[cheapest] - 1:+.3%})",
            ours.rate <= compliant[cheapest] * (1 + TIE),
        ),
        (f"{group}: zero cap violations", ours.cap_violations == 0),
        (
            f"{group}: far fewer changes than the naive rule ({ours.changes} vs {naive}; at most "
            f"{max(naive / 5, months):g})",
            ours.changes <= max(naive / 5, months),
        ),
    ]


# The Capacity Block pass (issue 38): campaigns on a type AWS sells as blocks, in regimes where its
# on-demand capacity comes and goes. Each campaign needs GPU-hours by a date; the offerings are the
# request shapes AWS takes (`components.capacity.blocks.shapes`), starting within three days, at a fee
# of 0.6-1.0 x on-demand for the block's hours.
BLOCK_TYPE = "p5.48xlarge"
CAMPAIGN_INSTANCES, CAMPAIGN_DAYS, CAMPAIGN_DEADLINE_DAYS = 2, 5, 14
MISS_MULTIPLIER = 2.0  # a GPU-hour not done by the date costs twice on-demand (bought late, elsewhere)
BLOCK_POLICIES = ("never buy", "always buy", "verdict", "oracle")


class CapacityHistory:
    """Whether capacity was there, hour by hour, over the trailing month, and what a person would pass as
    `--on-demand-chance` or `--spot-chance` from it: the share of its windows as long as the campaign's in
    which capacity was there for the hours the campaign needs."""

    def __init__(self) -> None:
        self.hours: deque[bool] = deque(maxlen=FREQUENCY_WINDOW_HOURS)

    def campaign_chance(self, hours_needed: int, window: int) -> float:
        history = list(self.hours)
        starts = range(0, len(history) - window + 1) if len(history) >= window else range(1)
        return sum(sum(history[s : s + window]) >= hours_needed for s in starts) / len(starts)


class OnDemandCapacity:
    """Whether the block type's on-demand capacity is there, hour by hour (a two-state chain)."""

    def __init__(self, regime: Regime, rng: random.Random):
        self.regime, self.random, self.there = regime, rng, True
        self.history = CapacityHistory()
        for _ in range(FREQUENCY_WINDOW_HOURS):
            self.step()

    def step(self) -> None:
        flip = self.regime.on_demand_drought_end if not self.there else self.regime.on_demand_drought_start
        if self.random.random() < flip:
            self.there = not self.there
        self.history.hours.append(self.there)


def realize_without_block(trace: list[dict], start: int, work: float, instances: int, gpu_rate: float) -> float:
    """Run `instances` each hour from `start` to the date: on the cheapest spot pool with capacity, else
    on-demand when it is there, else wait; a reclaimed pool loses its work since the last checkpoint and
    pays a warm-up. What is left at the date is missed at MISS_MULTIPLIER x on-demand."""
    gpus = instances * gpu_instance_type(BLOCK_TYPE).gpus
    cost, pool = 0.0, None
    for state in trace[start:]:
        if work <= 0:
            break
        if pool is not None and pool not in state["spot"]:  # reclaimed under us
            cost += gpus * WARMUP_HOURS["batch"] * gpu_rate
            work += gpus * LOST_WORK_HOURS["batch"]
        pool = min(state["spot"], key=state["spot"].get) if state["spot"] else None
        if pool is not None:
            cost += instances * state["spot"][pool]
        elif state["on_demand"]:
            cost += instances * ON_DEMAND[BLOCK_TYPE]
        else:
            continue
        work -= gpus
    return cost + max(0.0, work) * gpu_rate * MISS_MULTIPLIER


def realize_block(trace: list[dict], offering, work: float, instances: int, gpu_rate: float) -> float:
    """The fee; what the block holds runs on it; the rest from the block's end as without one."""
    held = offering.instances * gpu_instance_type(BLOCK_TYPE).gpus * offering.hours
    end = int((offering.end - START).total_seconds() // 3600)
    left = work - held
    return offering.upfront_usd + (realize_without_block(trace, end, left, instances, gpu_rate) if left > 0 else 0.0)


def block_campaigns(regime: Regime, seed: int, campaigns: int) -> dict[str, float]:
    """Each policy's total over `campaigns` campaigns, each decided on what a person sees that day."""
    from components.capacity.blocks import Campaign, Offering, judge, shapes

    gpus = gpu_instance_type(BLOCK_TYPE).gpus
    gpu_rate = ON_DEMAND[BLOCK_TYPE] / gpus
    need = CAMPAIGN_INSTANCES * gpus * CAMPAIGN_DAYS * 24
    horizon = CAMPAIGN_DEADLINE_DAYS * 24
    market = Market(regime, seed, [BLOCK_TYPE])
    rng = random.Random(seed * 7_919 + 3)
    capacity = OnDemandCapacity(regime, rng)
    spot = CapacityHistory()

    def step() -> None:
        market.step()
        capacity.step()
        spot.hours.append(any(market.available((BLOCK_TYPE, z)) for z in ZONES))

    for _hour in range(FREQUENCY_WINDOW_HOURS):  # a month of spot history, as a person would look back on
        step()
    totals = {name: 0.0 for name in BLOCK_POLICIES}
    for _ in range(campaigns):
        spot_now = [market.price((BLOCK_TYPE, z)) for z in ZONES if market.available((BLOCK_TYPE, z))]
        campaign = Campaign(
            need,
            START + timedelta(hours=horizon),
            gpus,
            ON_DEMAND[BLOCK_TYPE],
            capacity.history.campaign_chance(CAMPAIGN_DAYS * 24, horizon),
            need * gpu_rate * MISS_MULTIPLIER,
            min(spot_now) if spot_now else None,
            market.reclaimed_per_month(BLOCK_TYPE),
            LOST_WORK_HOURS["batch"] + WARMUP_HOURS["batch"],
            spot.campaign_chance(CAMPAIGN_DAYS * 24, horizon),
        )
        offerings = []
        for index, (count, hours) in enumerate(shapes(need, gpus, horizon - 72)):
            start = START + timedelta(hours=rng.randrange(0, 72))
            offerings.append(
                Offering(
                    f"cb-{index}",
                    BLOCK_TYPE,
                    rng.choice(ZONES),
                    count,
                    start,
                    start + timedelta(hours=hours),
                    hours,
                    round(count * hours * ON_DEMAND[BLOCK_TYPE] * rng.uniform(0.6, 1.0), 2),
                )
            )
        verdicts = judge(offerings, campaign)
        trace = []
        for _hour in range(horizon):
            step()
            trace.append(
                {
                    "spot": {z: market.price((BLOCK_TYPE, z)) for z in ZONES if market.available((BLOCK_TYPE, z))},
                    "on_demand": capacity.there,
                }
            )
        without = realize_without_block(trace, 0, need, CAMPAIGN_INSTANCES, gpu_rate)
        realized = {
            v.offering.offering_id: realize_block(trace, v.offering, need, CAMPAIGN_INSTANCES, gpu_rate)
            for v in verdicts
        }
        bought = next((v for v in verdicts if v.buy), None)
        totals["never buy"] += without
        totals["always buy"] += realized[verdicts[0].offering.offering_id] if verdicts else without
        totals["verdict"] += realized[bought.offering.offering_id] if bought else without
        totals["oracle"] += min([without, *realized.values()])
    return totals


def block_verdicts(totals: dict[str, float]) -> list[tuple[str, bool]]:
    """Within 2 % of the oracle (the issue's bar for the planner). A fixed choice (always, never) is not a
    goal per regime: picking the regime's better one takes hindsight; the report shows both."""
    ours = totals["verdict"]
    fixed = ", ".join(f"{name} {totals[name] / totals['oracle']:.3f}" for name in ("never buy", "always buy"))
    return [
        (
            f"blocks: within 2% of the oracle ({ours / totals['oracle']:.3f}; fixed choices: {fixed})",
            ours <= totals["oracle"] * 1.02,
        )
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--regime", action="append", choices=sorted(REGIMES), help="a built-in regime (repeatable; default: all)"
    )
    parser.add_argument("--market", type=Path, help="a JSON file of regimes (see regimes_from_file)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per regime")
    parser.add_argument("--first-seed", type=int, default=20261202)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument(
        "--no-placement-gate",
        action="store_true",
        help="plan without the classes' placement-score gate, to measure what it costs",
    )
    parser.add_argument(
        "--commitment-share",
        type=float,
        default=0.25,
        help="replay each regime again with a Savings Plan for this share of desired GPUs (0: off)",
    )
    parser.add_argument("--commitment-rate", type=float, default=0.7, help="its rate, as a share of on-demand")
    parser.add_argument(
        "--campaigns",
        type=int,
        default=20,
        help="Capacity Block campaigns per seed, in regimes where on-demand comes and goes (0: off)",
    )
    args = parser.parse_args()
    regimes = [REGIMES[name] for name in args.regime or ([] if args.market else REGIMES)]
    regimes += regimes_from_file(args.market) if args.market else []
    seeds = [args.first_seed + i for i in range(args.seeds)]
    print(f"Synthetic spot markets, seeds {seeds[0]}..{seeds[-1]}, {args.days} days hourly, zones {', '.join(ZONES)}")
    print("Rates are pooled over the seeds; 'x oracle' is the pooled ratio; changes and violations are summed.")
    results = []
    decision_seconds, decisions = 0.0, 0
    passes = [(regime, 0.0) for regime in regimes]
    if args.commitment_share > 0:
        passes += [(regime, args.commitment_share) for regime in regimes]
    for regime, share in passes:
        label = f"{regime.name}+commitment" if share else regime.name
        held = f" (each group holds a Savings Plan for {share:.0%} of its GPUs at {args.commitment_rate:g} x on-demand)"
        print(f"\n== {label}: {regime.description}{held if share else ''}")
        for group in GROUPS:
            runs, ratios = [], []
            for seed in seeds:
                ledgers, seconds = replay(
                    regime, seed, args.days, group, not args.no_placement_gate, share, args.commitment_rate
                )
                runs.append(ledgers)
                ratios.append(ledgers["planner"].rate / ledgers["oracle"].rate)
                decision_seconds += seconds
                decisions += args.days * 24
            ledgers = pooled(runs)
            oracle = ledgers["oracle"].rate
            print(
                f"  {group} ({GROUPS[group]['desired']} GPUs): "
                f"{'policy':18} {'$/GPU-h':>8} {'x oracle':>9} {'changes':>8} {'cap viol.':>9} {'interrupted':>11} "
                f"{'unlaunched':>10} {'unused commit.':>14}"
            )
            for name, ledger in ledgers.items():
                print(
                    f"  {'':{len(group) + 11}}{name:18} {ledger.rate:8.4f} {ledger.rate / oracle:9.3f} "
                    f"{ledger.changes:8d} {ledger.cap_violations:9d} {ledger.interruptions:11.1f} "
                    f"{ledger.unlaunched:10.1f} {ledger.unused_commitment:14.1f}"
                )
            months = len(seeds) * args.days / 30
            results += [(label, text, ok) for text, ok in verdicts(group, ledgers, max(ratios), months, share > 0)]
    for regime in (r for r in regimes if r.on_demand_drought_start > 0 and args.campaigns > 0):
        totals = {name: 0.0 for name in BLOCK_POLICIES}
        for seed in seeds:
            for name, usd in block_campaigns(regime, seed, args.campaigns).items():
                totals[name] += usd
        count = args.campaigns * len(seeds)
        print(
            f"\n== {regime.name}+blocks: {count} campaigns of {CAMPAIGN_INSTANCES} x {BLOCK_TYPE} for "
            f"{CAMPAIGN_DAYS} days within {CAMPAIGN_DEADLINE_DAYS}, on-demand there "
            f"{regime.on_demand_drought_end / (regime.on_demand_drought_start + regime.on_demand_drought_end):.0%} "
            "of hours"
        )
        for name, usd in totals.items():
            print(f"  {name:12} ${usd / count:12,.2f} per campaign {usd / totals['oracle']:7.3f} x oracle")
        results += [(f"{regime.name}+blocks", text, ok) for text, ok in block_verdicts(totals)]
    print(f"\nplanner: {decision_seconds / decisions * 1e3:.3f} ms per hourly decision ({decisions} decisions)\n")
    for scenario, text, ok in results:
        print(f"{'ok  ' if ok else 'MISS'} {scenario}: {text}")
    missed = sum(not ok for *_, ok in results)
    print(f"\n{len(results) - missed} of {len(results)} goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
