"""Proposed quotas: candidates replayed, the one that serves most and preempts least chosen, its reasons
kept; nominal quotas that fill the capacity in whole GPUs; borrowing up to the history's peak."""

from hypothesis import given
from hypothesis import strategies as st

from components.tenancy.demand import read_demand
from components.tenancy.proposal import PERCENTILES, TODAY, demand_percentile, largest_remainder, propose


def hourly(klass="batch", **teams):
    rows = ["time,tenant,class,gpus"]
    for name, levels in teams.items():
        rows += [f"{hour * 3600},{name},{klass},{gpus}" for hour, gpus in enumerate(levels)]
    return read_demand("\n".join(rows) + "\n", "test")


def test_percentiles_are_weighted_by_time():
    history = read_demand("time,tenant,class,gpus\n0,a,batch,8\n3600,a,batch,2\n4200,a,batch,2\n", "t")
    # 8 GPUs for an hour, 2 for twenty minutes: half the time is at or under 8, 90 % too; a quarter at 2.
    assert demand_percentile(history, "a", "batch", 0.25) == 2
    assert demand_percentile(history, "a", "batch", 0.90) == 8


def test_an_idle_teams_quota_stays_where_moving_it_would_make_the_others_reclaim_back_and_forth():
    # c never asks: today's 8/8/8 leaves a and b borrowing c's idle quota, never reclaimed; splitting by demand
    # (c gets nothing) sets a's and b's nominal quotas where their swings make one reclaim from the other.
    history = hourly(a=[16, 8, 16, 4], b=[4, 12, 12, 4], c=[0] * 4)
    proposal = propose(history, "batch", {"a": 8, "b": 8, "c": 8}, 24)
    assert proposal.basis == TODAY
    assert proposal.scores[TODAY][1] < proposal.scores["median demand"][1]
    assert {t: q.nominal for t, q in proposal.quotas.items()} == {"a": 8, "b": 8, "c": 8}


def test_quotas_follow_demand_when_today_s_leave_a_team_reclaiming():
    # a always wants 12 of its 4, b its steady 4 of 12: today b's idle 8 are lent to a and reclaimed as b grows.
    history = hourly(a=[12, 12, 12, 12], b=[4, 12, 4, 12])
    proposal = propose(history, "batch", {"a": 4, "b": 12}, 16)
    assert proposal.basis != TODAY
    assert proposal.scores[proposal.basis][1] < proposal.scores[TODAY][1]
    assert sum(q.nominal for q in proposal.quotas.values()) == 16
    assert set(proposal.scores) == {TODAY, *PERCENTILES}


def test_borrowing_is_limited_to_the_peak_beyond_nominal_and_lending_is_not():
    history = hourly(a=[20, 4], b=[0, 4])
    quotas = propose(history, "batch", {"a": 8, "b": 8}, 16).quotas
    assert quotas["a"].borrowing_limit == 20 - quotas["a"].nominal
    assert quotas["b"].borrowing_limit == max(0, 4 - quotas["b"].nominal)
    assert quotas["a"].lending_limit is None


def test_online_teams_never_borrow():
    history = hourly("online", a=[20, 4], b=[0, 4])
    assert all(q.borrowing_limit == 0 for q in propose(history, "online", {"a": 8, "b": 8}, 16).quotas.values())


@given(st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 500), min_size=1), st.integers(0, 2000))
def test_largest_remainder_splits_in_whole_units_that_sum_to_the_total(weights, total):
    split = largest_remainder(weights, total)
    if sum(weights.values()) == 0:
        assert set(split.values()) == {0}
        return
    assert sum(split.values()) == total
    weight = sum(weights.values())
    assert all(abs(split[t] - total * w / weight) < 1 for t, w in weights.items())
