"""The capacity lock (components/capacity/lock.py): what `seedance decide` writes and the program reads back,
refused by name when a hand edit breaks it, and its prices a source that never passes for fresh."""

import json
from dataclasses import replace
from datetime import timedelta

import pytest

from components.capacity.lock import (
    LOCK_VERSION,
    LockError,
    LockPriceSource,
    build_lock,
    lock_path,
    read_lock,
    render_lock,
    settings_to_json,
)
from components.capacity.plan import PlannerSettings
from components.pricing.prices import PriceSourceError
from components.stack.capacity import decide_stack
from tests.components.markets import NOW, ZONES, FakeLiveSource
from tests.stacks import stack_config


@pytest.fixture(scope="module")
def decided():
    config = stack_config("prod")
    result = decide_stack(config, ZONES, [FakeLiveSource(0.3)], [], {}, NOW)
    return config, result


def written(tmp_path, lock):
    path = lock_path(tmp_path, "prod")
    path.write_text(render_lock(lock))
    return path


def test_a_lock_reads_back_as_written(tmp_path, decided):
    config, result = decided
    lock = build_lock(
        None, "prod", config.region, NOW, result.source, config.capacity.settings(), result.decisions, result.book
    )
    path = written(tmp_path, lock)
    assert path.name == "capacity.prod.lock.json"
    read = read_lock(path)
    written_groups = json.loads(render_lock(lock))["groups"]
    assert {name: {k: v for k, v in entry.items() if k != "prices"} for name, entry in read.groups.items()} == {
        name: {k: v for k, v in entry.items() if k != "prices"} for name, entry in written_groups.items()
    }
    # Prices read back with the interruption table a lock without one defaults to.
    assert read.groups["batch"]["prices"] == {"interruptions": {}, **written_groups["batch"]["prices"]}
    assert (read.stack, read.region, read.updated_at) == ("prod", "us-east-1", NOW)
    assert read.to_json()["lock_version"] == LOCK_VERSION == 1
    assert read.plans() == {d.plan.group: d.plan for d in result.decisions}
    entry = read.groups["batch"]
    assert (entry["decided_at"], entry["source"]) == ("2026-12-01T12:00:00Z", "live")
    assert entry["rule"] == next(d.rule for d in result.decisions if d.plan.group == "batch")
    # Each group's prices are its own types and zones only.
    assert {key.split("@")[0] for key in entry["prices"]["spot"]} == set(entry["plan"]["instance_types"])


def test_a_kept_group_keeps_its_entry_as_decided_and_a_changed_one_is_rewritten(decided):
    config, result = decided
    first = build_lock(
        None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
    )
    later = NOW + timedelta(days=1)
    kept = [replace(d, changed=False) for d in result.decisions]
    assert (
        build_lock(first, "prod", config.region, later, "live", config.capacity.settings(), kept, result.book).groups
        == first.groups
    )
    changed = build_lock(
        first, "prod", config.region, later, "snapshot", config.capacity.settings(), result.decisions, result.book
    )
    assert {e["decided_at"] for e in changed.groups.values()} == {"2026-12-02T12:00:00Z"}
    assert {e["source"] for e in changed.groups.values()} == {"snapshot"}
    # Without a previous lock even an unchanged decision is written.
    assert (
        build_lock(None, "prod", config.region, later, "live", config.capacity.settings(), kept, result.book).groups[
            "batch"
        ]["decided_at"]
        == "2026-12-02T12:00:00Z"
    )


def test_settings_are_written_in_hours():
    values = settings_to_json(
        PlannerSettings(max_price_age=timedelta(hours=6), max_interruption_data_age=timedelta(days=35))
    )
    assert values["max_price_age_hours"] == 6 and values["max_interruption_data_age_hours"] == 840
    assert "max_price_age" not in values and "max_interruption_data_age" not in values


def test_the_locks_prices_keep_their_ages_and_answer_for_its_region_only(tmp_path, decided):
    config, result = decided
    lock = read_lock(
        written(
            tmp_path,
            build_lock(
                None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
            ),
        )
    )
    book = lock.price_book()
    price = book.spot[("g6.xlarge", "us-east-1a")]
    # the age it was read with (the fake source's prices are five minutes old), not the lock's time
    assert price == result.book.spot[("g6.xlarge", "us-east-1a")] and price.observed_at < NOW
    assert book.region == config.region
    source = LockPriceSource(lock)
    assert source.name == "lock"
    only = source.prices(config.region, ["g6.xlarge"], ["us-east-1a"])
    assert set(only.spot) == {("g6.xlarge", "us-east-1a")} and set(only.on_demand) == {"g6.xlarge"}
    with pytest.raises(PriceSourceError, match=r"^the lock holds prices for us-east-1, not us-west-2$"):
        source.prices("us-west-2", ["g6.xlarge"], ["us-east-1a"])


