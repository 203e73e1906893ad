"""The capacity decision for a whole stack: the plan each GPU node group deploys, and why.

Used by the program (which plans to deploy) and by `seedance decide` (which writes the lock).
Sources by `capacity.source`:
- lock: the reviewed lock's plans, checked against the config; with no lock the real program
  stops with the command to run, while an offline plan decides from the snapshot and says so;
- live (dev only): decide now from the AWS APIs, the lock's plans as the current ones, falling
  back to the lock's and the snapshot's prices when the APIs fail;
- snapshot: decide from the bundled prices, the lock's plans as the current ones.
An offline run (the program under Pulumi's mock runtime: `seedance plan`, tests) never calls AWS.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar

from components.capacity.holdings import allocate_holdings
from components.capacity.lock import CapacityLock, LockError, LockPriceSource, lock_path, read_lock
from components.capacity.plan import (
    ON_DEMAND_ALLOCATION_STRATEGY,
    SPOT_ALLOCATION_STRATEGY,
    CapacityPlan,
    Decision,
    GroupRequest,
    constraint_changes,
    spot_only,
)
from components.capacity.planner import decide_all
from components.capacity.preview import reference_preview
from components.capacity.rules import baseline_gpus, placement_questions, reserved_gpus
from components.catalog.instance_types import gpu_instance_type
from components.catalog.regions import regions
from components.pricing.commitments import SavingsPlanCommitment, commitment_holdings
from components.pricing.live import LivePriceSource
from components.pricing.prices import PlacementRequest, PriceBook, PriceSource, PriceSourceError, SnapshotPriceSource
from components.pricing.reserved import CAPACITY_RESERVATION, RESERVED_INSTANCE, SAVINGS_PLAN, ReservedHolding
from components.stack.config import PROJECT, ConfigError, StackConfig

T = TypeVar("T")


def table_zones(config: StackConfig) -> list[str]:
    """The zones an offline run uses: the first `az_count` of the region table."""
    region = regions()[config.region]
    return config.usable_zones(dict(zip(region.zone_names, region.zone_ids)))


def decision_zones(config: StackConfig, live: LivePriceSource | None, lock: CapacityLock | None) -> list[str]:
    """The zones to decide for: the account's, read live; in an outage the zones the lock was decided
    for (else the region table), so that prices, not zones, decide whether plans change: an outage
    keeps every plan, as the runbook says."""
    if live is not None:
        try:
            return config.usable_zones(live.available_zones(config.region))
        except PriceSourceError:
            pass
    locked = [entry["plan"]["constraints"]["zones"] for entry in (lock.groups.values() if lock else ())]
    return list(locked[0]) if locked else table_zones(config)


def group_requests(
    config: StackConfig,
    zones: Sequence[str],
    holdings: Sequence[ReservedHolding],
    commitments: Sequence[SavingsPlanCommitment] = (),
) -> list[GroupRequest]:
    """Each group's request, with the holdings it uses: Reserved Instances and reservations split by
    type (and zone), then Savings Plan headroom for the units the group runs beyond them."""
    allocated = allocate_holdings(
        holdings, [(g.name, tuple(g.instance_types), g.max_gpus, g.launch_zones(zones)) for g in config.gpu_node_groups]
    )
    held_gpus = {
        name: sum(h.count * gpu_instance_type(h.instance_type).gpus for h in held) for name, held in allocated.items()
    }
    committed = commitment_holdings(
        commitments,
        config.region,
        [(g.name, tuple(g.instance_types), max(0, g.desired_gpus - held_gpus[g.name])) for g in config.gpu_node_groups],
    )
    return [
        GroupRequest(
            name=g.name,
            workload_class=g.workload(),
            instance_types=tuple(g.instance_types),
            zones=g.launch_zones(zones),
            min_gpus=g.min_gpus,
            desired_gpus=g.desired_gpus,
            max_gpus=g.max_gpus,
            holdings=committed[g.name] + allocated[g.name],
        )
        for g in config.gpu_node_groups
    ]


def placement_requests(requests: Sequence[GroupRequest]) -> list[PlacementRequest]:
    """The score questions of every group whose class gates spot on them, each asked once."""
    return list(dict.fromkeys(question for request in requests for question in placement_questions(request)))


@dataclass
class StackDecision:
    decisions: list[Decision]
    book: PriceBook
    source: str  # the source whose prices were used
    notes: list[str] = field(default_factory=list)

    def plans(self) -> dict[str, CapacityPlan]:
        return {d.plan.group: d.plan for d in self.decisions}


def read_prices(
    sources: Sequence[PriceSource],
    region: str,
    requests: Sequence[GroupRequest],
    zones: Sequence[str],
    ask_placement: bool = True,
) -> tuple[PriceBook, str, list[str]]:
    """Prices from the first source that answers; past it, the fallbacks' newest prices merged."""
    types = sorted({t for r in requests for t in r.instance_types})
    notes: list[str] = []
    primary, *fallbacks = sources
    try:
        book = primary.prices(region, types, zones, placement_requests(requests) if ask_placement else ())
        return book, primary.name, notes + book.notes
    except PriceSourceError as error:
        notes.append(
            f"{primary.name} prices unavailable ({error})"
            + (f"; using {' + '.join(s.name for s in fallbacks)}" if fallbacks else "")
        )
    merged: PriceBook | None = None
    for source in fallbacks:
        try:
            book = source.prices(region, types, zones)
        except PriceSourceError as error:
            notes.append(f"{source.name} prices unavailable ({error})")
            continue
        merged = book if merged is None else merged.newest_of(book)
    if merged is None:
        raise PriceSourceError("; ".join(notes))
    return merged, "+".join(s.name for s in fallbacks), notes


