"""A purchased Capacity Block for ML, run by its pool: what the block's Auto Scaling group says and when it
scales. Pure.

AWS (EC2 Auto Scaling user guide, "Use Capacity Blocks with Auto Scaling groups"): the group launches from
a plain launch template (a mixed instances policy is not supported) that sets market type `capacity-block`
and targets the block's reservation, in the block's zone; scale it out with a scheduled action at the
block's start and to zero more than 30 minutes before its end, when EC2 starts terminating what still runs
(EC2 user guide, "Monitor Capacity Blocks": the expiration warning arrives 40 minutes before the end).
aws-node-termination-handler does not handle that warning (its sqs-monitor.go knows state changes, spot
interruptions and rebalance recommendations only), so the drain does not wait for it: it is scheduled to
finish before the warning, and the group's termination lifecycle hook lets the handler drain each node.
The warning is the backstop (components/compute/block_expiry.py): it takes a group still holding nodes
to zero at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, model_validator

from components.catalog.instance_types import gpu_instance_type
from components.common.validation import FieldError, IsoTime
from components.pricing.prices import utc_text

# EC2 warns this long before a block's end (and starts terminating 10 minutes later).
WARNING_BEFORE_END = timedelta(minutes=40)
# A scheduled action this close is taken as run: an `up` may take this long to create it, and AWS refuses
# one whose start has passed. The run declares the size the action would have set instead.
SCHEDULE_LEAD = timedelta(minutes=15)
LONGEST_BLOCK = timedelta(days=182)  # what AWS sells: 1-14 days, then whole weeks up to 182 days


class CapacityBlockConfig(BaseModel):
    """A Capacity Block the account bought (`seedance capacity-blocks plan` prints the purchase command)."""

    model_config = ConfigDict(extra="forbid")

    reservation_id: str = Field(pattern=r"^cr-[0-9a-f]{8,17}$", description="The block's capacity reservation id.")
    instance_type: str = Field(description="The block's instance type: one of the group's.")
    zone: str = Field(
        pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$", description="The block's Availability Zone: one the group launches in."
    )
    instance_count: int = Field(ge=1, le=64, description="Instances the block holds.")
    starts_at: IsoTime = Field(description="The block's start (UTC), as DescribeCapacityReservations says.")
    ends_at: IsoTime = Field(description="The block's end (UTC).")
    drain_minutes_before_end: int = Field(
        90,
        ge=41,
        le=720,
        description="When the group scales to zero: early "
        "enough that every node's drain (the group's termination heartbeat: "
        "30 minutes for batch) ends before the expiration warning, 40 minutes "
        "before the end.",
    )

    @model_validator(mode="after")
    def _window(self) -> CapacityBlockConfig:
        if not self.starts_at < self.ends_at <= self.starts_at + LONGEST_BLOCK:
            raise FieldError(
                "ends_at",
                self.ends_at.isoformat(),
                f"allowed: after starts_at ({self.starts_at.isoformat()}) and at most 182 days after it",
            )
        if self.drain_at <= self.starts_at:
            raise FieldError(
                "drain_minutes_before_end",
                self.drain_minutes_before_end,
                "the drain would start before the block does; allowed: less than the block's length",
            )
        return self

    @property
    def drain_at(self) -> datetime:
        return self.ends_at - timedelta(minutes=self.drain_minutes_before_end)

    def check_drain(self, heartbeat_seconds: int) -> None:
        """Every node drained (its termination heartbeat at most) before the expiration warning."""
        needed = WARNING_BEFORE_END + timedelta(seconds=heartbeat_seconds)
        if timedelta(minutes=self.drain_minutes_before_end) < needed:
            minutes = -(-int(needed.total_seconds()) // 60)
            raise FieldError(
                "drain_minutes_before_end",
                self.drain_minutes_before_end,
                f"a node's drain may take {heartbeat_seconds} s (the group's termination heartbeat) and "
                f"must end before the expiration warning, 40 minutes before the end; allowed: {minutes} "
                "to 720",
            )

    @property
    def gpus(self) -> int:
        return self.instance_count * gpu_instance_type(self.instance_type).gpus


@dataclass(frozen=True)
class BlockSchedule:
    """The block's group as a run at `now` declares it: its size now (what the actions that have run set)
    and the scheduled actions still ahead. AWS refuses a scheduled action whose start is past, so one that
    has run, or is due within SCHEDULE_LEAD, is not declared; its size is."""

    size: int
    scale_out_at: datetime | None
    drain_at: datetime | None

    @property
    def over(self) -> bool:
        """The block has drained: its group stays at zero, and the config entry can go."""
        return self.scale_out_at is None and self.drain_at is None and self.size == 0


def block_schedule(block: CapacityBlockConfig, now: datetime) -> BlockSchedule:
    """Before the block starts its group waits at 0: launches fail until the reservation is active (EKS User
    Guide, "Capacity Blocks for ML": desired 0 until then), so a start within the lead is scheduled at the lead,
    not declared now. A drain due within the lead is taken as run."""
    soon = now + SCHEDULE_LEAD
    if soon >= block.drain_at:
        return BlockSchedule(size=0, scale_out_at=None, drain_at=None)
    if now < block.starts_at:
        return BlockSchedule(size=0, scale_out_at=max(block.starts_at, soon), drain_at=block.drain_at)
    return BlockSchedule(size=block.instance_count, scale_out_at=None, drain_at=block.drain_at)


def block_lines(group: str, block: CapacityBlockConfig, schedule: BlockSchedule) -> list[str]:
    """What a run declares for the block, for people."""
    head = (
        f"  {group}: {block.reservation_id}, {block.instance_count} x {block.instance_type} in {block.zone}, "
        f"{utc_text(block.starts_at)} to {utc_text(block.ends_at)} (paid at purchase)"
    )
    if schedule.over:
        return [head, "    over: drained; remove it from the stack file"]
    steps = (
        [f"scales to {block.instance_count} at {utc_text(schedule.scale_out_at)}"]
        if schedule.scale_out_at
        else [f"runs {schedule.size} now"]
    )
    assert schedule.drain_at is not None  # a block not over has its drain ahead
    steps.append(f"drains to 0 from {utc_text(schedule.drain_at)} (before the expiration warning)")
    return [head, f"    {'; '.join(steps)}"]
