"""The replay's model of sharing: hard per-team quotas against a cohort that lends idle quota, reclaims it by
preemption, keeps to borrowing and lending limits, and prices committed GPUs whether used or not."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.tenancy.demand import read_demand
from components.tenancy.replay import Quota, Sharing, replay, water_fill, weighted_quantile


def hourly(**teams: list[int]):
    """A batch history, one row an hour per team."""
    rows = ["time,tenant,class,gpus"]
    for name, levels in teams.items():
        rows += [f"{hour * 3600},{name},batch,{gpus}" for hour, gpus in enumerate(levels)]
    return read_demand("\n".join(rows) + "\n", "test")


def sharing(cohort, capacity=16, committed=0, usd=1.0, **quotas):
    return {
        "batch": Sharing(
            cohort, {t: q if isinstance(q, Quota) else Quota(q) for t, q in quotas.items()}, capacity, committed, usd
        )
    }


def test_per_namespace_quotas_cap_each_team_and_leave_idle_quota_idle_while_another_waits():
    history = hourly(a=[16, 16], b=[0, 0])
    result = replay(history, sharing(False, a=8, b=8))
    assert result.teams["a"].gpu_hours_served == 16
    assert result.total.idle_while_waiting_gpu_hours == 16  # b's 8 idle GPUs for two hours while a waited
    assert result.teams["b"].idle_while_waiting_gpu_hours == 16
    assert result.total.preemptions == 0


def test_the_cohort_lends_idle_quota_to_a_team_that_waits():
    history = hourly(a=[16, 16], b=[0, 0])
    result = replay(history, sharing(True, a=8, b=8))
    assert result.teams["a"].gpu_hours_served == 32
    assert result.total.idle_while_waiting_gpu_hours == 0


def test_an_owner_reclaims_its_quota_by_preempting_the_borrower():
    history = hourly(a=[16, 16, 16], b=[0, 8, 8])
    result = replay(history, sharing(True, a=8, b=8))
    assert result.teams["a"].preemptions == 8  # the 8 borrowed GPUs, once
    assert result.teams["b"].gpu_hours_served == 16  # b's own quota back at once: no wait within nominal
    assert result.teams["b"].wait_p95_minutes_within_nominal == 0
    assert result.teams["a"].gpu_hours_served == 16 + 8 + 8


def test_a_borrower_keeps_what_it_runs_while_the_spare_lasts():
    history = hourly(a=[12, 12, 12], b=[0, 2, 4])
    result = replay(history, sharing(True, a=8, b=8))
    assert result.total.preemptions == 0  # b's rise fits in what a did not borrow
    assert result.teams["a"].gpu_hours_served == 36


def test_borrowing_and_lending_limits_hold():
    history = hourly(a=[16, 16], b=[0, 0])
    borrowing = replay(history, sharing(True, a=Quota(8, borrowing_limit=3), b=8))
    assert borrowing.teams["a"].gpu_hours_served == 2 * 11
    lending = replay(history, sharing(True, a=8, b=Quota(8, lending_limit=5)))
    assert lending.teams["a"].gpu_hours_served == 2 * 13
    assert lending.total.idle_while_waiting_gpu_hours == 2 * 3  # b's unlendable 3 GPUs


def test_online_style_teams_that_may_not_borrow_get_their_quota_only():
    history = hourly(a=[16], b=[0])
    result = replay(history, sharing(True, a=Quota(8, borrowing_limit=0), b=8))
    assert result.teams["a"].gpu_hours_served == 8


def test_capacity_short_of_the_quotas_is_shared_max_min_and_within_quota_work_waits_in_order():
    # 8 GPUs for two teams of 8: a asks 2, b asks 8; then b's need falls and its queue drains.
    history = hourly(a=[2, 2, 0], b=[8, 8, 2])
    result = replay(history, sharing(False, capacity=8, a=8, b=8))
    assert result.teams["a"].gpu_hours_served == 4
    assert result.teams["b"].gpu_hours_served == 6 + 6 + 2
    # b's 2 unmet GPUs waited two hours (withdrawn at hour 2 counts as leaving the queue).
    assert result.teams["b"].wait_p95_minutes_within_nominal == 120
    assert result.teams["b"].wait_p50_minutes_within_nominal == 0  # 6 of its 8 GPUs started at once


def test_work_still_waiting_at_the_end_counts_until_the_end():
    history = hourly(a=[4, 4], b=[0, 0])
    result = replay(history, sharing(False, capacity=2, a=4, b=4))
    assert result.teams["a"].wait_p95_minutes_within_nominal == 120


def test_committed_gpus_are_paid_every_hour_and_the_rest_only_while_serving():
    history = hourly(a=[2, 10], b=[0, 0])
    result = replay(history, sharing(False, committed=4, usd=2.0, a=8, b=8))
    # hour 0: 4 committed paid, 2 served; hour 1: 4 committed + 4 above, 8 served
    assert result.total.usd_per_useful_gpu_hour == pytest.approx((4 + 8) * 2.0 / (2 + 8))
    assert result.committed_used == pytest.approx((2 + 4) / (2 + 4))  # all demand allowed was used
    # a pays the committed GPUs in proportion to its nominal quota (half) and all it ran above them
    assert result.teams["a"].usd_per_useful_gpu_hour == pytest.approx((2 + 2 + 4) * 2.0 / 10)


def test_the_historys_own_quotas_drive_the_per_namespace_replay_only():
    history = read_demand("time,tenant,class,gpus,quota\n0,a,batch,8,2\n0,b,batch,0,\n", "t")
    assert replay(history, sharing(False, a=8, b=8)).teams["a"].gpu_hours_served == 2
    assert replay(history, sharing(True, a=8, b=8)).teams["a"].gpu_hours_served == 8


def test_a_class_the_sharing_does_not_name_is_not_replayed():
    history = read_demand("time,tenant,class,gpus\n0,a,online,4\n", "t")
    assert replay(history, sharing(True, a=8)).teams == {}


@given(
    st.dictionaries(st.sampled_from("abcd"), st.floats(0, 50), min_size=1),
    st.floats(0, 100),
)
def test_water_fill_is_max_min_fair(wants, capacity):
    given_ = water_fill(wants, capacity)
    assert sum(given_.values()) <= capacity + 1e-6
    assert all(given_[t] <= wants[t] + 1e-9 for t in wants)
    if sum(wants.values()) <= capacity:
        assert given_ == pytest.approx(wants)
    else:
        assert sum(given_.values()) == pytest.approx(capacity)
        short = [t for t in wants if given_[t] < wants[t] - 1e-6]
        assert all(given_[s] >= given_[t] - 1e-6 for t in wants for s in short)  # the short get the most


levels = st.lists(st.integers(0, 24), min_size=1, max_size=12)


@settings(max_examples=60)
@given(levels, levels, levels, st.integers(1, 40))
def test_the_cohort_never_serves_less_than_per_namespace_quotas_nor_more_than_there_is(a, b, c, capacity):
    history = hourly(a=a, b=b, c=c)
    quotas = {"a": 8, "b": 8, "c": 8}
    today = replay(history, sharing(False, capacity=capacity, **quotas)).total
    pooled = replay(history, sharing(True, capacity=capacity, **quotas)).total
    asked = sum(sum(levels) for levels in history.demand.values())
    assert today.gpu_hours_served <= pooled.gpu_hours_served + 1e-6
    assert pooled.gpu_hours_served <= min(asked, capacity * history.total_hours) + 1e-6
    assert pooled.idle_while_waiting_gpu_hours <= today.idle_while_waiting_gpu_hours + 1e-6
    if capacity >= sum(quotas.values()):
        assert pooled.idle_while_waiting_gpu_hours == pytest.approx(0, abs=1e-6)


def test_weighted_quantiles_weigh_work_by_gpus():
    assert weighted_quantile([(9, 0.0), (1, 60.0)], 0.5) == 0
    assert weighted_quantile([(9, 0.0), (1, 60.0)], 0.95) == 60
    assert weighted_quantile([], 0.95) == 0
