"""A capacity plan's helpers (components/capacity/plan.py): the breaker's plan and named constraint changes."""

import pytest

from components.stack.capacity import decide_stack
from tests.components.markets import NOW, ZONES, FakeLiveSource
from tests.stacks import stack_config


@pytest.fixture(scope="module")
def decided():
    config = stack_config("prod")
    return config, decide_stack(config, ZONES, [FakeLiveSource(0.3)], [], {}, NOW)


def test_the_breakers_plan_is_spot_only_on_every_type_and_says_why(decided):
    from components.capacity.plan import spot_only

    _config, result = decided
    plan = next(d.plan for d in result.decisions if d.plan.group == "online")
    broken = spot_only(plan)
    assert (broken.on_demand_base_gpus, broken.on_demand_percentage_above_base) == (0, 0)
    assert broken.spot_types == plan.instance_types and broken.capacity_rebalance is True
    assert broken.explanation == (*plan.explanation, "budget breaker on (capacity.budget_breaker): spot only")
    assert (broken.group, broken.instance_types, broken.constraints) == (
        plan.group,
        plan.instance_types,
        plan.constraints,
    )


def test_changed_constraints_are_named_field_by_field_and_sorted():
    from components.capacity.plan import constraint_changes

    decided_for = {"zones": ["a"], "min_gpus": 0, "workload_class": {"max_spot_share": 0.9}}
    wanted = {
        "zones": ["a", "b"],
        "min_gpus": 0,
        "workload_class": {"max_spot_share": 0.8, "warmup_seconds": 60},
        "desired_gpus": 4,
    }
    assert constraint_changes(decided_for, wanted) == [
        "desired_gpus",
        "workload_class.max_spot_share",
        "workload_class.warmup_seconds (new field)",
        "zones",
    ]
    assert constraint_changes(wanted, wanted) == []


def test_a_class_that_was_a_mapping_and_is_now_a_value_is_named_once():
    from components.capacity.plan import constraint_changes

    assert constraint_changes({"workload_class": {"max_spot_share": 0.9}}, {"workload_class": "batch"}) == [
        "workload_class"
    ]
