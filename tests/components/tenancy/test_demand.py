"""A demand history read from a user's CSV: values held until the next row, the end one step on, and every
malformed row refused in one line naming it."""

import pytest

from components.tenancy.demand import MAX_DEMAND_BYTES, MAX_GPUS, DemandError, read_demand

HEADER = "time,tenant,class,gpus\n"


def test_a_team_keeps_its_value_until_its_next_row_and_asks_nothing_before_its_first():
    history = read_demand(
        HEADER + "2026-01-01T00:00:00Z,a,batch,4\n2026-01-01T02:00:00Z,a,batch,1\n2026-01-01T01:00:00Z,b,batch,3\n",
        "f",
    )
    assert history.demand[("a", "batch")] == (4, 4, 1)
    assert history.demand[("b", "batch")] == (0, 3, 3)
    assert [history.hours(i) for i in range(history.intervals)] == [1.0, 1.0, 1.0]  # the last hour counts


def test_the_end_is_one_smallest_step_after_the_last_time_and_irregular_steps_keep_their_lengths():
    history = read_demand(HEADER + "0,a,batch,1\n600,a,batch,2\n4200,a,batch,3\n", "f")
    assert history.times == (0.0, 600.0, 4200.0, 4800.0)
    assert history.total_hours == pytest.approx(4800 / 3600)


def test_times_without_a_zone_are_utc_and_zones_are_honoured():
    utc = read_demand(HEADER + "2026-01-01T00:00:00,a,batch,1\n", "f")
    zoned = read_demand(HEADER + "2026-01-01T01:00:00+01:00,a,batch,1\n", "f")
    assert utc.times[0] == zoned.times[0]


def test_quotas_are_held_like_demand_and_optional_per_row():
    history = read_demand("time,tenant,class,gpus,quota\n0,a,batch,1,8\n3600,a,batch,2,\n0,b,online,1,\n", "f")
    assert history.quotas[("a", "batch")] == (8, None)
    assert history.quotas[("b", "online")] == (None, None)
    assert history.classes() == ["batch", "online"]
    assert history.teams("batch") == ["a"]


@pytest.mark.parametrize(
    "text, named",
    [
        ("time,team,class,gpus\n0,a,batch,1\n", "line 1: header"),
        (HEADER, "no rows"),
        (HEADER + "0,a,batch\n", "line 2: 3 columns"),
        (HEADER + "0,a,training,1\n", "line 2: class 'training'; allowed: batch, online"),
        (HEADER + "0,a,batch,-1\n", "line 2: gpus '-1'"),
        (HEADER + "0,a,batch,1.5\n", "line 2: gpus '1.5'"),
        (HEADER + f"0,a,batch,{MAX_GPUS + 1}\n", f"gpus '{MAX_GPUS + 1}'; allowed: a whole number of GPUs from 0"),
        (HEADER + "0,a b,batch,1\n", "line 2: tenant 'a b'"),
        (HEADER + "0,,batch,1\n", "line 2: tenant ''"),
        (HEADER + "0,Team-A,batch,1\n", "line 2: tenant 'Team-A'; allowed: a team's name"),
        (
            HEADER + "0,a,batch,1\n2026-01-01T00:00:00Z,a,batch,1\n",
            "line 3: time '2026-01-01T00:00:00Z'; allowed: seconds",
        ),
        (HEADER + "2026-01-01T00:00:00Z,a,batch,1\n5,a,batch,1\n", "line 3: time '5'; allowed: an ISO 8601 time"),
        (HEADER + "inf,a,batch,1\n", "allowed: a finite time"),
        (HEADER + "0,a,batch,1\n0,a,batch,2\n", "line 3: a second row for a batch at the same time"),
        ("time,tenant,class,gpus,quota\n0,a,batch,1,x\n", "line 2: quota 'x'"),
    ],
)
def test_a_malformed_history_is_refused_naming_the_line_and_what_is_allowed(text, named):
    with pytest.raises(DemandError) as raised:
        read_demand(text, "demand.csv")
    assert str(raised.value).startswith("demand.csv: ")
    assert named in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_history_larger_than_the_bound_is_refused_before_it_is_parsed():
    with pytest.raises(DemandError, match="larger than"):
        read_demand(HEADER + "0,a,batch,1\n" * (MAX_DEMAND_BYTES // 10), "f")