def decide_stack(
    config: StackConfig,
    zones: Sequence[str],
    sources: Sequence[PriceSource],
    holdings: Sequence[ReservedHolding],
    current: dict[str, CapacityPlan],
    now: datetime,
    commitments: Sequence[SavingsPlanCommitment] = (),
) -> StackDecision:
    requests = group_requests(config, zones, holdings, commitments)
    if not requests:
        return StackDecision([], PriceBook(region=config.region), "none")
    book, source, notes = read_prices(sources, config.region, requests, zones, config.capacity.placement_scores)
    try:
        decisions = decide_all(requests, book, now, current, config.capacity.settings())
    except ValueError as error:
        raise ConfigError(f"invalid config {PROJECT}:gpu_node_groups: {error}") from None
    return StackDecision(decisions, book, source, notes)


def lock_violations(lock: CapacityLock, config: StackConfig, stack: str, requests: Sequence[GroupRequest]) -> list[str]:
    """What a (hand-edited) lock asks beyond what the stack's config and its classes allow, key by key:
    a lock is reviewed input, never trusted to widen a plan."""
    problems = []
    if lock.stack != stack:
        problems.append(f"stack = {lock.stack!r}: decided for another stack than {stack!r}")
    if lock.region != config.region:
        problems.append(f"region = {lock.region!r}: the stack deploys to {config.region!r}")
    known_zones = set(regions()[config.region].zone_names) if config.region in regions() else set()
    for name, decided in lock.plans().items():
        strange = [z for z in decided.constraints["zones"] if z not in known_zones]
        if strange:
            problems.append(
                f"groups.{name}.plan.constraints.zones = {decided.constraints['zones']}: "
                f"{', '.join(strange)} not a zone of {config.region}"
            )
        elsewhere = [h.zone for h in decided.mix.holdings if h.zone and h.zone not in decided.constraints["zones"]]
        if elsewhere:
            problems.append(
                f"groups.{name}.plan.constraints.holdings: a reservation in {', '.join(elsewhere)}, "
                "where the group does not run"
            )
    plans = lock.plans()
    unknown = sorted(set(plans) - {r.name for r in requests})
    if unknown:
        problems.append(
            f"groups.{unknown[0]}: the stack has no such GPU group ({', '.join(r.name for r in requests) or 'none'})"
        )
    for request in requests:
        plan = plans.get(request.name)
        if plan is None or constraint_changes(plan.constraints, request.constraints()):
            continue  # decided for another config: `lock_mismatches` names it, a decision replaces it
        key = f"groups.{request.name}.plan"
        outside = [t for t in plan.instance_types if t not in request.instance_types]
        if plan.group != request.name:
            problems.append(f"{key}.group = {plan.group!r}: the entry is the {request.name!r} group's")
        if outside or len(set(plan.instance_types)) != len(plan.instance_types):
            problems.append(
                f"{key}.instance_types = {list(plan.instance_types)}: allowed: each of the group's types "
                f"({', '.join(request.instance_types)}) at most once"
            )
        stray = [t for t in plan.spot_types if t not in plan.instance_types]
        if stray:
            problems.append(f"{key}.spot_types = {list(plan.spot_types)}: allowed: types the plan lists")
        floor = min(request.max_gpus, max(reserved_gpus(request), baseline_gpus(request)))
        if not floor <= plan.on_demand_base_gpus <= request.max_gpus:
            problems.append(
                f"{key}.on_demand_base_gpus = {plan.on_demand_base_gpus}: allowed: {floor} (the RIs and "
                f"the class baseline) to {request.max_gpus} (the group's max_gpus)"
            )
        cap = request.workload_class.max_spot_share
        share = plan.mix.spot_share_at(request.max_gpus)
        if share > cap + 1e-9:
            problems.append(
                f"{key}.on_demand_percentage_above_base = {plan.on_demand_percentage_above_base}: spot "
                f"share {share:.0%} at max {request.max_gpus} GPUs; the {request.workload_class.name} "
                f"class allows {cap:.0%}"
            )
        if (plan.spot_allocation_strategy, plan.on_demand_allocation_strategy) != (
            SPOT_ALLOCATION_STRATEGY,
            ON_DEMAND_ALLOCATION_STRATEGY,
        ):
            problems.append(
                f"{key}.spot_allocation_strategy = {plan.spot_allocation_strategy!r}, "
                f"on_demand_allocation_strategy = {plan.on_demand_allocation_strategy!r}: allowed: "
                f"{SPOT_ALLOCATION_STRATEGY!r} and {ON_DEMAND_ALLOCATION_STRATEGY!r}"
            )
    return problems


