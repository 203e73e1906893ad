"""`LivePriceSource`: prices read from the AWS APIs now (spot history, Price List, placement scores, RIs),
and each type's interruption frequency from the Spot Instance Advisor's public data.

Each call is retried on throttling with backoff inside one time budget for the whole read, on top
of botocore's own retries, so a price refresh never hangs a `pulumi up`. Any failure that leaves
prices unread raises `PriceSourceError`; the caller falls back to the lock or the snapshot.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.request
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from components.pricing.advisor import interruption_frequencies
from components.pricing.commitments import (
    SavingsPlanCommitment,
    every_hour_headroom,
    full_days,
    plan_rates,
    reservation_holdings,
    savings_plan_commitments,
)
from components.pricing.prices import (
    PlacementRequest,
    PlacementScore,
    Price,
    PriceBook,
    PriceSourceError,
    SnapshotPriceSource,
)
from components.pricing.reserved import ReservedHolding, holdings_from_reserved_instances

# The Price List API is served from these regions only; each answers for every region.
PRICING_ENDPOINT_REGIONS = {"us": "us-east-1", "eu": "eu-central-1", "ap": "ap-south-1"}
THROTTLING_CODES = {
    "RequestLimitExceeded",
    "Throttling",
    "ThrottlingException",
    "TooManyRequestsException",
    "RequestThrottled",
    "RequestThrottledException",
}
LINUX_PRODUCT_DESCRIPTIONS = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")
BOTOCORE_CONFIG = Config(retries={"mode": "adaptive", "total_max_attempts": 3}, connect_timeout=5, read_timeout=20)

ClientFactory = Callable[[str, str], Any]  # (service, region) -> boto3 client
# The data behind https://aws.amazon.com/ec2/spot/instance-advisor/ (no API serves it): per region, OS
# and type, "r" indexes `ranges`, whose labels are the page's bands (<5%, 5-10%, ..., >20% a month).
SPOT_ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"


def pricing_endpoint_region(region: str) -> str:
    return PRICING_ENDPOINT_REGIONS.get(region.split("-")[0], "us-east-1")


def boto3_clients(service: str, region: str) -> Any:
    import boto3

    return boto3.client(service, region_name=region, config=BOTOCORE_CONFIG)


def _utc_now() -> datetime:
    return datetime.now(UTC)


ADVISOR_TIMEOUT_SECONDS = 20.0


def fetch_spot_advisor(timeout_seconds: float) -> Any:
    with urllib.request.urlopen(SPOT_ADVISOR_URL, timeout=timeout_seconds) as response:
        return json.load(response)


class LivePriceSource:
    name = "live"

    def __init__(
        self,
        clients: ClientFactory = boto3_clients,
        *,
        budget_seconds: float = 90.0,
        clock: Callable[[], datetime] = _utc_now,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        advisor: Callable[[float], Any] = fetch_spot_advisor,
    ):
        self._clients = clients
        self._advisor = advisor
        self._budget = budget_seconds
        self._clock = clock
        self._sleep = sleep
        self._monotonic = monotonic
        self._deadline = 0.0

    # -- calls ---------------------------------------------------------------------------

    def _call(self, client: Any, operation: str, **params) -> dict:
        """One API call, retried on throttling (see `_retrying`)."""
        return self._retrying(operation, lambda: getattr(client, operation)(**params))

    def _retrying(self, operation: str, call: Callable[[], Any]) -> Any:
        """`call`, retried on throttling with exponential backoff until the time budget runs out."""
        attempt = 0
        while True:
            if self._monotonic() > self._deadline:
                raise PriceSourceError(f"{operation}: no answer within the {self._budget:g} s time budget")
            try:
                return call()
            except ClientError as error:
                code = error.response.get("Error", {}).get("Code", "")
                remaining = self._deadline - self._monotonic()
                delay = min(0.5 * 2**attempt, 8.0)
                if code not in THROTTLING_CODES or remaining <= delay:
                    raise PriceSourceError(f"{operation}: {code or error}") from None
                self._sleep(delay)
                attempt += 1
            except BotoCoreError as error:
                raise PriceSourceError(f"{operation}: {error}") from None

    def _pages(self, client: Any, operation: str, items_key: str, **params: Any) -> list[Any]:
        """Every page, through botocore's paginator; a throttled page is retried from where it stopped."""
        items: list[Any] = []
        resume: str | None = None

        def rest() -> None:
            nonlocal resume
            # The service's own token, as a parameter: botocore's StartingToken is its own encoding.
            token = {"NextToken": resume} if resume else {}
            for page in client.get_paginator(operation).paginate(**params, **token):
                items.extend(page.get(items_key, []))
                resume = page.get("NextToken")

        self._retrying(operation, rest)
        return items

    # -- prices --------------------------------------------------------------------------

    def prices(
        self,
        region: str,
        instance_types: Sequence[str],
        zones: Sequence[str],
        placement: Sequence[PlacementRequest] = (),
    ) -> PriceBook:
        self._deadline = self._monotonic() + self._budget
        now = self._clock()
        book = PriceBook(region=region)
        book.spot = self._spot_prices(region, instance_types, zones, now)
        book.on_demand = self._on_demand_prices(region, instance_types, now)
        # Scores are optional (EC2 may refuse new request shapes in a day): a question unanswered adds no spot.
        zone_by_id = None
        for request in placement:
            try:
                zone_by_id = zone_by_id or self._zone_names(region)
                book.placement.update(self._placement_scores(region, request, zones, zone_by_id, now))
            except PriceSourceError as error:
                book.notes.append(
                    f"spot placement scores unavailable for {request.target_capacity} instances ({error})"
                )
        remaining = self._deadline - self._monotonic()
        if remaining <= 0:
            book.notes.append("Spot Instance Advisor data not read: the price read used its time budget")
            return book
        try:
            document = self._advisor(min(ADVISOR_TIMEOUT_SECONDS, remaining))
            book.interruptions = interruption_frequencies(document, region, instance_types, now)
        except (OSError, http.client.HTTPException, ValueError) as error:
            # Optional as well: without it the planner assumes the worst band, which never adds spot.
            # (Network and HTTP failures, a body that is not JSON, a document of another shape.)
            book.notes.append(f"Spot Instance Advisor data unavailable ({type(error).__name__}: {error})")
        return book

    def _spot_prices(self, region, instance_types, zones, now) -> dict[tuple[str, str], Price]:
        ec2 = self._clients("ec2", region)
        records = self._pages(
            ec2,
            "describe_spot_price_history",
            "SpotPriceHistory",
            InstanceTypes=list(instance_types),
            ProductDescriptions=list(LINUX_PRODUCT_DESCRIPTIONS),
            StartTime=now,
        )
        prices: dict[tuple[str, str], Price] = {}
        for record in records:
            key = (record["InstanceType"], record["AvailabilityZone"])
            if key[1] not in zones:
                continue
            value = float(record["SpotPrice"])
            since = record["Timestamp"]
            # Both product descriptions may answer for a pool: keep the dearer, the safe side.
            if key not in prices or value > prices[key].usd_per_hour:
                prices[key] = Price(
                    value,
                    now,
                    f"EC2 spot price history ({record['ProductDescription']}, in effect since {since:%Y-%m-%dT%H:%MZ})",
                )
        return prices

    def _on_demand_prices(self, region, instance_types, now) -> dict[str, Price]:
        endpoint = pricing_endpoint_region(region)
        pricing = self._clients("pricing", endpoint)
        prices = {}
        for instance_type in instance_types:
            filters = {
                "instanceType": instance_type,
                "regionCode": region,
                "operatingSystem": "Linux",
                "tenancy": "Shared",
                "preInstalledSw": "NA",
                "licenseModel": "No License required",
                "capacitystatus": "Used",
                "marketoption": "OnDemand",
            }
            products = self._pages(
                pricing,
                "get_products",
                "PriceList",
                ServiceCode="AmazonEC2",
                Filters=[{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in filters.items()],
            )
            value = on_demand_usd_per_hour(products)
            if value is not None:
                prices[instance_type] = Price(value, now, f"AWS Price List API ({endpoint})")
        return prices

    def _zone_names(self, region) -> dict[str, str]:
        """Zone ids (what placement scores name) to this account's zone names."""
        answer = self._call(self._clients("ec2", region), "describe_availability_zones")
        return {z["ZoneId"]: z["ZoneName"] for z in answer["AvailabilityZones"]}

    def _placement_scores(self, region, request: PlacementRequest, zones, zone_by_id, now) -> dict:
        ec2 = self._clients("ec2", region)
        scores = self._pages(
            ec2,
            "get_spot_placement_scores",
            "SpotPlacementScores",
            InstanceTypes=list(request.instance_types),
            TargetCapacity=request.target_capacity,
            TargetCapacityUnitType="units",
            SingleAvailabilityZone=True,
            RegionNames=[region],
        )
        return {
            (request, zone_by_id[s["AvailabilityZoneId"]]): PlacementScore(
                int(s["Score"]), now, "EC2 spot placement score"
            )
            for s in scores
            if zone_by_id.get(s.get("AvailabilityZoneId")) in zones
        }

    def available_zones(self, region: str) -> dict[str, str]:
        """The zones this account can use in the region, name -> zone ID (names map to different zones
        per account; IDs do not)."""
        self._deadline = self._monotonic() + self._budget
        answer = self._call(
            self._clients("ec2", region),
            "describe_availability_zones",
            Filters=[
                {"Name": "state", "Values": ["available"]},
                {"Name": "zone-type", "Values": ["availability-zone"]},
            ],
        )
        return {z["ZoneName"]: z["ZoneId"] for z in answer["AvailabilityZones"]}

    def _token_pages(self, client: Any, operation: str, items_key: str, token_key: str, **params) -> list[dict]:
        """Every page of an operation botocore has no paginator for, following its own token."""
        items: list[dict] = []
        token: str | None = None
        while True:
            page = self._call(client, operation, **params, **({token_key: token} if token else {}))
            items.extend(page.get(items_key, []))
            token = page.get(token_key)
            if not token:
                return items

    def capacity_reservations(self, region: str, now: datetime) -> list[ReservedHolding]:
        """Active Linux capacity reservations (On-Demand and Capacity Blocks), each at the on-demand rate
        it bills (a block: paid up front)."""
        self._deadline = self._monotonic() + self._budget
        reservations = self._pages(
            self._clients("ec2", region),
            "describe_capacity_reservations",
            "CapacityReservations",
            Filters=[{"Name": "state", "Values": ["active"]}],
        )
        types = sorted({str(r.get("InstanceType")) for r in reservations})
        rates = {t: p.usd_per_hour for t, p in (self._on_demand_prices(region, types, now) if types else {}).items()}
        try:  # a type the Price List does not answer for: the bundled price, else the read fails
            bundled = SnapshotPriceSource().book(region)
        except PriceSourceError:
            bundled = PriceBook(region=region)
        for instance_type in types:
            if instance_type not in rates:
                price = bundled.on_demand_price(instance_type)
                if price is None:
                    raise PriceSourceError(
                        f"describe_capacity_reservations: no on-demand price for {instance_type}, "
                        "so what its reservation bills is unknown"
                    )
                rates[instance_type] = price.usd_per_hour
        return reservation_holdings(reservations, rates.get, now)

    def savings_plans(self, region: str, now: datetime, instance_types: Sequence[str]) -> list[SavingsPlanCommitment]:
        """Active Compute and EC2 Instance Savings Plans, their EC2 rates for `instance_types` in `region`, and
        what of each commitment every hour of the last 7 days left unused (Cost Explorer, from us-east-1)."""
        self._deadline = self._monotonic() + self._budget
        client = self._clients("savingsplans", "us-east-1")
        plans = [
            p
            for p in self._token_pages(client, "describe_savings_plans", "savingsPlans", "nextToken", states=["active"])
            if p.get("savingsPlanId")
        ]
        if not plans:
            return []
        rates = {}
        for plan in plans:
            if plan.get("savingsPlanType") in ("Compute", "EC2Instance"):
                # A Compute plan rates every type, system and tenancy: ask for the groups' types only.
                found = self._token_pages(
                    client,
                    "describe_savings_plan_rates",
                    "searchResults",
                    "nextToken",
                    savingsPlanId=plan["savingsPlanId"],
                    maxResults=1000,
                    filters=[
                        {"name": "region", "values": [region]},
                        {"name": "productType", "values": ["EC2"]},
                        {"name": "instanceType", "values": list(instance_types)},
                    ],
                )
                rates[plan["savingsPlanId"]] = plan_rates(found, region)
        days = [
            self._token_pages(
                self._clients("ce", "us-east-1"),
                "get_savings_plans_utilization_details",
                "SavingsPlansUtilizationDetails",
                "NextToken",
                TimePeriod=period,
            )
            for period in full_days(now)
        ]
        return savings_plan_commitments(plans, rates, every_hour_headroom(days), now)

    def reserved_holdings(self, region: str) -> list[ReservedHolding]:
        self._deadline = self._monotonic() + self._budget
        ec2 = self._clients("ec2", region)
        answer = self._call(
            ec2,
            "describe_reserved_instances",
            Filters=[
                {"Name": "state", "Values": ["active"]},
                {"Name": "product-description", "Values": list(LINUX_PRODUCT_DESCRIPTIONS)},
            ],
        )
        return holdings_from_reserved_instances(answer.get("ReservedInstances", []))


def on_demand_usd_per_hour(price_list: Sequence[str]) -> float | None:
    """The hourly USD price in a Price List answer (JSON strings); None when it holds none."""
    for document in price_list:
        product = json.loads(document)
        for term in product.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                usd = dimension.get("pricePerUnit", {}).get("USD")
                if dimension.get("unit", "Hrs") == "Hrs" and usd is not None and float(usd) > 0:
                    return float(usd)
    return None
