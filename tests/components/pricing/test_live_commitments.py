"""The account's Savings Plans and capacity reservations, read live through boto3 clients whose calls
botocore's Stubber answers with recorded shapes (savingsplans and ce are served from us-east-1): every
page, the plan's rates, Cost Explorer's unused commitment, a refusal and throttling (issue 38)."""

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.stub import ANY, Stubber

from components.pricing.commitments import last_full_day
from components.pricing.live import LivePriceSource
from components.pricing.prices import PriceSourceError
from components.pricing.reserved import CAPACITY_RESERVATION
from tests.components.pricing.test_live import NOW, FakeTime, price_list

ARN = "arn:aws:savingsplans::123456789012:savingsplan/3b6a2c9e-1111-4a2b-9c3d-0123456789ab"


def savings_plan(plan_id, arn, plan_type="Compute", state="active", commitment="12.5"):
    return {
        "savingsPlanId": plan_id,
        "savingsPlanArn": arn,
        "description": "3 year No Upfront Compute Savings Plan",
        "start": "2025-01-01T00:00:00.000Z",
        "end": "2028-01-01T00:00:00.000Z",
        "state": state,
        "region": "",
        "ec2InstanceFamily": "",
        "savingsPlanType": plan_type,
        "paymentOption": "No Upfront",
        "productTypes": ["EC2", "Fargate", "Lambda"],
        "currency": "USD",
        "commitment": commitment,
        "upfrontPaymentAmount": "0",
        "recurringPaymentAmount": commitment,
        "termDurationInSeconds": 94608000,
    }


def rate(instance_type, usd, region="us-east-1"):
    return {
        "rate": usd,
        "currency": "USD",
        "unit": "Hrs",
        "productType": "EC2",
        "serviceCode": "AmazonEC2",
        "usageType": f"BoxUsage:{instance_type}",
        "operation": "RunInstances",
        "properties": [
            {"name": "region", "value": region},
            {"name": "instanceType", "value": instance_type},
            {"name": "instanceFamily", "value": instance_type.split(".")[0]},
            {"name": "productDescription", "value": "Linux/UNIX"},
            {"name": "tenancy", "value": "shared"},
        ],
    }


class Clients:
    def __init__(self):
        keys = {"aws_access_key_id": "k", "aws_secret_access_key": "s"}
        self.clients = {
            service: boto3.client(service, region_name="us-east-1", **keys)
            for service in ("savingsplans", "ce", "ec2", "pricing")
        }
        self.stubs = {service: Stubber(client) for service, client in self.clients.items()}
        for stub in self.stubs.values():
            stub.activate()
        self.asked: list[tuple[str, str]] = []

    def __call__(self, service, region):
        self.asked.append((service, region))
        return self.clients[service]

    def done(self):
        for stub in self.stubs.values():
            stub.assert_no_pending_responses()


def source(clients, budget=90.0):
    time = FakeTime()
    return LivePriceSource(
        clients, budget_seconds=budget, clock=lambda: NOW, sleep=time.sleep, monotonic=time.monotonic
    )


