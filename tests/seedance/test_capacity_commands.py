"""`seedance decide` and `seedance prices`, in a copy of the project so the repository is not written."""

import json
import shutil
from pathlib import Path

import pytest

from components.pricing.prices import SNAPSHOT_FILE, SnapshotPriceSource
from seedance import capacity_commands
from seedance.cli import main
from tests.components.markets import FakeLiveSource
from tests.stacks import stack_config

REPO = Path(__file__).resolve().parents[2]
AT = "2026-12-01T12:00:00Z"  # the fake live source's prices were read 5 minutes before this


@pytest.fixture
def project(tmp_path):
    shutil.copy(REPO / "Pulumi.yaml", tmp_path)
    (tmp_path / "stacks").mkdir()
    shutil.copy(REPO / "stacks" / "Pulumi.prod.yaml", tmp_path / "stacks")
    return tmp_path


def decide(project, *extra):
    return main(["decide", "--stack", "prod", "--program", str(project), "--now", AT, *extra])


def test_decide_from_the_snapshot_writes_an_explained_lock(project, capsys):
    assert decide(project, "--source", "snapshot") == 0
    out = capsys.readouterr().out
    lock_file = project / "stacks" / "capacity.prod.lock.json"
    assert f"wrote {lock_file}" in out
    lock = json.loads(lock_file.read_text())
    batch = lock["groups"]["batch"]
    explanation = "\n".join(batch["plan"]["explanation"])
    assert batch["rule"] == "first-plan" and batch["source"] == "snapshot"
    assert "on-demand g6.12xlarge: $4.6016/h = $1.1504/GPU-h" in explanation  # the price and its source
    assert "observed 2026-07-20 13:44Z" in explanation  # when it was observed: the same text on any later day
    # The reason that decides: the snapshot carries no spot prices at all.
    assert "spot: no type eligible: no spot price is known for any of the group's types" in explanation
    assert batch["prices"]["on_demand"]["g6.12xlarge"]["source"].startswith("aws/karpenter-provider-aws@6fc13b5236fd ")
    assert batch["plan"]["on_demand_percentage_above_base"] == 100


def test_deciding_again_without_a_better_plan_leaves_the_lock_alone(project, capsys):
    decide(project, "--source", "snapshot")
    lock_file = project / "stacks" / "capacity.prod.lock.json"
    before = lock_file.read_bytes()
    assert decide(project, "--source", "snapshot") == 0
    assert "every plan kept" in capsys.readouterr().out
    assert lock_file.read_bytes() == before


def test_live_prices_replace_an_on_demand_lock_when_spot_saves(project, capsys, monkeypatch):
    decide(project, "--source", "snapshot")
    monkeypatch.setattr(capacity_commands, "live_price_source", lambda **_: FakeLiveSource(0.3))
    assert decide(project) == 0
    lock = json.loads((project / "stacks" / "capacity.prod.lock.json").read_text())
    assert lock["groups"]["batch"]["rule"] == "saving" and lock["groups"]["batch"]["plan"]["spot_types"]
    assert "saves" in lock["groups"]["batch"]["reasons"][0]


def test_live_asked_for_and_unavailable_fails_and_writes_nothing(project, capsys, monkeypatch):
    """Asking for live prices and getting old ones is not a live decision: exit 2, the lock untouched."""
    decide(project, "--source", "snapshot")
    lock_file = project / "stacks" / "capacity.prod.lock.json"
    before = lock_file.read_text()
    capsys.readouterr()
    monkeypatch.setattr(
        capacity_commands, "live_price_source", lambda **_: FakeLiveSource(fail="pricing endpoint down")
    )
    assert decide(project) == 2
    err = capsys.readouterr().err
    assert "live prices were asked for and are unavailable" in err and "pricing endpoint down" in err
    assert "--allow-fallback" in err and lock_file.read_text() == before


def test_live_outage_with_fallback_allowed_keeps_the_lock(project, capsys, monkeypatch):
    decide(project, "--source", "snapshot")
    capsys.readouterr()
    monkeypatch.setattr(
        capacity_commands, "live_price_source", lambda **_: FakeLiveSource(fail="pricing endpoint down")
    )
    assert decide(project, "--allow-fallback") == 0
    out = capsys.readouterr().out
    assert "note: live prices unavailable (pricing endpoint down)" in out
    assert "keep:stale-prices" in out and "every plan kept" in out


def test_bad_stack_config_exits_2_in_one_line(project, capsys):
    stack_file = project / "stacks" / "Pulumi.prod.yaml"
    text = stack_file.read_text().replace("desired_gpus: 16", "desired_gpus: 2").replace("max_gpus: 64", "max_gpus: 2")
    stack_file.write_text(text)
    assert decide(project, "--source", "snapshot") == 2
    err = capsys.readouterr().err
    assert err.startswith("seedance: error: invalid config seedance-gpu:gpu_node_groups[0].max_gpus = 2")
    assert err.count("\n") == 1


def test_prices_show_names_sources_and_ages(capsys):
    assert main(["prices", "show", "--region", "us-east-1", "--now", AT]) == 0
    out = capsys.readouterr().out
    assert "g5.12xlarge" in out and "133.9 days old" in out and "karpenter-provider-aws@6fc13b5236fd" in out
    assert "spot      (none: unknown prices are never guessed)" in out


