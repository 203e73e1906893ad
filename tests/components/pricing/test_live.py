"""The live price source against realistic API responses replayed by botocore's Stubber."""

import http.client
import json
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from components.capacity.holdings import allocate_holdings
from components.capacity.planner import decide
from components.pricing.advisor import band_upper_edge
from components.pricing.live import LivePriceSource, on_demand_usd_per_hour, pricing_endpoint_region
from components.pricing.prices import PlacementRequest, PriceSourceError, SnapshotPriceSource
from components.pricing.reserved import ReservedHolding, effective_hourly_rate
from components.stack.capacity import read_prices
from tests.components.markets import request

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aws"
NOW = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)
TYPES = ["g4dn.12xlarge", "g5.12xlarge", "g6.12xlarge"]
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]


def fixture(name: str) -> dict:
    document = json.loads((FIXTURES / name).read_text())
    for record in document.get("SpotPriceHistory", []):
        record["Timestamp"] = datetime.fromisoformat(record["Timestamp"])
    return document


def price_list(instance_type: str) -> dict:
    return {"PriceList": [json.dumps(fixture("pricing_products.json")[instance_type])], "FormatVersion": "aws_v1"}


class Clients:
    """Real boto3 clients (no credentials needed) whose calls are answered by Stubbers."""

    def __init__(self):
        self.ec2 = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
        self.pricing = boto3.client(
            "pricing", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
        )
        self.ec2_stub, self.pricing_stub = Stubber(self.ec2), Stubber(self.pricing)
        self.ec2_stub.activate()
        self.pricing_stub.activate()

    def __call__(self, service, region):
        assert region == "us-east-1"
        return self.ec2 if service == "ec2" else self.pricing

    def spot_pages(self):
        params = {
            "InstanceTypes": TYPES,
            "ProductDescriptions": ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
            "StartTime": NOW,
        }
        self.ec2_stub.add_response("describe_spot_price_history", fixture("spot_price_history_page1.json"), params)
        self.ec2_stub.add_response(
            "describe_spot_price_history",
            fixture("spot_price_history_page2.json"),
            {**params, "NextToken": fixture("spot_price_history_page1.json")["NextToken"]},
        )

    def on_demand(self):
        for instance_type in TYPES:
            self.pricing_stub.add_response(
                "get_products", price_list(instance_type), {"ServiceCode": "AmazonEC2", "Filters": ANY}
            )

    def placement(self, capacity=12, score=None, first=True):
        """Scores as recorded, or `score` in every zone; the zone names are read before the first question."""
        answer = fixture("spot_placement_scores.json")
        if score is not None:
            answer["SpotPlacementScores"] = [{**entry, "Score": score} for entry in answer["SpotPlacementScores"]]
        if first:
            self.ec2_stub.add_response("describe_availability_zones", fixture("availability_zones.json"))
        self.ec2_stub.add_response(
            "get_spot_placement_scores",
            answer,
            {
                "InstanceTypes": TYPES,
                "TargetCapacity": capacity,
                "TargetCapacityUnitType": "units",
                "SingleAvailabilityZone": True,
                "RegionNames": ["us-east-1"],
            },
        )

    def done(self):
        self.ec2_stub.assert_no_pending_responses()
        self.pricing_stub.assert_no_pending_responses()


class FakeTime:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def source(clients, time=None, budget=90.0):
    time = time or FakeTime()
    return LivePriceSource(
        clients,
        budget_seconds=budget,
        clock=lambda: NOW,
        sleep=time.sleep,
        monotonic=time.monotonic,
        advisor=lambda _timeout: fixture("spot_advisor.json"),
    )


def test_reads_every_page_keeps_the_dearer_description_and_only_the_groups_zones():
    clients = Clients()
    clients.spot_pages()
    clients.on_demand()
    clients.placement()
    book = source(clients).prices("us-east-1", TYPES, ZONES, [PlacementRequest(tuple(TYPES), 12)])
    clients.done()
    assert len(book.spot) == 9  # 3 types x 3 zones; us-east-1d is not a zone of the group
    price = book.spot_price("g5.12xlarge", "us-east-1c")
    assert price.usd_per_hour == pytest.approx(5.672 * 0.352) and price.observed_at == NOW
    assert "Linux/UNIX, in effect since 2026-12-01T10:17Z" in price.source
    assert book.on_demand_price("g4dn.12xlarge").usd_per_hour == pytest.approx(3.912)
    assert book.on_demand_price("g4dn.12xlarge").source == "AWS Price List API (us-east-1)"
    scores = [book.placement_score(PlacementRequest(tuple(TYPES), 12), z).score for z in ZONES]
    assert scores == [9, 8, 7]  # mapped from zone ids through this account's zone names
    bands = {t: (f.per_month, f.source) for t, f in book.interruptions.items()}
    assert bands == {
        "g4dn.12xlarge": (0.10, "Spot Instance Advisor, band 5-10%"),
        "g5.12xlarge": (1.0, "Spot Instance Advisor, band >20%"),
        "g6.12xlarge": (0.05, "Spot Instance Advisor, band <5%"),
    }