def test_the_newest_price_of_each_pool_wins_across_groups(tmp_path, decided):
    config, result = decided
    lock = build_lock(
        None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
    )
    groups = json.loads(json.dumps(lock.groups))
    older = groups["online"]["prices"]["on_demand"]["g6.xlarge"]
    newer = groups["batch"]["prices"]["on_demand"].setdefault("g6.xlarge", dict(older))
    older.update(usd_per_hour=1.0, observed_at="2026-11-30T12:00:00Z")
    newer.update(usd_per_hour=2.0, observed_at="2026-12-01T12:00:00Z")
    assert replace(lock, groups=groups).price_book().on_demand["g6.xlarge"].usd_per_hour == 2.0


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "[]",
            "holds a JSON list, not a lock object; restore it from git, or delete it and run `seedance decide` again",
        ),
        ('{"lock_version": 2}', "has lock_version 2; this package reads 1"),
        ("{}", "has lock_version None; this package reads 1"),
    ],
)
def test_a_lock_of_another_shape_or_version_is_refused_by_name(tmp_path, text, message):
    path = tmp_path / "capacity.prod.lock.json"
    path.write_text(text)
    with pytest.raises(LockError) as error:
        read_lock(path)
    assert str(error.value) == f"{path} {message}"


def test_a_hand_edit_names_the_key_the_value_and_how_many_more(tmp_path, decided):
    config, result = decided
    document = json.loads(
        render_lock(
            build_lock(
                None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
            )
        )
    )
    path = tmp_path / "capacity.prod.lock.json"
    document["groups"]["batch"]["plan"]["on_demand_percentage_above_base"] = 101
    path.write_text(json.dumps(document))
    with pytest.raises(LockError) as error:
        read_lock(path)
    assert str(error.value) == (
        f"{path}: groups.batch.plan.on_demand_percentage_above_base = 101: Input should be "
        "less than or equal to 100; locks are written by `seedance decide`, not by hand: "
        "restore it from git, or delete it and decide again"
    )
    del document["groups"]["batch"]["plan"]["explanation"]
    path.write_text(json.dumps(document))
    with pytest.raises(LockError) as error:
        read_lock(path)
    assert str(error.value).startswith(f"{path}: groups.batch.plan.") and " (and 1 more); locks are" in str(error.value)
    document["groups"]["batch"]["plan"]["on_demand_percentage_above_base"] = 8
    path.write_text(json.dumps(document))
    with pytest.raises(LockError, match=r": groups\.batch\.plan\.explanation = \(missing\): Field required;"):
        read_lock(path)


def test_a_value_shown_in_the_error_is_cut_at_80_characters(tmp_path, decided):
    config, result = decided
    document = json.loads(
        render_lock(
            build_lock(
                None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
            )
        )
    )
    document["groups"]["batch"]["plan"]["on_demand_base_gpus"] = "x" * 200
    path = tmp_path / "capacity.prod.lock.json"
    path.write_text(json.dumps(document))
    with pytest.raises(LockError) as error:
        read_lock(path)
    assert f"on_demand_base_gpus = {json.dumps('x' * 200)[:80]}: " in str(error.value)


def test_an_unreadable_lock_file_is_a_lock_error(tmp_path):
    with pytest.raises(LockError, match="capacity lock"):
        read_lock(tmp_path / "capacity.prod.lock.json")


def test_the_lock_is_written_sorted_and_indented_for_review_and_keeps_its_notes_and_settings(tmp_path, decided):
    """A lock is reviewed as a diff in a pull request: keys sorted, two-space indent, one line at its end."""
    config, result = decided
    result.book.notes.append("placement scores: not read (test)")
    try:
        lock = build_lock(
            None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
        )
    finally:
        result.book.notes.pop()
    assert lock.notes == ("placement scores: not read (test)",)
    text = render_lock(lock)
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
    assert text.startswith('{\n  "groups": {\n    "batch": {') and text.index('"notes"') < text.index('"region"')
    read = read_lock(written(tmp_path, lock))
    assert read.notes == ("placement scores: not read (test)",)
    assert read.settings == settings_to_json(config.capacity.settings())


def test_a_missing_lock_file_is_named_as_the_capacity_lock(tmp_path):
    path = tmp_path / "capacity.prod.lock.json"
    with pytest.raises(LockError) as error:
        read_lock(path)
    assert str(error.value) == f"{path}: capacity lock not found"
