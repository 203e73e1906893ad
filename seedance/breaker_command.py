"""`seedance breaker --stack dev|staging [--step 85|95] [--apply | --reset]`: the budget breaker's
steps by hand (components/cost/breaker_function.py; the stack's Lambda runs the same on the budget's
alerts).

Without `--apply` it only says what the step would change. `--reset` puts back what the breaker
replaced (the values it recorded on each group). It prints the incident record (the groups, what
each step changes, owners from the `team` tag). The breaker holds its step through a `pulumi up` that puts
the reviewed plans back (its function puts the step back, on a schedule and on every budget message)
until `--reset`, which records the reset so it stops.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from components.cost.breaker_function import (
    DEGRADE,
    SPOT_ONLY,
    apply_changes,
    gpu_groups,
    incident_bucket,
    incident_record,
    monthly_budget,
    planned_changes,
    record_reset,
    reset,
)
from components.pricing.live import boto3_clients
from seedance.deadline import timeout_seconds, within
from seedance_client.errors import InputError

# Tests replace this to answer with recorded API responses.
clients: Callable[[str, str], Any] = boto3_clients


class BreakerRefused(InputError):
    """The breaker does not run on this stack (exit code 2)."""


def run(args: argparse.Namespace, stack_config: Callable[[argparse.Namespace], Any]) -> int:
    config = stack_config(args)
    if config.env == "prod":
        raise BreakerRefused("the budget breaker runs in dev and staging only; prod keeps its class caps")
    try:
        lines = within(args.timeout, lambda: _step(args, config))
    except TimeoutError as error:
        changed = " (some groups may have changed: run it again)" if args.apply or args.reset else ""
        raise BreakerRefused(f"AWS gave {error} (--timeout){changed}") from None
    print("\n".join(lines))
    return 0


def _step(args: argparse.Namespace, config: Any) -> list[str]:
    """The step's AWS calls; what to print, once every call has answered."""
    autoscaling = clients("autoscaling", config.region)
    groups = gpu_groups(autoscaling, config.cluster_name)
    if args.reset:
        done = reset(autoscaling, groups)
        # Recorded, so the breaker stops holding this month's step (it would put it back otherwise).
        account = clients("sts", config.region).get_caller_identity()["Account"]
        key = record_reset(
            clients("s3", config.region),
            incident_bucket(config.cluster_name, account),
            monthly_budget(config.cluster_name),
            done,
            datetime.now(UTC),
        )
        return [f"{len(done)} GPU group(s) put back: {', '.join(done) or 'none'}; recorded {key}"]
    changes = planned_changes(groups, config.env, args.step)
    if args.apply:
        apply_changes(autoscaling, groups, changes)
    record = incident_record(
        stack=args.stack,
        env=config.env,
        step=args.step,
        alert=None,
        changes=changes,
        applied=args.apply,
        now=datetime.now(UTC),
    )
    lines = [json.dumps(record, indent=2)]
    if not args.apply:
        lines.append(f"\n{sum(1 for c in changes if c.after)} GPU group(s) would change; run again with --apply")
    return lines


def register(commands: Any, stack_arguments: Callable, stack_config: Callable) -> None:
    breaker = commands.add_parser(
        "breaker",
        help="the budget breaker's step now: 85 %% stops experiments growing, "
        "95 %% moves dev/staging GPU groups to spot only",
    )
    stack_arguments(breaker)
    breaker.add_argument("--step", type=int, choices=(DEGRADE, SPOT_ONLY), default=SPOT_ONLY)
    action = breaker.add_mutually_exclusive_group()
    action.add_argument("--apply", action="store_true", help="change the groups (default: only report)")
    action.add_argument("--reset", action="store_true", help="put back what the breaker replaced")
    breaker.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=120.0,
        metavar="SECONDS",
        help="one deadline for every AWS call, retries included (default 120)",
    )
    breaker.set_defaults(run=lambda args: run(args, stack_config))
