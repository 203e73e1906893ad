"""`seedance capacity-blocks plan --stack S --group G --gpu-hours H --by DATE`: whether to buy a Capacity
Block for ML for one campaign (components/capacity/blocks.py), from the offerings EC2 has now.

Reads only (`ec2:DescribeCapacityBlockOfferings`, `ec2:DescribeSpotPriceHistory`), within one deadline;
prints each offering's verdict and, for the best one worth buying, the command a person runs to buy it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from components.capacity.blocks import (
    Campaign,
    block_config_entry,
    judge,
    offerings_from_answer,
    purchase_command,
    shapes,
)
from components.catalog.instance_types import gpu_instance_type, gpu_instance_types
from components.common.tables import table
from components.pricing.live import boto3_clients
from components.pricing.prices import SnapshotPriceSource, parse_time
from seedance.capacity_commands import CommandError, _now
from seedance.deadline import bounded, timeout_seconds, within
from seedance.stack_input import load_stack

# Tests replace this to answer with recorded API responses.
clients: Callable[[str, str], Any] = boto3_clients
# The types AWS sells as Capacity Blocks that the GPU table knows (EC2 User Guide, "Capacity Blocks for ML":
# p4d, p4de, p5, p5e, p5en, p6, trn1, trn2; g-family types are not offered).
BLOCK_TYPES = ("p4d.24xlarge", "p4de.24xlarge", "p5.4xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge")
LATEST_START = timedelta(weeks=8)
# Interruption risk for the spot alternative without the advisor's data: the planner's worst band.
UNKNOWN_INTERRUPTIONS_PER_MONTH = 1.0


def _by(text: str, now: datetime) -> datetime:
    try:
        moment = parse_time(text)
    except (ValueError, OverflowError):
        moment = None
    latest = now + LATEST_START + timedelta(days=182)
    if moment is None or moment.tzinfo is None or not now + timedelta(days=1) <= moment <= latest:
        raise CommandError(
            f"--by = {text!r}: allowed: an ISO 8601 time with a zone from a day after now to "
            f"{latest:%Y-%m-%d} (a block starts within 8 weeks and lasts at most 182 days)"
        )
    return moment


def run(args: argparse.Namespace) -> int:
    project, config = load_stack(args.program, args.stack, args.stack_file)
    now = _now(args)
    by = _by(args.by, now)
    group = next((g for g in config.gpu_node_groups if g.name == args.group), None)
    if group is None:
        raise CommandError(
            f"--group = {args.group!r}: the stack's GPU groups are "
            f"{', '.join(g.name for g in config.gpu_node_groups) or 'none'}"
        )
    candidates = [args.instance_type] if args.instance_type else [t for t in group.instance_types if t in BLOCK_TYPES]
    if not candidates or candidates[0] not in BLOCK_TYPES or candidates[0] not in gpu_instance_types():
        raise CommandError(
            f"group {group.name} runs {', '.join(group.instance_types)}; Capacity Blocks are sold for "
            f"{', '.join(t for t in BLOCK_TYPES if t in gpu_instance_types())}: pass --instance-type"
        )
    instance_type = candidates[0]
    gpus = gpu_instance_type(instance_type).gpus
    on_demand = SnapshotPriceSource().book(config.region).on_demand_price(instance_type)
    if on_demand is None:
        raise CommandError(f"no bundled on-demand price for {instance_type} in {config.region}")
    klass = group.workload()

    def read() -> tuple[list[Any], dict[str, float]]:
        ec2 = clients("ec2", config.region)
        found = []
        for count, hours in shapes(args.gpu_hours, gpus, (by - now).total_seconds() / 3600):
            paginator = ec2.get_paginator("describe_capacity_block_offerings")
            for page in paginator.paginate(
                InstanceType=instance_type,
                InstanceCount=count,
                CapacityDurationHours=hours,
                StartDateRange=now,
                EndDateRange=by,
            ):
                found += page.get("CapacityBlockOfferings", [])
        spot: dict[str, float] = {}  # zone -> the latest price: a block is sold in one zone, spot priced there
        if klass.max_spot_share > 0:
            pages = ec2.get_paginator("describe_spot_price_history").paginate(
                InstanceTypes=[instance_type], StartTime=now, ProductDescriptions=["Linux/UNIX"]
            )
            latest: dict[str, tuple] = {}
            for page in pages:
                for record in page.get("SpotPriceHistory", []):
                    zone, when = record.get("AvailabilityZone"), record.get("Timestamp")
                    if zone and (zone not in latest or when > latest[zone][0]):
                        latest[zone] = (when, float(record["SpotPrice"]))
            spot = {zone: price for zone, (_when, price) in latest.items()}
        return found, spot

    try:
        answer, spot = within(args.timeout, read)
    except TimeoutError as error:
        raise CommandError(f"EC2 gave {error} (--timeout)") from None
    miss_cost = args.miss_cost if args.miss_cost is not None else args.gpu_hours * on_demand.usd_per_hour / gpus
    offerings = offerings_from_answer(answer)
    verdicts = sorted(
        (
            v
            for zone in sorted({o.zone for o in offerings})
            for v in judge(
                [o for o in offerings if o.zone == zone],
                Campaign(
                    args.gpu_hours,
                    by,
                    gpus,
                    on_demand.usd_per_hour,
                    args.on_demand_chance,
                    miss_cost,
                    spot.get(zone),
                    UNKNOWN_INTERRUPTIONS_PER_MONTH,
                    (klass.lost_work_seconds + klass.warmup_seconds) / 3600,
                    args.spot_chance,
                ),
            )
        ),
        key=lambda v: v.block_usd,
    )
    spot_text = (
        "spot: not an alternative (the class allows none)"
        if klass.max_spot_share <= 0
        else "spot now (worst interruption band assumed), in each offering's zone: "
        + ", ".join(f"{zone} ${price:,.4f}/h" for zone, price in sorted(spot.items()))
        if spot
        else "spot: not an alternative (no spot price read)"
    )
    print(
        f"Campaign: {args.gpu_hours:,.0f} GPU-hours of {instance_type} by {by.astimezone(UTC):%Y-%m-%d %H:%M}Z "
        f"for group {group.name} (class {klass.name}); on-demand ${on_demand.usd_per_hour:,.4f}/h "
        f"({on_demand.source}), found with chance {args.on_demand_chance:.0%}; missing the date costs "
        f"${miss_cost:,.2f}; {spot_text}"
    )
    if not verdicts:
        print("No offering ends by the date: buy none; plan on-demand (or move the date).")
        return 0
    rows = [
        [
            v.offering.offering_id,
            v.offering.zone,
            v.offering.instances,
            f"{v.offering.start:%Y-%m-%d %H:%M}Z",
            v.offering.hours,
            f"${v.offering.upfront_usd:,.2f}",
            "buy" if v.buy else "do not buy",
            v.reason,
        ]
        for v in verdicts
    ]
    print("\n".join(table(["offering", "zone", "instances", "starts", "hours", "fee", "verdict", "why"], rows)))
    best = next((v for v in verdicts if v.buy), None)
    if best is None:
        print(
            f"Buy none: no block costs less than the expected {verdicts[0].alternative} "
            f"(${verdicts[0].alternative_usd:,.2f})."
        )
        return 0
    print(
        f"Best: {best.offering.offering_id}. The program never buys; to buy it (paid up front, cannot be "
        f"cancelled):\n  {purchase_command(best.offering, config.region)}"
    )
    print(
        "Then give it to the group (the purchase answers the reservation id, cr-...), and `pulumi up` runs it "
        "from its start and drains it before its end:\n" + block_config_entry(args.group, best.offering)
    )
    return 0


MAX_GPU_HOURS = 64 * 8 * 182 * 24  # 64 instances of 8 GPUs for 182 days


_chance = bounded(0, 1, "above 0 up to 1", above_low=True)
_gpu_hours = bounded(
    0, MAX_GPU_HOURS, f"above 0 up to {MAX_GPU_HOURS:,} (64 instances of 8 GPUs for 182 days)", above_low=True
)
_usd = bounded(0, 1e9, "0 to 1,000,000,000")


def register(commands: Any, stack_arguments: Callable) -> None:
    blocks = commands.add_parser("capacity-blocks", help="whether to buy a Capacity Block for ML (never buys)")
    verbs = blocks.add_subparsers(dest="verb", required=True)
    plan = verbs.add_parser("plan", help="judge the offerings for a campaign; print the purchase command")
    stack_arguments(plan)
    plan.add_argument("--group", required=True, help="the GPU group the campaign runs on")
    plan.add_argument("--gpu-hours", type=_gpu_hours, required=True, help="GPU-hours the campaign needs")
    plan.add_argument("--by", required=True, help="when it must be done (ISO 8601 with a zone)")
    plan.add_argument(
        "--instance-type",
        choices=[t for t in BLOCK_TYPES if t in gpu_instance_types()],
        help="default: the group's first type sold as a block",
    )
    plan.add_argument(
        "--on-demand-chance",
        type=_chance,
        default=0.5,
        help="how likely on-demand capacity is there (default 0.5: an assumption; set yours)",
    )
    plan.add_argument(
        "--spot-chance",
        type=_chance,
        help="how likely spot capacity is there for the campaign (default: the on-demand chance); "
        "spot is tried first, on-demand behind it",
    )
    plan.add_argument(
        "--miss-cost", type=_usd, help="what missing the date costs, USD (default: the campaign at on-demand)"
    )
    plan.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=60.0,
        metavar="SECONDS",
        help="one deadline for every EC2 read (default 60)",
    )
    plan.add_argument("--now", help=argparse.SUPPRESS)
    plan.set_defaults(run=run)
