"""The replay bench's own machinery: market files and the per-regime report (not its figures)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def replay():
    spec = importlib.util.spec_from_file_location("replay_capacity", BENCH / "replay_capacity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def test_market_file_regimes_take_the_defaults_for_omitted_fields(replay):
    regimes = replay.regimes_from_file(BENCH / "markets" / "example.json")
    assert [r.name for r in regimes] == ["weekend-squeeze", "flaky-api"]
    assert regimes[0].drought_start == 0.008 and regimes[0].volatility == replay.Regime.volatility


def test_market_file_with_an_unknown_field_is_refused_by_name(replay, tmp_path):
    market = tmp_path / "market.json"
    market.write_text(json.dumps([{"name": "x", "description": "x", "mean_discount": {}, "volatilty": 0.1}]))
    with pytest.raises(SystemExit, match=r"unknown regime fields \['volatilty'\]"):
        replay.regimes_from_file(market)


def test_report_has_every_policy_and_goal_per_regime_and_class(replay, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["replay_capacity.py", "--market", str(BENCH / "markets" / "example.json"),
                                      "--days", "2", "--seeds", "1"])
    assert replay.main() == 0
    out = capsys.readouterr().out
    for regime in ("weekend-squeeze", "flaky-api"):
        assert f"== {regime}:" in out
        for group in replay.GROUPS:
            assert sum(line.startswith(("ok   ", "MISS ")) and f"{regime}: {group}:" in line
                       for line in out.splitlines()) == 4
    assert all(policy in out for policy in replay.POLICIES)


def test_a_market_where_spot_never_undercuts_on_demand_keeps_the_planner_on_on_demand(replay):
    # Spot at 1.5 x on-demand is capped at on-demand, as AWS caps it.
    pricey = replay.Regime("pricey", "spot at on-demand", {"g4dn": 1.5, "g5": 1.5, "g6": 1.5, "g6e": 1.5},
                           volatility=0.0, jump_rate=0.0, drought_start=0.0)
    ledgers, _ = replay.replay(pricey, 1, 3, "batch")
    assert ledgers["planner"].cost == pytest.approx(ledgers["all on-demand"].cost)
    assert ledgers["planner"].changes == 0 and ledgers["planner"].interruptions == 0


@pytest.mark.parametrize("regime", ["scarce", "long-droughts"])
def test_the_oracle_is_a_lower_bound_for_every_cap_keeping_policy(replay, regime):
    for group in replay.GROUPS:
        ledgers, _ = replay.replay(replay.REGIMES[regime], 7, 4, group)
        oracle = ledgers["oracle"].cost
        assert all(ledger.cost >= oracle for ledger in ledgers.values() if ledger.cap_violations == 0)


def test_without_the_placement_gate_online_runs_spot_when_every_zone_scores_low(replay, monkeypatch):
    observed = replay.observed_book

    def scored_low(market, now, request):
        book = observed(market, now, request)
        book.placement = {key: replay.PlacementScore(2, now, "test") for key in book.placement}
        return book

    monkeypatch.setattr(replay, "observed_book", scored_low)
    gated, _ = replay.replay(replay.REGIMES["default"], 3, 2, "online")
    assert gated["planner"].cost == pytest.approx(gated["all on-demand"].cost)
    ungated, _ = replay.replay(replay.REGIMES["default"], 3, 2, "online", placement_gate=False)
    assert ungated["planner"].cost < ungated["all on-demand"].cost


def test_a_zone_scores_by_how_much_of_a_question_its_free_pools_can_host(replay):
    spec = replay.GROUPS["online"]
    group = replay.GroupRequest("online", replay.CLASSES["online"], spec["types"], replay.ZONES, 0,
                                spec["desired"], spec["max_gpus"])
    whole, part = replay.placement_questions(group)
    market = replay.Market(replay.REGIMES["default"], 5, list(spec["types"]))
    zone = replay.ZONES[0]

    def scores_with(free: int) -> tuple[int, int]:
        for index, instance_type in enumerate(spec["types"]):
            market.drought[(instance_type, zone)] = index >= free
        book = replay.observed_book(market, replay.START, group)
        return book.placement_score(whole, zone).score, book.placement_score(part, zone).score

    scores = [scores_with(free) for free in range(len(spec["types"]) + 1)]
    assert scores[0] == (1, 1) and scores[-1] == (10, 10)  # no capacity: "not likely"; every pool free: the top
    # Each free pool hosts a zone's part: one is enough for the part, the whole share needs them all.
    assert [part for _, part in scores[1:]] == [10, 10, 10]
    assert [whole for whole, _ in scores] == sorted(set(whole for whole, _ in scores))


def test_a_dry_zone_sends_its_part_to_a_pool_with_room_in_another_zone(replay):
    types = replay.GROUPS["online"]["types"]
    market = replay.Market(replay.REGIMES["default"], 5, list(types))
    dry = replay.ZONES[0]
    for instance_type in types:
        market.drought[(instance_type, dry)] = True
    placed, left = replay.allocate(types, market)
    assert left == 0 and len(placed) == len(replay.ZONES)
    assert all(zone != dry for _, (_, zone) in placed) and len({pool for _, pool in placed}) == len(placed)
    # One listed type: each other zone's only pool already hosts that zone's part, so the dry zone's waits.
    placed, left = replay.allocate(types[:1], market)
    assert left == 1 and len(placed) == len(replay.ZONES) - 1