def test_prices_refresh_rewrites_the_region_from_live_prices(tmp_path, capsys, monkeypatch):
    snapshot = tmp_path / "prices.json"
    shutil.copy(SNAPSHOT_FILE, snapshot)
    monkeypatch.setattr(capacity_commands, "SnapshotPriceSource", lambda: SnapshotPriceSource(snapshot))
    monkeypatch.setattr(capacity_commands, "live_price_source", lambda **_: FakeLiveSource(0.4))
    assert main(["prices", "refresh", "--region", "us-east-1", "--now", AT]) == 0
    document = json.loads(snapshot.read_text())
    assert document["generated_at"] == AT
    assert len(document["regions"]["us-east-1"]["spot"]) > 0
    assert document["regions"]["us-west-2"] == json.loads(SNAPSHOT_FILE.read_text())["regions"]["us-west-2"]


def edited(lock, change):
    document = json.loads(lock.read_text())
    change(document)
    lock.write_text(json.dumps(document))


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda d: d.clear() or d.update(x=1), "lock_version None"),
        (
            lambda d: d["groups"]["batch"]["plan"].update(on_demand_base_gpus=-2),
            "groups.batch.plan.on_demand_base_gpus = -2: Input should be greater than or equal to 0",
        ),
        (
            lambda d: d["groups"]["batch"]["plan"].update(on_demand_percentage_above_base="most"),
            'groups.batch.plan.on_demand_percentage_above_base = "most"',
        ),
        (lambda d: d["groups"]["online"].pop("plan"), "groups.online.plan = (missing)"),
        (
            lambda d: d["groups"]["batch"]["prices"]["on_demand"]["g6.12xlarge"].update(observed_at="last week"),
            "groups.batch.prices.on_demand.g6.12xlarge.observed_at",
        ),
    ],
)
def test_a_hand_edited_lock_exits_2_naming_the_key(project, capsys, change, expected):
    decide(project, "--source", "snapshot")
    edited(project / "stacks" / "capacity.prod.lock.json", change)
    capsys.readouterr()
    assert decide(project, "--source", "snapshot") == 2  # reads the lock as the program does (read_lock)
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and err.count("\n") == 1


def test_a_lock_that_is_a_list_exits_2(project, capsys):
    (project / "stacks" / "capacity.prod.lock.json").write_text("[]")
    assert decide(project, "--source", "snapshot") == 2
    assert "holds a JSON list, not a lock object" in capsys.readouterr().err


@pytest.mark.parametrize("now", ["yesterday", "2026-12-01T12:00:00", "12/01/2026"])
def test_decide_now_needs_an_iso_time_with_a_zone(project, capsys, now):
    assert main(["decide", "--stack", "prod", "--program", str(project), "--now", now, "--source", "snapshot"]) == 2
    assert f"--now = {now!r}: allowed: an ISO 8601 time with a zone" in capsys.readouterr().err


def test_decide_now_before_the_live_prices_were_read_exits_2(project, capsys, monkeypatch):
    monkeypatch.setattr(capacity_commands, "live_price_source", lambda **_: FakeLiveSource(0.3))
    past = "2026-11-30T00:00:00Z"
    assert main(["decide", "--stack", "prod", "--program", str(project), "--now", past]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"seedance: error: --now = {past} is before the prices used were read (2026-12-01T11:55:00Z")
    assert err.count("\n") == 1 and not (project / "stacks" / "capacity.prod.lock.json").exists()


def test_breaker_without_credentials_is_one_line(monkeypatch, capsys):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    assert main(["breaker", "--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert err == "seedance: error: AWS: Unable to locate credentials\n"


def test_live_source_against_moto_chooses_zones_by_id_and_falls_back_when_the_price_list_api_fails(
    project, capsys, monkeypatch
):
    """The real LivePriceSource on moto: EC2 answers (zones, the stub spot history), the Price List API
    does not (moto implements no pricing.get_products), so decide falls back, as allowed."""
    import boto3
    from moto import mock_aws

    from components.pricing.live import LivePriceSource

    decide(project, "--source", "snapshot")
    lock_file = project / "stacks" / "capacity.prod.lock.json"
    before = lock_file.read_bytes()
    capsys.readouterr()
    with mock_aws():
        source = LivePriceSource(
            clients=lambda service, region: boto3.client(service, region_name=region),
            advisor=lambda _timeout: {"ranges": [], "spot_advisor": {}},
        )
        monkeypatch.setattr(capacity_commands, "live_price_source", lambda **_: source)
        assert decide(project, "--allow-fallback") == 0
    out = capsys.readouterr().out
    assert "note: live prices unavailable (get_products: 404)" in out
    # moto's account names its zones otherwise (us-east-1a is use1-az6): the zones are chosen by ID
    # (use1-az1, -az2, -az4, as in the region table), so the plans are decided again for those names,
    # from the fallback prices (no spot), and the lock says so.
    lock = json.loads(lock_file.read_text())
    assert lock_file.read_bytes() != before
    groups = {g.name: g for g in stack_config("prod").gpu_node_groups}
    for name, entry in lock["groups"].items():
        # A single-zone group decides for the first zone alone.
        assert entry["plan"]["constraints"]["zones"] == list(
            groups[name].launch_zones(["us-east-1b", "us-east-1c", "us-east-1d"])
        )
        assert entry["source"] == "lock+snapshot" and entry["rule"] == "constraint" and not entry["plan"]["spot_types"]