def checked_lock(
    path: Path, config: StackConfig, stack: str, zones: Sequence[str], now: datetime
) -> CapacityLock | None:
    """The stack's lock, refused with its first violation named (None when there is none)."""
    lock = optional_lock(path)
    if lock is None:
        return None
    problems = lock_violations(
        lock, config, stack, group_requests(config, zones, *stack_holdings(config, lock, None, now))
    )
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(
            f"capacity lock {path.name}: {problems[0]}{more}; locks are written by `seedance decide`: "
            "restore it from git, or decide again"
        )
    return lock


def lock_mismatches(lock: CapacityLock, requests: Sequence[GroupRequest]) -> list[str]:
    """Groups whose config differs from what the lock was decided for, with what changed."""
    plans = lock.plans()
    problems = []
    for request in requests:
        plan = plans.get(request.name)
        if plan is None:
            problems.append(f"{request.name} (not in the lock)")
            continue
        changed = constraint_changes(plan.constraints, request.constraints())
        if changed:
            problems.append(f"{request.name} ({', '.join(changed)} changed)")
    return problems


@dataclass
class ProgramCapacity:
    plans: dict[str, CapacityPlan]
    origin: str  # one line: where the plans came from
    decisions: list[Decision] = field(default_factory=list)  # empty when deployed from the lock


