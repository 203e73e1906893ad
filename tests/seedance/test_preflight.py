"""`seedance preflight` against recorded answers of each read-only call (botocore's Stubber): every
blocker it knows, the step to take, and a call the caller may not make reported, never a traceback."""

from __future__ import annotations

import datetime
import inspect
import re

import boto3
import pytest
from botocore.stub import Stubber

from seedance import preflight
from seedance.cli import main
from tests.stacks import REPO, stack_config

ACCOUNT = "123456789012"  # the prod stack's admin roles are of this account
ZONES = [("us-east-1a", "use1-az1"), ("us-east-1b", "use1-az2"), ("us-east-1c", "use1-az4"), ("us-east-1e", "use1-az3")]


class Account:
    """Stubbed clients of one account, answered in the order preflight asks."""

    def __init__(self):
        self.clients = {
            s: boto3.client(s, region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
            for s in ("service-quotas", "ec2", "eks", "iam", "ce", "sts", "cloudtrail", "savingsplans")
        }
        self.stubs = {s: Stubber(c) for s, c in self.clients.items()}
        for stub in self.stubs.values():
            stub.activate()

    def __call__(self, service, region):
        return self.clients[service]

    def answer(self, service, operation, response):
        self.stubs[service].add_response(operation, response)

    def deny(self, service, operation, code="AccessDeniedException"):
        self.stubs[service].add_client_error(operation, code, http_status_code=403)

    def healthy(
        self,
        *,
        g_quota=1200.0,
        spot_quota=1200.0,
        offered=True,
        version="STANDARD_SUPPORT",
        roles=True,
        linked_roles=True,
        gateway="available",
        owner=ACCOUNT,
        auto_accept="disable",
        propagation="enable",
        association="enable",
        routed=True,
        recorded=True,
        logging=True,
        orphans=False,
        tag="Active",
    ):
        config = stack_config("prod")
        self.answer(
            "sts",
            "get_caller_identity",
            {"Account": ACCOUNT, "Arn": f"arn:aws:iam::{ACCOUNT}:role/ci", "UserId": "AROAEXAMPLE"},
        )
        for value in (g_quota, spot_quota):
            self.answer("service-quotas", "get_service_quota", {"Quota": {"Value": value, "QuotaCode": "L"}})
        self.answer(
            "ec2",
            "describe_availability_zones",
            {"AvailabilityZones": [{"ZoneName": n, "ZoneId": i, "State": "available"} for n, i in ZONES]},
        )
        for group in config.gpu_node_groups:
            zones = ["use1-az1", "use1-az2", "use1-az4"] if offered else ["use1-az1", "use1-az2"]
            self.answer(
                "ec2",
                "describe_instance_type_offerings",
                {
                    "InstanceTypeOfferings": [
                        {"InstanceType": t, "LocationType": "availability-zone-id", "Location": z}
                        for t in group.instance_types
                        for z in zones
                    ]
                },
            )
        self.answer(
            "eks",
            "describe_cluster_versions",
            {"clusterVersions": [{"clusterVersion": "1.35", "versionStatus": version}]},
        )
        for _key, arn in config.cluster.principals():
            if roles:
                self.answer(
                    "iam",
                    "get_role",
                    {
                        "Role": {
                            "Path": "/",
                            "RoleName": arn.rsplit("/", 1)[-1],
                            "RoleId": "AROAEXAMPLE1234567890",
                            "Arn": arn,
                            "CreateDate": datetime.datetime(2026, 1, 1),
                        }
                    },
                )
            else:
                self.stubs["iam"].add_client_error("get_role", "NoSuchEntity", http_status_code=404)
        for role in preflight.SERVICE_LINKED_ROLES + preflight.TRANSIT_GATEWAY_ROLE:
            if linked_roles:
                self.answer(
                    "iam",
                    "get_role",
                    {
                        "Role": {
                            "Path": "/aws-service-role/",
                            "RoleName": role[0],
                            "RoleId": "AROAEXAMPLE1234567890",
                            "Arn": f"arn:aws:iam::{ACCOUNT}:role/{role[0]}",
                            "CreateDate": datetime.datetime(2026, 1, 1),
                        }
                    },
                )
            else:
                self.stubs["iam"].add_client_error("get_role", "NoSuchEntity", http_status_code=404)
        if gateway and gateway.startswith("Invalid"):  # what EC2 answers for an ID the account cannot see
            self.stubs["ec2"].add_client_error("describe_transit_gateways", gateway, http_status_code=400)
        else:
            self.answer(
                "ec2",
                "describe_transit_gateways",
                {
                    "TransitGateways": [
                        {
                            "State": gateway,
                            "OwnerId": owner,
                            "Options": {
                                "AutoAcceptSharedAttachments": auto_accept,
                                "DefaultRouteTablePropagation": propagation,
                                "DefaultRouteTableAssociation": association,
                                "AssociationDefaultRouteTableId": "tgw-rtb-0abc",
                            },
                        },
                    ]
                    if gateway
                    else []
                },
            )
        if gateway == "available":
            if association == "enable":
                self.answer(
                    "ec2",
                    "search_transit_gateway_routes",
                    {
                        "Routes": [{"DestinationCidrBlock": "10.100.0.0/16", "State": "active", "Type": "propagated"}]
                        if routed
                        else []
                    },
                )
        trail = f"arn:aws:cloudtrail:us-east-1:{ACCOUNT}:trail/org"
        self.answer(
            "cloudtrail",
            "describe_trails",
            {"trailList": [{"Name": "org", "TrailARN": trail, "HomeRegion": "us-east-1"}]},
        )
        bucket = f"arn:aws:s3:::{config.model_bucket_name(ACCOUNT)}/"
        self.answer(
            "cloudtrail",
            "get_event_selectors",
            {
                "TrailARN": trail,
                "AdvancedEventSelectors": [
                    {
                        "Name": "model writes",
                        "FieldSelectors": [
                            {"Field": "eventCategory", "Equals": ["Data"]},
                            {"Field": "resources.type", "Equals": ["AWS::S3::Object"]},
                            {"Field": "readOnly", "Equals": ["false"]},
                            {
                                "Field": "resources.ARN",
                                "StartsWith": [bucket if recorded else "arn:aws:s3:::other-bucket/"],
                            },
                        ],
                    }
                ],
            },
        )
        if recorded:
            self.answer("cloudtrail", "get_trail_status", {"IsLogging": logging})
        self.answer(
            "ec2",
            "describe_volumes",
            {
                "Volumes": [
                    {
                        "VolumeId": "vol-0abc",
                        "Size": 64,
                        "VolumeType": "io2",
                        "State": "available",
                        "Tags": [
                            {"Key": "kubernetes-namespace", "Value": "training"},
                            {"Key": "kubernetes-claim", "Value": "ckpt"},
                        ],
                    },
                ]
                if orphans
                else []
            },
        )
        self.answer(
            "ce",
            "list_cost_allocation_tags",
            {"CostAllocationTags": [{"TagKey": "cost-center", "Type": "UserDefined", "Status": tag}]},
        )
        return self


@pytest.fixture
def account(monkeypatch):
    created = Account()
    monkeypatch.setattr(preflight, "account_clients", created)
    return created


def verdicts(capsys):
    return capsys.readouterr().out


def test_a_ready_account_passes_with_nothing_to_do(account, capsys):
    account.healthy()
    assert main(["preflight", "--stack", "prod"]) == 0
    out = verdicts(capsys)
    assert "0 blocker(s), 0 warning(s), 0 not checked" in out
    assert "us-east-1a (use1-az1), us-east-1b (use1-az2), us-east-1c (use1-az4)" in out  # never use1-az3


@pytest.mark.parametrize(
    "change, words",
    [
        ({"g_quota": 64.0}, "quota: Running On-Demand G and VT instances: 64 vCPUs, the first run needs 216"),
        ({"offered": False}, "is offered in us-east-1c"),
        ({"version": "UNSUPPORTED"}, "EKS does not create clusters of this version"),
        ({"roles": False}, "no such role or user"),
        ({"gateway": None}, "tgw-0123456789EXAMPLE is not available in this account (not found)"),
        ({"gateway": "InvalidTransitGatewayID.NotFound"}, "is not available in this account (not found)"),
        (
            {"routed": False},
            "deploy path: route to 10.100.0.0/24: tgw-0123456789EXAMPLE's route table tgw-rtb-0abc, "
            "where the VPC's attachment lands, has no active route to it",
        ),
        ({"owner": "444455556666"}, "belongs to account 444455556666 and does not accept shared attachments by itself"),
    ],
)
def test_each_blocker_names_the_step_to_take(account, capsys, change, words):
    account.healthy(**change)
    assert main(["preflight", "--stack", "prod"]) == 1
    out = verdicts(capsys)
    assert "BLOCKER" in out and words in out


@pytest.mark.parametrize(
    "change, words",
    [
        ({"g_quota": 300.0}, "enough at creation (216), not at the groups' maxima (1056)"),
        (
            {"spot_quota": 100.0},
            "All G and VT Spot Instance Requests: 100 vCPUs: enough at creation (0), not at the groups' maxima (932)",
        ),
        ({"version": "EXTENDED_SUPPORT"}, "in extended support"),
        ({"tag": "Inactive"}, "not active: the budget counts nothing"),
        (
            {"linked_roles": False},
            "service-linked role AWSServiceRoleForAmazonEKS: not yet: eks.amazonaws.com creates it "
            "on first use, as the deployer, who needs iam:CreateServiceLinkedRole",
        ),
        ({"owner": "444455556666", "auto_accept": "enable"}, "0 blocker(s)"),
        ({"propagation": "disable"}, "its owner must route 10.60.0.0/16 to the VPC's attachment"),
        ({"association": "disable"}, "associates new attachments with no route table"),
        ({"recorded": False}, "no trail logs S3 write data events for arn:aws:s3:::seedance-prod-models-123456789012"),
        ({"logging": False}, "no trail logs S3 write data events"),  # a stopped trail records nothing
        (
            {"orphans": True},
            "1 detached volume(s) of this stack, 64 GiB billed every month: vol-0abc (io2 64 GiB, claim training/ckpt)",
        ),
    ],
)
def test_what_does_not_block_the_first_run_is_a_warning(account, capsys, change, words):
    account.healthy(**change)
    assert main(["preflight", "--stack", "prod"]) == 0
    assert words in verdicts(capsys)


def deny_everything(account):
    account.answer(
        "sts",
        "get_caller_identity",
        {"Account": ACCOUNT, "Arn": f"arn:aws:iam::{ACCOUNT}:role/ci", "UserId": "AROAEXAMPLE"},
    )
    for _ in range(2):
        account.deny("service-quotas", "get_service_quota")
    account.deny("ec2", "describe_availability_zones", "UnauthorizedOperation")
    account.deny("eks", "describe_cluster_versions")
    for _ in range(2 + len(preflight.SERVICE_LINKED_ROLES) + len(preflight.TRANSIT_GATEWAY_ROLE)):
        account.deny("iam", "get_role", "AccessDenied")
    account.deny("ec2", "describe_transit_gateways", "UnauthorizedOperation")
    account.deny("cloudtrail", "describe_trails")
    account.deny("ec2", "describe_volumes", "UnauthorizedOperation")
    account.deny("ce", "list_cost_allocation_tags")


def test_a_call_the_caller_may_not_make_is_named_never_a_traceback(account, capsys):
    deny_everything(account)
    assert main(["preflight", "--stack", "prod"]) == 0
    out = verdicts(capsys)
    for permission in (
        "servicequotas:GetServiceQuota",
        "ec2:DescribeAvailabilityZones",
        "eks:DescribeClusterVersions",
        "iam:GetRole",
        "ec2:DescribeTransitGateways",
        "cloudtrail:DescribeTrails",
        "ce:ListCostAllocationTags",
    ):
        assert f"could not check: missing permission {permission}" in out
    assert "0 blocker(s)" in out and "15 not checked" in out


def test_strict_fails_when_a_check_could_not_be_made(account, capsys):
    deny_everything(account)
    assert main(["preflight", "--stack", "prod", "--strict"]) == 1  # a CI gate that must see every answer


def test_an_admin_of_another_account_is_not_looked_up_here(account):
    """EKS takes principals of other accounts; a role of the same name here proves nothing about it."""
    config = stack_config("prod")
    elsewhere = {
        key: [arn.replace(ACCOUNT, "444455556666") for arn in getattr(config.cluster, key)]
        for key in ("admin_principal_arns", "break_glass_principal_arns")
    }
    findings = []
    preflight.check_admin_roles(
        config.model_copy(update={"cluster": config.cluster.model_copy(update=elsewhere)}), account, findings, ACCOUNT
    )
    assert [f.verdict for f in findings] == ["unchecked"] * sum(map(len, elsewhere.values())) != []
    assert "belongs to account 444455556666" in findings[0].detail


def test_the_fresh_account_guide_lists_every_permission_preflight_uses():
    asked = set(re.findall(r'"([a-z-]+:[A-Z][A-Za-z]+)"', inspect.getsource(preflight)))
    guide = (REPO / "docs" / "fresh-account.md").read_text().split("## 4.")[1]
    assert asked and not {p for p in asked if f"`{p}`" not in guide}


def test_a_trail_of_a_bucket_whose_name_only_starts_the_same_does_not_count():
    bucket = "arn:aws:s3:::seedance-prod-models-123456789012"
    basic = lambda value: {
        "EventSelectors": [
            {
                "ReadWriteType": "All",
                "DataResources": [{"Type": "AWS::S3::Object", "Values": [value]}],
            }
        ]
    }
    assert not preflight._records_writes(basic("arn:aws:s3:::seedance-prod/"), bucket)
    assert preflight._records_writes(basic("arn:aws:s3"), bucket)
    assert preflight._records_writes(basic(f"{bucket}/"), bucket)


def test_a_preflight_that_cannot_read_who_is_calling_checked_nothing_and_does_not_pass(account, capsys):
    """Issue 37, item 6: no credentials, a dead endpoint or a missing CA bundle: exit 2 with one line, not
    a report of everything unchecked that a pipeline reads as a pass."""
    account.deny("sts", "get_caller_identity", "InvalidClientTokenId")
    assert main(["preflight", "--stack", "prod"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "could not read the caller's identity" in captured.err and "nothing was checked" in captured.err


def test_one_deadline_ends_a_preflight_whose_endpoints_never_answer(monkeypatch, capsys):
    """Issue 37, item 5: an endpoint that accepts and never answers holds each call to its read timeout and
    retries; the whole command ends within --timeout, exit 2, one line."""
    import threading
    import time

    never = threading.Event()

    def hanging(service, region):
        never.wait(30)
        raise AssertionError("the deadline should have ended the command first")

    monkeypatch.setattr(preflight, "account_clients", hanging)
    started = time.monotonic()
    assert main(["preflight", "--stack", "prod", "--timeout", "0.5"]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert "no answer within 0.5 s" in err and len(err.strip().splitlines()) == 1
    never.set()


def test_live_commitments_are_read_as_the_decision_will_and_a_missing_grant_is_named(account):
    """Issue 38: with `capacity.commitments: live` each read the decision makes is asked once; one it may
    not make is named by its permission (the decision would fall back to the lock's record)."""
    config = stack_config("prod")
    live = config.model_copy(update={"capacity": config.capacity.model_copy(update={"commitments": "live"})})
    account.answer("savingsplans", "describe_savings_plans", {"savingsPlans": [{"savingsPlanId": "sp-1"}]})
    account.answer("savingsplans", "describe_savings_plan_rates", {"savingsPlanId": "sp-1", "searchResults": []})
    account.deny("ce", "get_savings_plans_utilization_details")
    account.answer("ec2", "describe_capacity_reservations", {"CapacityReservations": []})
    findings = []
    preflight.check_commitments(live, account, findings, ACCOUNT)
    assert [(f.check, f.verdict) for f in findings] == [
        ("Savings Plans", "ok"),
        ("Savings Plans utilisation", "unchecked"),
        ("capacity reservations", "ok"),
    ]
    assert findings[1].detail == "could not check: missing permission ce:GetSavingsPlansUtilizationDetails"
    findings = []
    preflight.check_commitments(config, account, findings, ACCOUNT)  # from config: nothing to read
    assert findings == []