@pytest.mark.parametrize("label, edge", [("<5%", 0.05), ("5-10%", 0.10), ("15-20%", 0.20), (">20%", 1.0), ("?", 1.0)])
def test_a_band_counts_at_its_upper_edge_and_the_open_band_as_every_instance(label, edge):
    assert band_upper_edge(label) == edge


def raises(error):
    def advisor(_timeout):
        raise error

    return advisor


def spot_advisor_with(**changes):
    return lambda _timeout: {**fixture("spot_advisor.json"), **changes}


@pytest.mark.parametrize(
    "advisor, note",
    [
        (raises(OSError("Name or service not known")), "OSError: Name or service not known"),
        (raises(http.client.IncompleteRead(b"{")), "IncompleteRead: IncompleteRead(1 bytes read)"),
        (raises(json.JSONDecodeError("Expecting value", "<html>", 0)), "JSONDecodeError: Expecting value"),
        (lambda _timeout: [], "ValueError: document: Input should be a valid dictionary"),
        (spot_advisor_with(spot_advisor=[]), "ValueError: spot_advisor: Input should be a valid dictionary"),
        (
            spot_advisor_with(spot_advisor={"us-east-1": {"Linux": {"g5.12xlarge": {"r": "high"}}}}),
            "ValueError: spot_advisor.us-east-1.Linux.g5.12xlarge.r: Input should be a valid integer",
        ),
        (spot_advisor_with(ranges=[]), "ValueError: g4dn.12xlarge: band 1 is not among the advisor's ranges"),
    ],
)
def test_advisor_data_unavailable_or_malformed_leaves_frequencies_unknown_with_a_note(advisor, note):
    clients = Clients()
    clients.spot_pages()
    clients.on_demand()
    live = LivePriceSource(clients, clock=lambda: NOW, advisor=advisor)
    book = live.prices("us-east-1", TYPES, ZONES)
    assert book.interruptions == {} and len(book.spot) == 9
    assert len(book.notes) == 1 and book.notes[0].startswith(f"Spot Instance Advisor data unavailable ({note}")
    assert "worst band assumed" in "\n".join(decide(request(types=TYPES), book, NOW).plan.explanation)


@pytest.mark.parametrize("budget, timeout", [(90.0, 20.0), (5.0, 5.0), (0.0, None)])
def test_the_advisor_download_fits_in_what_is_left_of_the_time_budget(budget, timeout):
    clients = Clients()
    clients.spot_pages()
    clients.on_demand()
    asked = []

    def advisor(timeout_seconds):
        asked.append(timeout_seconds)
        return fixture("spot_advisor.json")

    time = FakeTime()
    live = LivePriceSource(
        clients, budget_seconds=budget, clock=lambda: NOW, sleep=time.sleep, monotonic=time.monotonic, advisor=advisor
    )
    book = live.prices("us-east-1", TYPES, ZONES)
    assert asked == ([timeout] if timeout else [])
    assert bool(book.interruptions) == bool(timeout)
    if not timeout:
        assert book.notes == ["Spot Instance Advisor data not read: the price read used its time budget"]


def test_live_prices_give_a_spot_plan():
    clients = Clients()
    clients.spot_pages()
    clients.on_demand()
    book = source(clients).prices("us-east-1", TYPES, ZONES)
    plan = decide(request(types=TYPES), book, NOW).plan
    assert set(plan.spot_types) == set(TYPES) and plan.max_spot_share <= 0.9
    assert plan.expected_usd_per_hour < plan.all_on_demand_usd_per_hour * 0.65


def test_throttling_is_retried_with_backoff_then_succeeds():
    clients, time = Clients(), FakeTime()
    clients.ec2_stub.add_client_error("describe_spot_price_history", "RequestLimitExceeded", http_status_code=503)
    clients.ec2_stub.add_client_error("describe_spot_price_history", "RequestLimitExceeded", http_status_code=503)
    clients.spot_pages()
    clients.on_demand()
    book = source(clients, time).prices("us-east-1", TYPES, ZONES)
    clients.done()
    assert time.slept == [0.5, 1.0] and len(book.spot) == 9


def test_a_page_throttled_mid_way_is_retried_from_that_page():
    """The paginator resumes at the page that was throttled: no page is read twice or lost."""
    clients, time = Clients(), FakeTime()
    params = {
        "InstanceTypes": TYPES,
        "ProductDescriptions": ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"],
        "StartTime": NOW,
    }
    second = {**params, "NextToken": fixture("spot_price_history_page1.json")["NextToken"]}
    clients.ec2_stub.add_response("describe_spot_price_history", fixture("spot_price_history_page1.json"), params)
    clients.ec2_stub.add_client_error(
        "describe_spot_price_history", "RequestLimitExceeded", http_status_code=503, expected_params=second
    )
    clients.ec2_stub.add_response("describe_spot_price_history", fixture("spot_price_history_page2.json"), second)
    clients.on_demand()
    book = source(clients, time).prices("us-east-1", TYPES, ZONES)
    clients.done()
    assert time.slept == [0.5] and len(book.spot) == 9