def test_savings_plans_every_page_their_rates_and_yesterdays_unused_commitment():
    clients = Clients()
    sp = clients.stubs["savingsplans"]
    sp.add_response(
        "describe_savings_plans",
        {"savingsPlans": [savings_plan("sp-a", ARN)], "nextToken": "t1"},
        {"states": ["active"]},
    )
    sp.add_response(
        "describe_savings_plans",
        {"savingsPlans": [savings_plan("sp-b", "arn:b", "SageMaker")]},
        {"states": ["active"], "nextToken": "t1"},
    )
    filters = [
        {"name": "region", "values": ["us-east-1"]},
        {"name": "productType", "values": ["EC2"]},
        {"name": "instanceType", "values": ["g5.xlarge", "g6.xlarge"]},
    ]
    asked = {"savingsPlanId": "sp-a", "filters": filters, "maxResults": 1000}
    sp.add_response(
        "describe_savings_plan_rates",
        {"savingsPlanId": "sp-a", "searchResults": [rate("g6.xlarge", "0.5310")], "nextToken": "r1"},
        asked,
    )
    sp.add_response(
        "describe_savings_plan_rates",
        {
            "savingsPlanId": "sp-a",
            "searchResults": [rate("g5.xlarge", "0.6640"), rate("g6.xlarge", "0.47", "us-west-2")],
        },
        {**asked, "nextToken": "r1"},
    )
    # $12.50 an hour committed: one day of the week left $297 unused (every hour at least $9.50), the others more.
    for back, unused in enumerate(["299", "297", "300", "298", "300", "299", "300"]):
        period = last_full_day(NOW - timedelta(days=back))
        clients.stubs["ce"].add_response(
            "get_savings_plans_utilization_details",
            {
                "SavingsPlansUtilizationDetails": [
                    {
                        "SavingsPlanArn": ARN,
                        "Attributes": {},
                        "Utilization": {
                            "TotalCommitment": "300",
                            "UsedCommitment": str(300 - int(unused)),
                            "UnusedCommitment": unused,
                            "UtilizationPercentage": "1",
                        },
                    }
                ],
                "TimePeriod": period,
            },
            {"TimePeriod": period},
        )
    (found,) = source(clients).savings_plans("us-east-1", NOW, ["g5.xlarge", "g6.xlarge"])
    clients.done()
    assert (found.plan_id, found.unused_per_hour, dict(found.rates)) == (
        "sp-a",
        9.5,
        {"g6.xlarge": 0.531, "g5.xlarge": 0.664},
    )
    assert found.ends_at == datetime(2028, 1, 1, tzinfo=UTC)
    assert {region for _service, region in clients.asked} == {"us-east-1"}


@pytest.mark.parametrize("code", ["AccessDeniedException", "ValidationException"])
def test_a_refused_read_is_a_price_source_error_naming_the_operation(code):
    clients = Clients()
    clients.stubs["savingsplans"].add_client_error("describe_savings_plans", code)
    with pytest.raises(PriceSourceError, match=f"describe_savings_plans: {code}"):
        source(clients).savings_plans("us-east-1", NOW, ["g6.xlarge"])


def test_throttled_reads_are_retried():
    clients = Clients()
    sp = clients.stubs["savingsplans"]
    sp.add_client_error("describe_savings_plans", "ThrottlingException")
    sp.add_response("describe_savings_plans", {"savingsPlans": []}, {"states": ["active"]})
    assert source(clients).savings_plans("us-east-1", NOW, ["g6.xlarge"]) == []  # none: Cost Explorer not asked
    clients.done()


def test_capacity_reservations_every_page_at_the_on_demand_rate_they_bill():
    clients = Clients()
    ec2 = clients.stubs["ec2"]
    reservation = {
        "CapacityReservationId": "cr-0123456789abcdef0",
        "InstanceType": "g6.12xlarge",
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": "us-east-1a",
        "Tenancy": "default",
        "TotalInstanceCount": 2,
        "AvailableInstanceCount": 2,
        "State": "active",
        "InstanceMatchCriteria": "open",
        "ReservationType": "default",
        "EndDateType": "unlimited",
    }
    ec2.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [reservation], "NextToken": "n"},
        {"Filters": [{"Name": "state", "Values": ["active"]}]},
    )
    ec2.add_response(
        "describe_capacity_reservations",
        {
            "CapacityReservations": [
                {**reservation, "CapacityReservationId": "cr-0fedcba9876543210", "EndDate": NOW + timedelta(days=3)}
            ]
        },
        {"Filters": [{"Name": "state", "Values": ["active"]}], "NextToken": "n"},
    )
    clients.stubs["pricing"].add_response(
        "get_products", price_list("g6.12xlarge"), {"ServiceCode": "AmazonEC2", "Filters": ANY}
    )
    held = source(clients).capacity_reservations("us-east-1", NOW)
    clients.done()
    assert [(h.reference, h.kind, h.count, h.zone) for h in held] == [
        ("cr-0123456789abcdef0", CAPACITY_RESERVATION, 2, "us-east-1a"),
        ("cr-0fedcba9876543210", CAPACITY_RESERVATION, 2, "us-east-1a"),
    ]
    assert held[0].usd_per_hour == pytest.approx(4.6016) and held[1].ends_at == NOW + timedelta(days=3)
