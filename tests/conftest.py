from functools import cache

import pytest

from seedance.cli import offline_plan
from seedance.engine import Plan
from tests.stacks import REPO, STACKS



@cache
def _stack_plan(stack: str) -> Plan:
    plan, _header = offline_plan(stack, REPO / "infra", None)
    return plan


@pytest.fixture(params=STACKS)
def stack_plan(request) -> Plan:
    return _stack_plan(request.param)


@pytest.fixture
def plan_of():
    return _stack_plan
