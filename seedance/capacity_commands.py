"""`seedance decide` (write the capacity lock) and `seedance prices show|refresh` (the snapshot)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from components.capacity.lock import build_lock, lock_path, render_lock
from components.catalog.instance_types import gpu_instance_types
from components.catalog.regions import regions
from components.pricing.live import LivePriceSource
from components.pricing.prices import PriceSourceError, SnapshotPriceSource, book_to_json, format_time, parse_time
from components.stack.capacity import (
    StackDecision,
    checked_lock,
    decide_stack,
    decision_zones,
    fallback_sources,
    stack_holdings,
    table_zones,
)
from components.stack.config import ConfigError
from seedance.deadline import bounded
from seedance.stack_input import load_stack
from seedance_client.errors import InputError
from seedance_client.files import write_text

# Tests replace this to answer with recorded API responses.
live_price_source: Callable[..., LivePriceSource] = LivePriceSource


class CommandError(InputError):
    """Bad input or an unreachable price source: one line, exit code 2."""


EARLIEST_DECISION = datetime(2020, 1, 1, tzinfo=UTC)


def _now(args: argparse.Namespace) -> datetime:
    text = getattr(args, "now", None)
    wall = datetime.now(UTC)
    if text is None:
        return wall
    try:
        moment = parse_time(text)
    except (ValueError, OverflowError):
        moment = None
    if moment is None or moment.tzinfo is None or not EARLIEST_DECISION <= moment <= wall + timedelta(days=1):
        raise CommandError(
            f"--now = {text!r}: allowed: an ISO 8601 time with a zone from "
            f"{EARLIEST_DECISION:%Y-%m-%d} to now, such as 2026-12-03T12:00:00Z"
        )
    return moment


def progress(message: str) -> None:
    """What a slow step is doing, for a person at a terminal (pipes and CI logs keep errors one line)."""
    if sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)


_seconds = bounded(1, 3600, "1 to 3600 seconds")


def decision_report(result: StackDecision) -> list[str]:
    lines = [f"prices from: {result.source}", *[f"note: {n}" for n in result.notes]]
    for decision in result.decisions:
        lines += ["", f"[{decision.plan.group}] {decision.rule}: {'; '.join(decision.reasons)}"]
        lines += [f"  {line}" for line in decision.plan.explanation]
    return lines


def capacity_section(outputs: dict, previews: dict[str, str] | None = None) -> list[str]:
    """The `capacity` output of a seedance stack as text: each group's mix, for a group on no spot its
    reference preview (what the advisor's discount would make of it, when given), and the reasons."""
    capacity = outputs.get("capacity")
    if not isinstance(capacity, dict) or not capacity.get("groups"):
        return []
    lines = [f"Capacity decisions ({capacity['origin']}):"]
    for name, group in sorted(capacity["groups"].items()):
        saving = (
            1 - group["expected_usd_per_hour"] / group["all_on_demand_usd_per_hour"]
            if group["all_on_demand_usd_per_hour"]
            else 0.0
        )
        lines.append(
            f"  {name}: base {group['on_demand_base_gpus']:g} GPUs on-demand, "
            f"{group['on_demand_percentage_above_base']:g}% on-demand above it, spot on "
            f"{', '.join(group['spot_types']) or 'none'}; at most {group['max_spot_share']:.0%} spot; "
            f"${group['expected_usd_per_hour']:,.2f}/h vs ${group['all_on_demand_usd_per_hour']:,.2f}/h "
            f"all on-demand ({saving:.0%} saved)"
        )
        if previews and name in previews and not group["spot_types"]:  # what spot would be worth to it
            lines.append(f"    {previews[name]}")
        lines += [f"    {line}" for line in group["explanation"]]
    return lines


def decide_command(args: argparse.Namespace) -> int:
    project, config = load_stack(args.program, args.stack, args.stack_file)
    now = _now(args)
    path = lock_path(project.stack_config_dir, args.stack)
    live = live_price_source(budget_seconds=args.timeout) if args.source == "live" else None
    if live is not None:
        progress(
            f"reading live prices, zones and placement scores for {config.region} from AWS (at most about "
            f"{args.timeout:g} s; --timeout to change)..."
        )
    started = time.monotonic()
    try:
        previous = checked_lock(path, config, args.stack, table_zones(config), now)
        zones = decision_zones(config, live, previous)
        previous = checked_lock(path, config, args.stack, zones, now)
        holding_notes: list[str] = []
        holdings, commitments = stack_holdings(config, previous, live, now, holding_notes)
        if holding_notes and not args.allow_fallback:
            # Deciding without what the account holds would put on spot what it already pays for.
            raise CommandError(
                f"{'; '.join(holding_notes)}; nothing written: check the grants (`seedance preflight`), "
                "or pass --allow-fallback to decide with the lock's record of them"
            )
        sources = [live, *fallback_sources(previous)] if live else [SnapshotPriceSource()]
        result = decide_stack(config, zones, sources, holdings, previous.plans() if previous else {}, now, commitments)
        result.notes[:0] = holding_notes
    except (PriceSourceError, ConfigError) as error:
        raise CommandError(str(error)) from None
    if live is not None:
        progress(f"... read in {time.monotonic() - started:.1f} s")
        if result.source != live.name and not args.allow_fallback:
            # Asking for live prices and deciding from old ones would pass the old ones off as a live decision.
            raise CommandError(
                f"live prices were asked for and are unavailable ({'; '.join(result.notes)}): nothing "
                f"written; check the AWS credentials and network, or pass --allow-fallback to decide "
                f"from {result.source} prices (the lock records that source)"
            )
    newest = result.book.newest_observation()
    if newest is not None and newest > now:
        # Prices from after the decision time would pass for fresh ones.
        raise CommandError(
            f"--now = {format_time(now)} is before the prices used were read ({format_time(newest)}, "
            f"{result.source}): a past decision is reproduced from prices recorded before it; "
            "omit --now to decide from live prices"
        )
    print("\n".join(decision_report(result)))
    if (
        previous is not None
        and not any(d.changed for d in result.decisions)
        and set(previous.groups) == {d.plan.group for d in result.decisions}
    ):
        print(f"\nevery plan kept: {path} left unchanged")
        return 0
    lock = build_lock(
        previous,
        args.stack,
        config.region,
        now,
        result.source,
        config.capacity.settings(),
        result.decisions,
        result.book,
    )
    write_text(path, render_lock(lock), "capacity lock")
    print(f"\nwrote {path}: review and commit it")
    return 0


def prices_show_command(args: argparse.Namespace) -> int:
    document = SnapshotPriceSource().document()
    if args.region and args.region not in regions():
        raise CommandError(f"--region = {args.region!r}: allowed: {', '.join(sorted(regions()))}")
    now = _now(args)
    print(f"Bundled price snapshot, generated {document['generated_at']}")
    for region, entry in sorted(document["regions"].items()):
        if args.region and region != args.region:
            continue
        print(f"\n{region}:")
        for kind in ("on_demand", "spot"):
            for key, price in sorted(entry.get(kind, {}).items()):
                instance_type = key.split("@")[0]
                gpu = gpu_instance_types().get(instance_type)
                per_gpu = f"${price['usd_per_hour'] / gpu.gpus:>8.4f}/GPU-h" if gpu else f"{'(no GPU)':>15}"
                age = (now - parse_time(price["observed_at"])).total_seconds() / 86400
                print(
                    f"  {kind:9} {key:28} ${price['usd_per_hour']:>9.4f}/h  {per_gpu}  "
                    f"{age:5.1f} days old  {price['source']}"
                )
            if not entry.get(kind):
                print(f"  {kind:9} (none: unknown prices are never guessed)")
    return 0


def prices_refresh_command(args: argparse.Namespace) -> int:
    source = SnapshotPriceSource()
    document = source.document()
    if args.region not in regions():
        raise CommandError(f"--region = {args.region!r}: allowed: {', '.join(sorted(regions()))}")
    live = live_price_source(budget_seconds=args.timeout)
    progress(f"reading {args.region}'s GPU prices from AWS (at most about {args.timeout:g} s)...")
    try:
        zones = live.available_zones(args.region)
        book = live.prices(args.region, sorted(gpu_instance_types()), sorted(zones))
    except PriceSourceError as error:
        raise CommandError(f"cannot refresh {args.region}: {error}") from None
    # The refresh reads GPU types' EC2 prices; every other price of the region stays as it is.
    entry = document["regions"].setdefault(args.region, {})
    for kind, prices in book_to_json(book).items():
        entry[kind] = {**entry.get(kind, {}), **prices}
    document["generated_at"] = format_time(_now(args))
    write_text(source.path, json.dumps(document, indent=1) + "\n", "price snapshot")
    print(f"{source.path}: {args.region} now has {len(book.on_demand)} on-demand and {len(book.spot)} spot prices")
    return 0


def register(commands: argparse._SubParsersAction, stack_arguments: Callable[[argparse.ArgumentParser], None]) -> None:
    decide = commands.add_parser("decide", help="decide each GPU group's Spot/On-Demand/RI mix; write the lock")
    stack_arguments(decide)
    decide.add_argument(
        "--source",
        choices=("live", "snapshot"),
        default="live",
        help="live AWS price APIs (default) or the bundled snapshot",
    )
    decide.add_argument("--now", help="decide as of this ISO time (reproduces a past decision)")
    decide.add_argument(
        "--timeout",
        type=_seconds,
        default=90.0,
        metavar="SECONDS",
        help="how long the live AWS reads may take in all (default 90)",
    )
    decide.add_argument(
        "--allow-fallback",
        action="store_true",
        help="when live prices are unavailable, decide from the lock's and the snapshot's prices instead of failing",
    )
    decide.set_defaults(run=decide_command)

    prices = commands.add_parser("prices", help="the bundled price snapshot")
    verbs = prices.add_subparsers(dest="verb", required=True)
    show = verbs.add_parser("show", help="print the snapshot with sources and ages")
    show.add_argument("--region")
    show.add_argument("--now", help=argparse.SUPPRESS)
    show.set_defaults(run=prices_show_command)
    refresh = verbs.add_parser("refresh", help="regenerate a region of the snapshot from the AWS APIs")
    refresh.add_argument("--region", required=True)
    refresh.add_argument("--now", help=argparse.SUPPRESS)
    refresh.add_argument(
        "--timeout",
        type=_seconds,
        default=90.0,
        metavar="SECONDS",
        help="how long the AWS reads may take in all (default 90)",
    )
    refresh.set_defaults(run=prices_refresh_command)