def test_throttling_past_the_time_budget_fails_the_source():
    clients, time = Clients(), FakeTime()
    for _ in range(6):
        clients.ec2_stub.add_client_error("describe_spot_price_history", "RequestLimitExceeded", http_status_code=503)
    with pytest.raises(PriceSourceError, match="describe_spot_price_history: RequestLimitExceeded"):
        source(clients, time, budget=5.0).prices("us-east-1", TYPES, ZONES)
    assert sum(time.slept) <= 5.0


def test_endpoint_failure_falls_back_to_the_snapshot_and_adds_no_spot():
    clients = Clients()
    clients.spot_pages()
    clients.pricing_stub.add_client_error("get_products", "ServiceUnavailableException", http_status_code=503)
    book, used, notes = read_prices(
        [source(clients), SnapshotPriceSource()], "us-east-1", [request(types=TYPES)], ZONES
    )
    assert used == "snapshot" and "live prices unavailable (get_products: ServiceUnavailableException)" in notes[0]
    decision = decide(request(types=TYPES), book, NOW)
    assert decision.plan.spot_types == () and "no spot price is known" in "\n".join(decision.plan.explanation)


def test_questions_for_the_same_types_at_other_capacities_keep_their_own_scores():
    # A group's whole spot share and one zone's part of it: same types, different answers.
    clients = Clients()
    clients.spot_pages()
    clients.on_demand()
    clients.placement(12)
    clients.placement(4, score=10, first=False)
    whole, part = PlacementRequest(tuple(TYPES), 12), PlacementRequest(tuple(TYPES), 4)
    book = source(clients).prices("us-east-1", TYPES, ZONES, [whole, part])
    clients.done()
    assert [book.placement_score(whole, z).score for z in ZONES] == [9, 8, 7]
    assert [book.placement_score(part, z).score for z in ZONES] == [10, 10, 10]


def test_placement_scores_are_optional_and_a_refused_question_leaves_the_others_answered():
    clients = Clients()
    clients.spot_pages()
    clients.on_demand()
    clients.ec2_stub.add_response("describe_availability_zones", fixture("availability_zones.json"))
    clients.ec2_stub.add_client_error("get_spot_placement_scores", "MaxConfigLimitExceeded")
    clients.placement(4, score=10, first=False)
    whole, part = PlacementRequest(tuple(TYPES), 12), PlacementRequest(tuple(TYPES), 4)
    book = source(clients).prices("us-east-1", TYPES, ZONES, [whole, part])
    clients.done()
    assert book.placement_score(whole, ZONES[0]) is None and book.placement_score(part, ZONES[0]).score == 10
    assert "unavailable for 12 instances" in book.notes[0] and "MaxConfigLimitExceeded" in book.notes[0]
    assert len(book.spot) == 9


def test_reserved_instances_at_their_effective_rate():
    clients = Clients()
    clients.ec2_stub.add_response("describe_reserved_instances", fixture("reserved_instances.json"), {"Filters": ANY})
    (holding,) = source(clients).reserved_holdings("us-east-1")  # the retired g5 RI is ignored
    all_upfront = 4441.0 / 8760
    partial = 2200.0 / 8760 + 0.26
    assert holding.instance_type == "g6.xlarge" and holding.count == 6
    assert holding.usd_per_hour == pytest.approx((4 * all_upfront + 2 * partial) / 6, abs=1e-6)


def test_effective_rate_and_allocation_between_groups():
    assert effective_hourly_rate(8760.0, 31_536_000, 0.1, 0.2) == pytest.approx(1.3)
    held = [ReservedHolding("g6.xlarge", 5, 0.5, "x")]
    allocated = allocate_holdings(
        held, [("online", ("g6.xlarge",), 3, ZONES), ("batch", ("g6.xlarge", "g5.xlarge"), 8, ZONES)]
    )
    assert [h.count for h in allocated["online"]] == [3] and [h.count for h in allocated["batch"]] == [2]


def test_pricing_endpoint_and_price_list_parsing():
    assert pricing_endpoint_region("eu-west-1") == "eu-central-1"
    assert pricing_endpoint_region("ap-northeast-1") == "ap-south-1"
    assert pricing_endpoint_region("us-west-2") == "us-east-1"
    assert on_demand_usd_per_hour(price_list("g5.12xlarge")["PriceList"]) == pytest.approx(5.672)
    assert on_demand_usd_per_hour([]) is None
