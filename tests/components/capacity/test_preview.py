"""The decision's worth before any account is read (issue 38, item 5): at the Spot Instance Advisor's
bundled reference discount the planner would run spot; the decision from a snapshot still runs none."""

import json
from datetime import UTC, datetime

import pytest

from components.capacity.planner import plan_capacity
from components.capacity.preview import ADVISOR_SNAPSHOT, Preview, advisor_book, reference_preview
from components.catalog.instance_types import gpu_instance_types
from components.catalog.regions import regions
from components.pricing.advisor import interruption_frequencies
from components.pricing.prices import SnapshotPriceSource
from tests.components.markets import request

NOW = datetime(2026, 12, 5, tzinfo=UTC)
DOCUMENT = json.loads(ADVISOR_SNAPSHOT.read_text())


def test_the_bundled_advisor_data_is_the_feeds_format_dated_and_licensed():
    assert DOCUMENT["_source"]["observed"] == "2025-06-28" and DOCUMENT["_source"]["licence"] == "Apache-2.0"
    assert (ADVISOR_SNAPSHOT.parent / "spot_advisor.NOTICE.md").exists()
    for region in regions():
        linux = DOCUMENT["spot_advisor"][region]["Linux"]
        assert linux and set(linux) <= set(gpu_instance_types())
        assert interruption_frequencies(DOCUMENT, region, sorted(linux), NOW)  # the live parser reads it


def test_the_preview_prices_spot_at_on_demand_less_the_advisors_saving_in_every_zone():
    book = SnapshotPriceSource().book("us-east-1")
    group = request("batch", ("g6.12xlarge", "g5.12xlarge"))
    preview_book = advisor_book(book, group, DOCUMENT, NOW)
    saving = DOCUMENT["spot_advisor"]["us-east-1"]["Linux"]["g6.12xlarge"]["s"]
    for zone in group.zones:
        price = preview_book.spot_price("g6.12xlarge", zone)
        assert price.usd_per_hour == pytest.approx(
            book.on_demand_price("g6.12xlarge").usd_per_hour * (1 - saving / 100)
        )
        assert price.observed_at == NOW


def test_the_preview_shows_spot_and_its_worth_where_the_snapshot_decision_runs_none():
    book = SnapshotPriceSource().book("us-east-1")
    group = request("batch", ("g6.12xlarge", "g5.12xlarge", "g6e.12xlarge"))
    assert plan_capacity(group, book, NOW).spot_types == ()  # the snapshot has no spot: no spot is decided
    preview = reference_preview(group, book, NOW)
    assert preview.spot_share > 0.5 and preview.expected_usd_per_hour < preview.all_on_demand_usd_per_hour
    assert preview.line().startswith(
        "reference preview (Spot Instance Advisor, 2025-06-28; not a decision): at the "
        "advisor's average discount this group would run "
    )


def test_a_class_that_needs_placement_scores_previews_no_spot_and_says_why():
    preview = reference_preview(
        request("online", ("g6.xlarge", "g5.xlarge", "g6e.xlarge"), desired=6, max_gpus=24),
        SnapshotPriceSource().book("us-east-1"),
        NOW,
    )
    assert preview.spot_share == 0 and "placement scores unknown" in preview.line()


def test_the_preview_book_reads_as_current_and_leaves_a_type_without_advice_off_spot():
    book = SnapshotPriceSource().book("us-east-1")
    group = request("batch", ("g6.12xlarge", "g4dn.12xlarge"))
    document = json.loads(json.dumps(DOCUMENT))
    del document["spot_advisor"]["us-east-1"]["Linux"]["g4dn.12xlarge"]
    preview_book = advisor_book(book, group, document, NOW)
    assert all(p.observed_at == NOW for p in preview_book.on_demand.values())
    assert preview_book.spot_price("g4dn.12xlarge", group.zones[0]) is None
    band = DOCUMENT["spot_advisor"]["us-east-1"]["Linux"]["g6.12xlarge"]["r"]
    label = next(r["label"] for r in DOCUMENT["ranges"] if r["index"] == band)
    assert preview_book.interruption_frequency("g6.12xlarge").source == f"Spot Instance Advisor, band {label}"


