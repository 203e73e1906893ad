"""A purchased Capacity Block's schedule and config (components/compute/capacity_block.py): what a run at any
moment declares, never a scheduled action in the past, and a drain that ends before the expiration warning."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from components.compute.capacity_block import (
    SCHEDULE_LEAD,
    WARNING_BEFORE_END,
    CapacityBlockConfig,
    block_lines,
    block_schedule,
)
from components.compute.config import GpuNodeGroupConfig

START = datetime(2027, 1, 4, 11, 30, tzinfo=UTC)
END = START + timedelta(days=7)
BLOCK = {
    "reservation_id": "cr-0a1b2c3d4e5f60718",
    "instance_type": "p5.48xlarge",
    "zone": "us-east-1b",
    "instance_count": 2,
    "starts_at": "2027-01-04T11:30:00Z",
    "ends_at": "2027-01-11T11:30:00Z",
}


def block(**changes):
    return CapacityBlockConfig.model_validate({**BLOCK, **changes})


def group(workload_class="batch", **block_changes):
    return GpuNodeGroupConfig.model_validate(
        {
            "name": "campaign",
            "workload_class": workload_class,
            "instance_types": ["p5.48xlarge"],
            "desired_gpus": 0,
            "max_gpus": 16,
            "capacity_blocks": [{**BLOCK, **block_changes}],
        }
    )


@pytest.mark.parametrize(
    "now, size, scale_out, drain",
    [
        (START - timedelta(days=1), 0, START, END - timedelta(minutes=90)),  # bought, ahead
        (START - timedelta(minutes=16), 0, START, END - timedelta(minutes=90)),
        # Too close to create at the start: the group waits at 0 and starts the lead from now (the reservation
        # is not active before its start: a launch then fails).
        (START - timedelta(minutes=15), 0, START, END - timedelta(minutes=90)),
        (START - timedelta(minutes=1), 0, START + timedelta(minutes=14), END - timedelta(minutes=90)),
        (START, 2, None, END - timedelta(minutes=90)),
        (END - timedelta(minutes=106), 2, None, END - timedelta(minutes=90)),
        (END - timedelta(minutes=105), 0, None, None),  # the drain is 15 minutes away: drained now
        (END + timedelta(days=3), 0, None, None),
    ],
)
def test_what_a_run_declares_at_each_moment(now, size, scale_out, drain):
    schedule = block_schedule(block(), now)
    assert (schedule.size, schedule.scale_out_at, schedule.drain_at) == (size, scale_out, drain)
    assert schedule.over == (drain is None)


@settings(max_examples=200, deadline=None)
@given(st.integers(-10 * 24 * 60, 10 * 24 * 60), st.integers(1, 14), st.integers(41, 300), st.integers(1, 64))
def test_no_run_declares_an_action_in_the_past_and_the_size_follows_the_window(
    offset_minutes, days, drain_minutes, count
):
    """AWS refuses a scheduled action whose start is past: at any moment, what is declared is more than the
    lead ahead, and the size is what the actions due by then set."""
    b = block(
        ends_at=(START + timedelta(days=days)).isoformat(),
        drain_minutes_before_end=min(drain_minutes, days * 1440 - 1),
        instance_count=count,
    )
    now = START + timedelta(minutes=offset_minutes)
    schedule = block_schedule(b, now)
    soon = now + SCHEDULE_LEAD
    assert all(moment >= soon for moment in (schedule.scale_out_at, schedule.drain_at) if moment is not None)
    # Nodes only while the reservation is active and its drain is more than the lead ahead.
    assert schedule.size == (count if b.starts_at <= now and soon < b.drain_at else 0)
    # Before the block starts the group waits at 0 with its start ahead (at the lead at the soonest).
    assert (schedule.scale_out_at is not None) == (now < b.starts_at and soon < b.drain_at)
    if schedule.scale_out_at is not None:
        assert schedule.scale_out_at == max(b.starts_at, soon)


@pytest.mark.parametrize(
    "workload_class, minutes, ok",
    [
        ("batch", 70, True),  # 40 before the end + 30 minutes of drain (batch tolerates 1,800 s)
        ("batch", 69, False),
        ("online", 42, True),  # the drain's floor: the 2 minutes a spot notice gives
        ("online", 41, False),
    ],
)
def test_every_nodes_drain_ends_before_the_expiration_warning(workload_class, minutes, ok):
    if ok:
        configured = group(workload_class, drain_minutes_before_end=minutes)
        b = configured.capacity_blocks[0]
        assert (
            b.drain_at + timedelta(seconds=configured.termination_heartbeat_seconds) <= b.ends_at - WARNING_BEFORE_END
        )
        return
    with pytest.raises(
        ValidationError,
        match=r"must end before the expiration warning, 40 minutes before the end; "
        rf"allowed: {70 if workload_class == 'batch' else 42} to 720",
    ):
        group(workload_class, drain_minutes_before_end=minutes)


@pytest.mark.parametrize(
    "changes, found",
    [
        ({"ends_at": "2027-01-04T11:30:00Z"}, "after starts_at"),
        ({"ends_at": "2027-07-06T11:30:00Z"}, "at most 182 days"),
        ({"ends_at": "2027-01-04T12:30:00Z"}, "the drain would start before the block does"),
        ({"instance_count": 65}, "less than or equal to 64"),
        ({"reservation_id": "cr-XYZ"}, "reservation_id"),
        ({"zone": "us-east-1"}, "zone"),
        ({"starts_at": "2027-01-04 11:30"}, "timezone"),
    ],
)
def test_a_block_that_cannot_be_is_refused_naming_the_field(changes, found):
    with pytest.raises(ValidationError, match=found):
        block(**changes)


def test_a_block_of_another_type_or_listed_twice_is_refused_by_its_group():
    with pytest.raises(ValidationError, match=r"allowed: one of the group's instance types \(p5.48xlarge\)"):
        group(instance_type="p4d.24xlarge")
    with pytest.raises(ValidationError, match=r"lists a block twice"):
        GpuNodeGroupConfig.model_validate(
            {
                "name": "campaign",
                "workload_class": "batch",
                "instance_types": ["p5.48xlarge"],
                "desired_gpus": 0,
                "max_gpus": 16,
                "capacity_blocks": [BLOCK, BLOCK],
            }
        )


def test_the_plan_says_what_each_run_does_with_the_block():
    ahead, running, over = (
        block_lines("campaign", block(), block_schedule(block(), now))
        for now in (START - timedelta(hours=1), START + timedelta(days=1), END)
    )
    assert (
        ahead[1] == "    scales to 2 at 2027-01-04T11:30:00Z; drains to 0 from 2027-01-11T10:00:00Z (before the "
        "expiration warning)"
    )
    assert running[1].startswith("    runs 2 now; drains to 0 from 2027-01-11T10:00:00Z")
    assert over[1] == "    over: drained; remove it from the stack file"
