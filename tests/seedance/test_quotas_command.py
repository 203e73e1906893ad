"""`seedance quotas plan`: the replays and the proposal from a demand CSV against a stack's teams and prices,
its JSON as the issue names it, and bad input refused in one line with exit code 2."""

import json
from datetime import UTC, datetime

import pytest

from components.stack.capacity import RunMode, table_zones
from components.stack.derivation import derive
from components.tenancy.demand import read_demand
from seedance.cli import main
from seedance.quotas_command import class_prices
from tests.stacks import REPO, stack_config

HELIOS = REPO / "bench" / "data" / "helios-earth-2020-05-hourly.csv"
FIELDS = {
    "capacity_gpu_hours",
    "gpu_hours_served",
    "idle_while_waiting_gpu_hours",
    "wait_p50_minutes_within_nominal",
    "wait_p95_minutes_within_nominal",
    "preemptions",
    "usd_per_useful_gpu_hour",
}


def _demand(tmp_path, text):
    path = tmp_path / "demand.csv"
    path.write_text(text)
    return path


def test_a_public_history_is_replayed_per_namespace_and_pooled_and_the_json_has_the_named_fields(tmp_path, capsys):
    out = tmp_path / "quotas.json"
    assert main(["quotas", "plan", "--stack", "prod", "--demand", str(HELIOS), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Per-namespace quotas (today)" in printed and "Cohort, proposed" in printed
    report = json.loads(out.read_text())
    replays = report["replays"]
    assert set(replays) == {"per_namespace", "cohort"}
    for replayed in replays.values():
        assert FIELDS <= set(replayed)
        assert all(FIELDS <= set(team) for team in replayed["teams"].values())
    history = read_demand(HELIOS.read_text(), "h")
    quotas = {"video-ml": 16} | {
        team: max(q for q in history.quotas[(team, "batch")] if q) for team, _k in history.demand
    }
    # Capacity: the sum of the teams' quotas (the stack's video-ml and the trace's own VCs).
    assert report["proposal"]["capacity"] == {"batch": sum(quotas.values())}
    assert replays["per_namespace"]["capacity_gpu_hours"] == pytest.approx(sum(quotas.values()) * history.total_hours)
    # Pooling serves more and leaves nothing idle while a team waits; per namespace it does not.
    assert replays["cohort"]["gpu_hours_served"] > replays["per_namespace"]["gpu_hours_served"]
    assert replays["cohort"]["idle_while_waiting_gpu_hours"] == 0
    assert replays["per_namespace"]["idle_while_waiting_gpu_hours"] > 0
    proposed = report["proposal"]["teams"]
    assert sum(team["batch"]["nominal"] for team in proposed.values()) == sum(quotas.values())
    assert report["proposal"]["basis"]["batch"] in printed


def test_prices_are_the_stacks_own_plans(tmp_path, capsys):
    out = tmp_path / "quotas.json"
    demand = _demand(tmp_path, "time,tenant,class,gpus\n0,video-ml,batch,8\n")
    assert main(["quotas", "plan", "--stack", "prod", "--demand", str(demand), "--json", str(out)]) == 0
    served = json.loads(out.read_text())["replays"]["per_namespace"]

    config = stack_config("prod")
    plans = derive(
        config, "prod", table_zones(config), REPO / "stacks", datetime.now(UTC), RunMode.offline_plan()
    ).capacity.plans
    usd, committed = class_prices(config, plans)["batch"]
    paid = max(committed, 8)  # the committed GPUs, or more while serving
    assert served["usd_per_useful_gpu_hour"] == pytest.approx(paid * usd / 8, rel=1e-3)


def test_capacity_can_be_given_per_class(tmp_path, capsys):
    out = tmp_path / "quotas.json"
    demand = _demand(tmp_path, "time,tenant,class,gpus\n0,video-ml,batch,20\n3600,video-ml,batch,20\n")
    assert (
        main(
            ["quotas", "plan", "--stack", "prod", "--demand", str(demand), "--capacity", "batch=8", "--json", str(out)]
        )
        == 0
    )
    report = json.loads(out.read_text())
    assert report["proposal"]["capacity"] == {"batch": 8}
    assert report["replays"]["cohort"]["gpu_hours_served"] == 8 * 2


@pytest.mark.parametrize(
    "text, extra, named",
    [
        ("time,tenant,class,gpus\n0,stranger,batch,1\n", [], "tenant 'stranger' is not a team of this stack"),
        ("time,tenant,class,gpus\n0,video-ml,batch,x\n", [], "line 2: gpus 'x'"),
        ("time,tenant,class,gpus\n0,video-ml,batch,1\n", ["--capacity", "gpu=4"], "--capacity 'gpu=4': allowed"),
        ("time,tenant,class,gpus\n0,video-ml,batch,1\n", ["--capacity", "batch=0"], "N from 1 to"),
        ("time,tenant,class,gpus\n0,video-ml,online,1\n", [], "the online teams' quotas sum to 0 GPUs"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, text, extra, named):
    demand = _demand(tmp_path, text)
    assert main(["quotas", "plan", "--stack", "prod", "--demand", str(demand), *extra]) == 2
    error = capsys.readouterr().err
    assert named in error
    assert error.count("\n") == 1 and "Traceback" not in error


def test_a_missing_demand_file_is_named(tmp_path, capsys):
    assert main(["quotas", "plan", "--stack", "prod", "--demand", str(tmp_path / "none.csv")]) == 2
    assert "demand history not found" in capsys.readouterr().err