def test_the_preview_line_says_the_share_the_cost_and_the_saving():
    assert Preview("batch", 0.8, 9.66, 18.41, "2025-06-28", "").line() == (
        "reference preview (Spot Instance Advisor, 2025-06-28; not a decision): at the advisor's average discount "
        "this group would run 80% spot for about $9.66/h (-48% vs $18.41/h all on-demand)"
    )
    assert Preview("online", 0.0, 3.6, 3.6, "2025-06-28", "placement scores unknown").line() == (
        "reference preview (Spot Instance Advisor, 2025-06-28; not a decision): no spot even at the advisor's "
        "discount (placement scores unknown)"
    )
    assert Preview("empty", 0.0, 0.0, 0.0, "d", "x").saving == 0.0


def test_the_preview_uses_the_stacks_settings_names_its_group_and_the_advisors_date():
    from components.capacity.plan import PlannerSettings

    book = SnapshotPriceSource().book("us-east-1")
    group = request("batch", ("g6.12xlarge", "g5.12xlarge"), name="train")
    running = reference_preview(group, book, NOW)
    assert (running.group, running.why_none) == ("train", "") and running.spot_share > 0
    strict = reference_preview(group, book, NOW, PlannerSettings(spot_price_ratio=0.1))  # the source's guard, tight
    assert strict.spot_share == 0 and strict.why_none == "only 0 eligible types, 1 required"
    preview_book = advisor_book(book, group, DOCUMENT, NOW)
    saving = DOCUMENT["spot_advisor"]["us-east-1"]["Linux"]["g5.12xlarge"]["s"]
    assert preview_book.region == "us-east-1"
    assert preview_book.spot_price("g5.12xlarge", group.zones[0]).source == (
        f"Spot Instance Advisor average saving {saving}% (2025-06-28)"
    )


def test_a_region_or_a_first_type_the_advisor_lacks_leaves_only_those_off_spot():
    book = SnapshotPriceSource().book("us-east-1")
    document = json.loads(json.dumps(DOCUMENT))
    del document["spot_advisor"]["us-east-1"]["Linux"]["g6.12xlarge"]
    group = request("batch", ("g6.12xlarge", "g5.12xlarge"))
    preview_book = advisor_book(book, group, document, NOW)
    assert preview_book.spot_price("g6.12xlarge", group.zones[0]) is None
    assert preview_book.spot_price("g5.12xlarge", group.zones[0]) is not None
    del document["spot_advisor"]["us-east-1"]
    assert advisor_book(book, group, document, NOW).spot == {}


def test_a_region_whose_on_demand_prices_are_assumed_says_so_and_what_reads_them():
    """us-west-2's snapshot prices are us-east-1's copied (no licensed us-west-2 table was found): the
    preview built on them says so; us-east-1's, generated from Karpenter's table, need no caveat."""
    group = request("batch", ("g6.12xlarge", "g5.12xlarge"))
    west = reference_preview(group, SnapshotPriceSource().book("us-west-2"), NOW)
    assert west.assumed_in == "us-west-2" and west.line().endswith(
        "; us-west-2's on-demand prices are assumed, unverified: "
        "`seedance prices refresh --region us-west-2` reads them"
    )
    east = reference_preview(group, SnapshotPriceSource().book("us-east-1"), NOW)
    assert east.assumed_in == "" and east.line().endswith("all on-demand)")
    assert (
        Preview("online", 0.0, 3.6, 3.6, "2025-06-28", "placement scores unknown", "us-west-2")
        .line()
        .endswith(
            "(placement scores unknown); us-west-2's on-demand prices are assumed, unverified: "
            "`seedance prices refresh --region us-west-2` reads them"
        )
    )
