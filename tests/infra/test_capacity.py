"""Which plans the program deploys, per `capacity.source`, with and without a lock."""

from datetime import timedelta

import pytest

from components.capacity.lock import build_lock, lock_path, read_lock, render_lock
from components.stack.capacity import RunMode, decide_stack, program_capacity
from components.stack.config import ConfigError
from tests.components.markets import NOW, ZONES, FakeLiveSource
from tests.stacks import stack_config


def write_lock(tmp_path, config, stack="prod", spot_ratio=0.3, zones=ZONES):
    result = decide_stack(
        config, zones, [FakeLiveSource(spot_ratio, zones=zones)], config.capacity.configured_holdings(), {}, NOW
    )
    lock = build_lock(
        None, stack, config.region, NOW, result.source, config.capacity.settings(), result.decisions, result.book
    )
    lock_path(tmp_path, stack).write_text(render_lock(lock))
    return lock


def test_a_real_run_without_the_lock_stops_with_the_command(tmp_path):
    with pytest.raises(ConfigError, match=r"capacity.prod.lock.json is missing .* run `seedance decide --stack prod"):
        program_capacity(stack_config("prod"), "prod", ZONES, tmp_path, NOW)


def test_an_offline_plan_without_the_lock_decides_from_the_snapshot_and_says_so(tmp_path):
    capacity = program_capacity(stack_config("prod"), "prod", ZONES, tmp_path, NOW, RunMode.offline_plan())
    assert capacity.origin.startswith("no lock capacity.prod.lock.json: decided from the bundled price snapshot")
    assert all(p.spot_types == () for p in capacity.plans.values())  # the snapshot has no spot prices


def test_the_lock_is_deployed_as_reviewed(tmp_path):
    lock = write_lock(tmp_path, stack_config("prod"))
    capacity = program_capacity(stack_config("prod"), "prod", ZONES, tmp_path, NOW)
    assert capacity.plans == lock.plans() and capacity.plans["batch"].spot_types
    assert capacity.origin.startswith("lock capacity.prod.lock.json")


def test_a_lock_for_another_config_is_refused(tmp_path):
    write_lock(tmp_path, stack_config("prod"))
    changed = stack_config("prod")
    changed.gpu_node_groups[0] = changed.gpu_node_groups[0].model_copy(update={"max_gpus": 128})
    with pytest.raises(ConfigError, match=r"does not match seedance-gpu:gpu_node_groups: batch \(max_gpus changed\)"):
        program_capacity(changed, "prod", ZONES, tmp_path, NOW)


def test_live_decides_now_against_the_lock(tmp_path):
    dev = stack_config("dev")
    capacity = program_capacity(dev, "dev", ZONES, tmp_path, NOW, RunMode(live=FakeLiveSource(0.3)))
    assert capacity.origin == "decided now from live AWS prices"
    assert capacity.plans["batch"].spot_types and {d.rule for d in capacity.decisions} <= {"first-plan"}


@pytest.mark.parametrize("part_score, online_spot", [(9, True), (3, False)])
def test_serving_spot_follows_the_placement_questions_asked_for_it(part_score, online_spot):
    # The whole share scores low everywhere; whether serving runs spot rests on each zone's part.
    prod = stack_config("prod")

    def score(question):
        whole = max(q.target_capacity for q in live.asked if q.instance_types == question.instance_types)
        return 3 if question.target_capacity == whole else part_score

    live = FakeLiveSource(0.3, placement_score=score)
    result = decide_stack(prod, ZONES, [live], prod.capacity.configured_holdings(), {}, NOW)
    plans = {d.plan.group: d.plan for d in result.decisions}
    gated = [g.name for g in prod.gpu_node_groups if g.workload().min_placement_score is not None]
    assert gated and len(live.asked) == 2 * len(gated) == len(set(live.asked))
    assert all(bool(plans[name].spot_types) is online_spot for name in gated)
    assert plans["batch"].spot_types


def test_placement_questions_are_asked_once_per_shape_and_not_when_turned_off():
    prod = stack_config("prod")
    online = next(g for g in prod.gpu_node_groups if g.workload().min_placement_score is not None)
    twin = online.model_copy(update={"name": "online-b"})  # same types and sizes: the same two questions
    prod = prod.model_copy(update={"gpu_node_groups": [*prod.gpu_node_groups, twin]})
    live = FakeLiveSource(0.3, placement_score=lambda question: 9)
    decide_stack(prod, ZONES, [live], (), {}, NOW)
    assert len(live.asked) == len(set(live.asked)) == 2
    quiet = FakeLiveSource(0.3, placement_score=lambda question: 9)
    off = prod.model_copy(update={"capacity": prod.capacity.model_copy(update={"placement_scores": False})})
    plans = {d.plan.group: d.plan for d in decide_stack(off, ZONES, [quiet], (), {}, NOW).decisions}
    assert quiet.asked == [] and plans[online.name].spot_types == ()


def test_live_failure_keeps_the_locked_plans(tmp_path):
    dev = stack_config("dev")
    zones = ("us-west-2a", "us-west-2b")  # dev's region
    lock = write_lock(tmp_path, dev, stack="dev", zones=zones)
    later = NOW + timedelta(hours=7)  # the lock's prices are past max_price_age by now
    capacity = program_capacity(dev, "dev", zones, tmp_path, later, RunMode(live=FakeLiveSource(fail="endpoint down")))
    assert "live prices unavailable (endpoint down)" in capacity.origin
    assert capacity.plans == lock.plans()
    assert {d.rule for d in capacity.decisions} == {"keep:stale-prices"}


def test_lock_round_trips(tmp_path):
    lock = write_lock(tmp_path, stack_config("prod"))
    again = read_lock(lock_path(tmp_path, "prod"))
    assert again.plans() == lock.plans() and again.updated_at == NOW
    assert again.price_book().on_demand_price("g6.12xlarge").observed_at < NOW


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_one_price_per_gpu_the_estimate_prices_each_group_as_the_decision_did(plan_of, stack):
    """Held Reserved Instances at their effective rate, then on-demand at list: the cost estimate (used
    by `seedance plan`, `seedance check` and the budget rules) and the capacity decision agree."""
    from components.cost.estimate import catalog_for, estimate
    from seedance.check_command import plan_resources

    plan = plan_of(stack)
    groups = plan.outputs["reports"]["capacity"]["groups"]
    for asg in [r for r in plan_resources(plan) if r.type == "aws:autoscaling/group:Group"]:
        name = asg.name.removeprefix(f"{plan.outputs['cluster_name']}-").removesuffix("-asg")
        decided = groups[name]
        if decided["spot_types"] or not asg.props["desiredCapacity"]:
            continue  # spot is priced from the market, not the plan; an empty group costs nothing
        (line,) = estimate([asg], catalog_for(plan.outputs["region"])).lines  # without its template: no disks
        assert line.monthly_usd == pytest.approx(decided["expected_usd_per_hour"] * 730, abs=0.01), line.basis
