"""`seedance quotas plan --stack S --demand FILE [--capacity CLASS=N] [--json OUT]`: from a history of the teams'
GPU demand, propose the cohort's nominal quotas and borrowing and lending limits, and replay the history
under today's per-namespace quotas and under the proposal (components/tenancy/replay.py says the model).

Prices and committed GPUs are the stack's own: each class's $/GPU-hour from the capacity plans the program
deploys, its committed GPUs the groups' on-demand base or reserved holdings, whichever is more.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from components.capacity.plan import CapacityPlan
from components.stack.capacity import RunMode, program_capacity, table_zones
from components.stack.config import StackConfig
from components.tenancy.demand import CLASSES, MAX_DEMAND_BYTES, DemandError, DemandHistory, read_demand
from components.tenancy.proposal import Proposal, propose
from components.tenancy.queues import pool_units
from components.tenancy.replay import Outcome, Quota, Replay, Sharing, replay
from seedance.stack_input import load_stack
from seedance_client.files import read_text, write_text

EXIT_OK = 0


def register(commands: argparse._SubParsersAction, stack_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
    quotas = commands.add_parser("quotas", help="the teams' GPU quotas: proposals from demand history")
    verbs = quotas.add_subparsers(dest="verb", required=True)
    plan = verbs.add_parser(
        "plan", help="propose nominal quotas and limits from a demand CSV, and replay it per namespace and pooled"
    )
    stack_arguments(plan)
    plan.add_argument("--demand", type=Path, required=True, metavar="FILE", help="CSV: time,tenant,class,gpus[,quota]")
    plan.add_argument(
        "--capacity",
        action="append",
        default=[],
        metavar="CLASS=N",
        help="GPUs of a class the replays share (default: the sum of the teams' quotas); repeatable",
    )
    plan.add_argument("--json", type=Path, metavar="FILE", help="also write the replays and the proposal as JSON")
    plan.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    project, config = load_stack(args.program, args.stack, args.stack_file)
    history = read_demand(read_text(args.demand, "demand history", MAX_DEMAND_BYTES), str(args.demand))
    quotas = stack_quotas(config, history, str(args.demand))
    capacity = _capacities(args.capacity, quotas, history)
    now = datetime.now(UTC)
    # The plans alone, as the program decides them: the rest of the stack's derivation prices nothing here.
    decided = program_capacity(
        config, args.stack, table_zones(config), project.stack_config_dir, now, RunMode.offline_plan()
    )
    prices = class_prices(config, decided.plans)
    report = quota_report(history, quotas, capacity, prices)
    print("\n".join(report_lines(report, args.stack, str(args.demand), history)))
    if args.json:
        write_text(args.json, json.dumps(report.to_json(), indent=2) + "\n", "quotas JSON")
    return EXIT_OK


def stack_quotas(config: StackConfig, history: DemandHistory, source: str) -> dict[str, dict[str, int]]:
    """Each class's teams and their quotas: the stack's `tenants[].gpus`; a team of the history the stack does
    not have takes the quota its rows give, and is refused without one."""
    quotas: dict[str, dict[str, int]] = {klass: {} for klass in CLASSES}
    for tenant in config.tenants:
        for klass in CLASSES:
            quotas[klass][tenant.name] = tenant.gpus.get(klass, 0)
    for (team, klass), given in history.quotas.items():
        if team in quotas[klass]:
            continue
        known = [q for q in given if q is not None]
        if not known:
            raise DemandError(
                f"{source}: tenant {team!r} is not a team of this stack and its rows give no quota; allowed: "
                f"{', '.join(t.name for t in config.tenants) or 'no team'}, or a quota column"
            )
        quotas[klass][team] = max(known)
    return quotas


def _capacities(given: list[str], quotas: Mapping[str, Mapping[str, int]], history: DemandHistory) -> dict[str, int]:
    capacity = {klass: sum(quotas[klass].values()) for klass in CLASSES}
    for entry in given:
        klass, _sep, number = entry.partition("=")
        if klass not in CLASSES or not number.isdigit() or not 0 < int(number) <= 1_000_000:
            raise DemandError(
                f"--capacity {entry[:80]!r}: allowed: CLASS=N with CLASS one of {', '.join(CLASSES)} and N "
                "from 1 to 1,000,000 GPUs"
            )
        capacity[klass] = int(number)
    for klass in history.classes():
        if capacity[klass] == 0:
            raise DemandError(
                f"the {klass} teams' quotas sum to 0 GPUs, so there is nothing to replay; allowed: a stack with "
                f"{klass} quotas, or --capacity {klass}=N"
            )
    return capacity


def class_prices(config: StackConfig, plans: Mapping[str, CapacityPlan]) -> dict[str, tuple[float, int]]:
    """Each class's ($/GPU-hour, committed GPUs) from its groups' plans."""
    found: dict[str, tuple[float, int]] = {}
    for klass in CLASSES:
        groups = [g for g in config.gpu_node_groups if g.workload_class == klass]
        usd = sum(plans[g.name].expected_usd_per_hour for g in groups)
        gpus = sum(plans[g.name].constraints["desired_gpus"] or g.max_gpus for g in groups)
        committed = sum(
            max(plans[g.name].on_demand_base_gpus, pool_units(plans[g.name], g.gpus_per_instance)["reserved"])
            for g in groups
        )
        found[klass] = (usd / gpus if gpus else 0.0, committed)
    return found


@dataclass(frozen=True)
class QuotaReport:
    per_namespace: Replay
    cohort: Replay
    proposal: dict[str, Proposal]  # class -> the teams' proposed quotas
    capacity: dict[str, int]  # class -> GPUs the replays share

    def to_json(self) -> dict[str, object]:
        teams = sorted({team for proposal in self.proposal.values() for team in proposal.quotas})
        return {
            "replays": {"per_namespace": self.per_namespace.to_json(), "cohort": self.cohort.to_json()},
            "proposal": {
                "capacity": self.capacity,
                "basis": {klass: proposal.basis for klass, proposal in self.proposal.items()},
                "teams": {
                    team: {
                        klass: {
                            "nominal": proposal.quotas[team].nominal,
                            "borrowing_limit": proposal.quotas[team].borrowing_limit,
                            "lending_limit": proposal.quotas[team].lending_limit,
                        }
                        for klass, proposal in self.proposal.items()
                        if team in proposal.quotas
                    }
                    for team in teams
                },
            },
        }


def quota_report(
    history: DemandHistory,
    quotas: Mapping[str, Mapping[str, int]],
    capacity: Mapping[str, int],
    prices: Mapping[str, tuple[float, int]],
) -> QuotaReport:
    """The proposal and both replays of the history."""
    proposal: dict[str, Proposal] = {}
    today: dict[str, Sharing] = {}
    pooled: dict[str, Sharing] = {}
    for klass in history.classes():
        teams = sorted(set(quotas[klass]) | set(history.teams(klass)))
        usd, committed = prices[klass]
        committed = min(committed, capacity[klass])
        current = {team: quotas[klass].get(team, 0) for team in teams}
        proposal[klass] = propose(history, klass, current, capacity[klass])
        today[klass] = Sharing(False, {t: Quota(q) for t, q in current.items()}, capacity[klass], committed, usd)
        pooled[klass] = Sharing(True, proposal[klass].quotas, capacity[klass], committed, usd)
    return QuotaReport(
        replay(history, today), replay(history, pooled), proposal, {k: capacity[k] for k in history.classes()}
    )


def _row(name: str, outcome: Outcome) -> str:
    usd = f"${outcome.usd_per_useful_gpu_hour:,.2f}" if outcome.usd_per_useful_gpu_hour is not None else "-"
    return (
        f"  {name:<20} {outcome.gpu_hours_served:>12,.1f} {outcome.idle_while_waiting_gpu_hours:>12,.1f} "
        f"{outcome.wait_p50_minutes_within_nominal:>8,.1f} {outcome.wait_p95_minutes_within_nominal:>8,.1f} "
        f"{outcome.preemptions:>10,.1f} {usd:>10}"
    )


def report_lines(report: QuotaReport, stack: str, source: str, history: DemandHistory) -> list[str]:
    lines = [
        f"Demand history {source}: {history.total_hours:,.1f} hours, {history.intervals:,} intervals, stack {stack}.",
        "Capacity shared: "
        + ", ".join(f"{klass} {gpus:,} GPUs" for klass, gpus in report.capacity.items())
        + " (the teams' quotas unless --capacity says otherwise).",
    ]
    header = (
        f"  {'team':<20} {'served GPU-h':>12} {'idle, others':>12} {'wait p50':>8} {'wait p95':>8} "
        f"{'preempted':>10} {'$/useful h':>10}"
    )
    for result, title in ((report.per_namespace, "Per-namespace quotas (today)"), (report.cohort, "Cohort, proposed")):
        share = "n/a" if result.committed_used is None else f"{result.committed_used:.1%}"
        lines += [
            "",
            f"{title}: committed GPUs used {share} of the hours demand allowed; idle while waiting "
            f"{result.total.idle_while_waiting_gpu_hours / result.total.capacity_gpu_hours:.2%} of capacity.",
            header + "   (waits: minutes, work within nominal quota; preempted: GPUs)",
            *[_row(team, outcome) for team, outcome in sorted(result.teams.items())],
            _row("total", result.total),
        ]
    lines += ["", "Proposed quotas (tenants[].gpus, gpu_borrowing_limits, gpu_lending_limits per class):"]
    for klass, proposal in report.proposal.items():
        lines.append(
            f"  {klass}: nominal quotas from {proposal.basis}, of the candidates (GPU-hours served, GPUs preempted, "
            "p95 wait): "
            + "; ".join(f"{name} {s:,.0f}, {p:,.0f}, {w:,.1f} min" for name, (s, p, w) in proposal.scores.items())
        )
        for team, quota in sorted(proposal.quotas.items()):
            borrowing = "no limit" if quota.borrowing_limit is None else f"{quota.borrowing_limit}"
            lending = "no limit" if quota.lending_limit is None else f"{quota.lending_limit}"
            lines.append(
                f"  {team:<20} {klass:<7} nominal {quota.nominal:>5}, borrowing {borrowing}, lending {lending}"
            )
    return lines
