import os
import tempfile
from functools import cache
from pathlib import Path
from unittest import mock

import pytest

import components.stack.capacity
from components.capacity.lock import build_lock, render_lock
from components.stack.capacity import decide_stack, table_zones
from seedance.cli import offline_plan
from seedance_client.engine import Plan
from tests.components.markets import NOW, FakeLiveSource
from tests.stacks import REPO, STACKS, stack_config


# Plans are cached for the session, once per mutant under mutation testing (scripts/mutation.py): mutmut
# forks each mutant's run from a process that planned with the code unmutated.
def _mutant() -> str | None:
    """The mutant under test when it can change a plan: the policy pack's code never runs in one (nothing
    the program imports imports it), so its mutants reuse the plans made unmutated."""
    name = os.environ.get("MUTANT_UNDER_TEST")
    return None if name is None or name.startswith("policies.") else name


def _stack_plan(stack: str) -> Plan:
    return _committed_plan(stack, _mutant())


@cache
def _committed_plan(stack: str, _mutant: str | None) -> Plan:
    plan, _header = offline_plan(stack, REPO / "infra", None)
    return plan


@pytest.fixture(params=STACKS)
def stack_plan(request) -> Plan:
    return _stack_plan(request.param)


@pytest.fixture
def plan_of():
    return _stack_plan


def _spot_stack_plan(stack: str) -> Plan:
    return _spot_plan(stack, _mutant())


@cache
def _spot_plan(stack: str, _mutant: str | None) -> Plan:
    """The stack planned from a lock decided where spot costs 30 % of on-demand and every zone scores 9
    for placement: every group runs a spot mix (the committed stacks plan all on-demand offline)."""
    config = stack_config(stack)
    zones = table_zones(config)  # the zones an offline plan of the stack uses
    market = FakeLiveSource(0.3, zones=zones, placement_score=lambda _question: 9)
    decided = decide_stack(config, zones, [market], config.capacity.configured_holdings(), {}, NOW)
    lock = build_lock(
        None, stack, config.region, NOW, "live", config.capacity.settings(), decided.decisions, decided.book
    )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"capacity.{stack}.lock.json"
        path.write_text(render_lock(lock))
        with mock.patch.object(components.stack.capacity, "lock_path", lambda _dir, _stack: path):
            plan, _header = offline_plan(stack, REPO / "infra", None)
    return plan


@pytest.fixture(params=[(s, m) for s in STACKS for m in ("committed", "spot")], ids=lambda p: f"{p[0]}-{p[1]}")
def mixed_stack_plan(request) -> Plan:
    """Each stack's plan as committed (all on-demand offline) and from a spot lock (spot in every group)."""
    stack, market = request.param
    return _stack_plan(stack) if market == "committed" else _spot_stack_plan(stack)