def stack_holdings(
    config: StackConfig,
    lock: CapacityLock | None,
    live: LivePriceSource | None,
    now: datetime,
    notes: list[str] | None = None,
) -> tuple[list[ReservedHolding], list[SavingsPlanCommitment]]:
    """What the account holds for the groups: Reserved Instances and capacity reservations, and Savings
    Plans with their headroom; from config, or read live. A live read that fails falls back to what the
    lock was decided with (never to holding less, which would leave more room for spot). What has ended
    by `now` counts no more."""
    capacity = config.capacity
    recorded = _lock_holdings(lock) if lock else []
    if capacity.reserved_instances == "config":
        held = list(capacity.configured_holdings())
    else:
        held = _read_or(
            lambda source: source.reserved_holdings(config.region),
            live,
            [h for h in recorded if h.kind == RESERVED_INSTANCE],
            notes,
            "Reserved Instances",
        )
    commitments: list[SavingsPlanCommitment] = []
    if capacity.commitments == "config":
        book = SnapshotPriceSource().book(config.region) if capacity.capacity_reservations else None
        zones = set(regions()[config.region].zone_names)
        for r in capacity.capacity_reservations:
            if r.zone not in zones:
                raise ConfigError(
                    f"invalid config {PROJECT}:capacity.capacity_reservations: {r.id} is in {r.zone}, "
                    f"not a zone of {config.region}"
                )
            assert book is not None  # read when there are reservations
            price = book.on_demand_price(r.instance_type)
            if price is None:
                raise ConfigError(
                    f"invalid config {PROJECT}:capacity.capacity_reservations: {r.id} reserves "
                    f"{r.instance_type}, which has no bundled on-demand price in {config.region}"
                )
            held.append(
                ReservedHolding(
                    r.instance_type,
                    r.count,
                    price.usd_per_hour,
                    "stack config (billed at on-demand, used or not)",
                    CAPACITY_RESERVATION,
                    r.id,
                    r.zone,
                    r.ends,
                    r.targeted,
                )
            )
        commitments = [
            SavingsPlanCommitment(
                p.id,
                p.plan_type,
                p.instance_family,
                config.region if p.plan_type == "EC2Instance" else "",
                0.0,
                p.unused_usd_per_hour,
                dict(p.rates),
                p.ends,
                "stack config",
            )
            for p in capacity.savings_plans
        ]
    else:
        types = sorted({t for g in config.gpu_node_groups for t in g.instance_types})
        reservations = _read_or(
            lambda source: source.capacity_reservations(config.region, now), live, None, notes, "capacity reservations"
        )
        plans = _read_or(
            lambda source: source.savings_plans(config.region, now, types), live, None, notes, "Savings Plans"
        )
        held += reservations if reservations is not None else [h for h in recorded if h.kind == CAPACITY_RESERVATION]
        # The stack's own groups use what the lock gave them of a plan: Cost Explorer counts that as used,
        # so it is added back to the plan's headroom (up to the commitment), or each decision would see
        # less headroom than the last and move the units the plan pays for to spot.
        own = _recorded_commitments(recorded)
        commitments = (
            own
            if plans is None
            else [
                replace(
                    c,
                    unused_per_hour=min(
                        c.hourly_commitment,
                        c.unused_per_hour + next((o.unused_per_hour for o in own if o.plan_id == c.plan_id), 0.0),
                    ),
                )
                for c in plans
            ]
        )
    return ([h for h in held if h.ends_at is None or h.ends_at > now], [c for c in commitments if c.ends_at > now])


def _recorded_commitments(recorded: Sequence[ReservedHolding]) -> list[SavingsPlanCommitment]:
    """The Savings Plans a lock was decided with, as commitments whose headroom is what the groups held of
    each (count x rate) at the rates they held it: split again, they give each group what it had."""
    plans: dict[str, SavingsPlanCommitment] = {}
    for held in recorded:
        if held.kind != SAVINGS_PLAN:
            continue
        plan = plans.get(held.reference) or SavingsPlanCommitment(
            held.reference,
            "Compute",
            "",
            "",
            0.0,
            0.0,
            {},
            held.ends_at or datetime.max.replace(tzinfo=UTC),
            "capacity lock",
        )
        usd = plan.unused_per_hour + held.count * held.usd_per_hour
        plans[held.reference] = replace(
            plan,
            hourly_commitment=usd,
            unused_per_hour=usd,
            rates={**plan.rates, held.instance_type: held.usd_per_hour},
        )
    return list(plans.values())


def _read_or(
    read: Callable[[LivePriceSource], T], live: LivePriceSource | None, fallback: T, notes: list[str] | None, what: str
) -> T:
    """`read(live)`; when there is a live source and it fails, `fallback` (the lock's record), said in `notes`."""
    if live is None:
        return fallback
    try:
        return read(live)
    except PriceSourceError as error:
        if notes is not None:
            notes.append(f"{what} unavailable ({error}): the lock's record of them is used")
        return fallback


@dataclass(frozen=True)
class RunMode:
    """How a run meets the world, injected by whoever runs the program: where live prices come from
    (`live`: the AWS APIs, for `source: live`; None: nowhere), and what a missing capacity lock or an
    unpinned node image means: refused (a deployment: the default) or decided from the snapshot and
    listed (an offline plan, which says so)."""

    live: LivePriceSource | None = None
    without_lock: Literal["refuse", "decide_from_snapshot"] = "refuse"
    unpinned_images: Literal["refuse", "list"] = "refuse"

    @classmethod
    def offline_plan(cls) -> RunMode:
        """Pulumi's mock runtime (`seedance plan`, tests): no AWS call, and what a deployment would refuse
        is planned and shown instead."""
        return cls(None, "decide_from_snapshot", "list")


def program_capacity(
    config: StackConfig, stack: str, zones: Sequence[str], stacks_dir: Path, now: datetime, mode: RunMode = RunMode()
) -> ProgramCapacity:
    """The plans the program deploys (spot only while the budget breaker is on)."""
    capacity = _decided_capacity(config, stack, zones, stacks_dir, now, mode)
    if config.capacity.budget_breaker:
        capacity.plans = {name: spot_only(plan) for name, plan in capacity.plans.items()}
        capacity.origin += "; budget breaker on: spot only"
    return capacity


def _decided_capacity(
    config: StackConfig, stack: str, zones: Sequence[str], stacks_dir: Path, now: datetime, mode: RunMode
) -> ProgramCapacity:
    """The plans from the lock or a decision."""
    if not config.gpu_node_groups:
        return ProgramCapacity({}, "no GPU node groups")
    path = lock_path(stacks_dir, stack)
    lock = checked_lock(path, config, stack, zones, now)
    decide_command = f"seedance decide --stack {stack} --source live"
    snapshot = SnapshotPriceSource()
    source = config.capacity.source

    if source == "lock" and lock is not None:
        requests = group_requests(config, zones, *stack_holdings(config, lock, None, now))
        problems = lock_mismatches(lock, requests)
        if problems:
            raise ConfigError(
                f"capacity lock {path.name} does not match {PROJECT}:gpu_node_groups: "
                f"{'; '.join(problems)}; run `{decide_command}` and commit the lock"
            )
        return ProgramCapacity(
            {r.name: lock.plans()[r.name] for r in requests},
            f"lock {path.name}, updated {lock.updated_at:%Y-%m-%d %H:%M}Z",
        )
    if source == "lock" and mode.without_lock == "refuse":
        raise ConfigError(
            f"capacity lock {path} is missing and {PROJECT}:capacity.source is lock: "
            f"run `{decide_command}` and commit the lock"
        )

    current = lock.plans() if lock else {}
    fallbacks = fallback_sources(lock)
    live = mode.live if source == "live" else None
    if live is not None:
        sources = [live, *fallbacks]
        origin = "decided now from live AWS prices"
    else:
        sources = [snapshot, *([LockPriceSource(lock)] if lock else [])]
        origin = {
            "lock": f"no lock {path.name}: decided from the bundled price snapshot (offline plan)",
            "live": "offline: live prices replaced by the bundled price snapshot",
            "snapshot": "decided from the bundled price snapshot",
        }[source]
    notes: list[str] = []
    holdings, commitments = stack_holdings(config, lock, live, now, notes)
    stack_decision = decide_stack(config, zones, sources, holdings, current, now, commitments)
    stack_decision.notes[:0] = notes
    noted = f" ({'; '.join(stack_decision.notes)})" if stack_decision.notes else ""
    return ProgramCapacity(stack_decision.plans(), origin + noted, stack_decision.decisions)


def fallback_sources(lock: CapacityLock | None) -> list[PriceSource]:
    """Where prices come from when the live APIs fail: the lock's recorded prices, then the snapshot."""
    return [LockPriceSource(lock), SnapshotPriceSource()] if lock else [SnapshotPriceSource()]


def optional_lock(path: Path) -> CapacityLock | None:
    if not path.exists():
        return None
    try:
        return read_lock(path)
    except LockError as error:
        raise ConfigError(f"capacity lock unreadable: {error}") from None


def _lock_holdings(lock: CapacityLock) -> list[ReservedHolding]:
    """The holdings a lock was decided with (when they are read live, the lock is their record), each
    summed over the groups that shared it."""
    holdings: dict[tuple, ReservedHolding] = {}
    for plan in lock.plans().values():
        for held in plan.mix.holdings:
            key = (held.instance_type, held.kind, held.reference, held.zone, held.usd_per_hour)
            previous = holdings.get(key)
            holdings[key] = replace(
                held, count=held.count + (previous.count if previous else 0), source="capacity lock"
            )
    return list(holdings.values())


def reference_previews(config: StackConfig, zones: Sequence[str], now: datetime) -> dict[str, str]:
    """Each group's reference preview line (components/capacity/preview.py), from the bundled prices and
    the advisor's bundled data, with the holdings the config names: the worth of spot, never a plan."""
    book = SnapshotPriceSource().book(config.region)
    requests = group_requests(config, zones, *stack_holdings(config, None, None, now))
    return {r.name: reference_preview(r, book, now, config.capacity.settings()).line() for r in requests}
