"""A Capacity Block's expiration warning as EventBridge delivers it, against moto's Auto Scaling: the warned
block's group goes to zero (its minimum too), another block's group, the pool's own group and another
cluster's block group are left alone, and a repeated warning changes nothing."""

import boto3
import pytest
from moto import mock_aws

from components.compute import block_expiry_function as expiry
from components.compute.labels import CAPACITY_BLOCK_TAG

BLOCK = "cr-0a1b2c3d4e5f60718"
OTHER_BLOCK = "cr-0f0e0d0c0b0a09080"
CLUSTER = "seedance-prod"


def warning(reservation_id=BLOCK, detail_type="Capacity Block Expiration Warning"):
    """The event as EventBridge hands it to a target (EC2 user guide, "Monitor Capacity Blocks")."""
    return {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": detail_type,
        "source": "aws.ec2",
        "account": "123456789012",
        "time": "2027-01-08T10:50:00Z",
        "region": "us-east-1",
        "resources": [f"arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{reservation_id}"],
        "detail": {"capacity-reservation-id": reservation_id, "end-date": "2027-01-08T11:30:00.000Z"},
    }


@pytest.fixture
def autoscaling(monkeypatch):
    with mock_aws():
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        ec2 = boto3.client("ec2", region_name="us-east-1")
        template = ec2.create_launch_template(
            LaunchTemplateName="block", LaunchTemplateData={"ImageId": "ami-12345678"}
        )
        client = boto3.client("autoscaling", region_name="us-east-1")
        for name, cluster, block in (
            ("campaign-block", CLUSTER, BLOCK),
            ("other-block", CLUSTER, OTHER_BLOCK),
            ("campaign-pool", CLUSTER, None),
            ("staging-block", "seedance-staging", BLOCK),
        ):
            tags = {f"kubernetes.io/cluster/{cluster}": "owned", **({CAPACITY_BLOCK_TAG: block} if block else {})}
            client.create_auto_scaling_group(
                AutoScalingGroupName=name,
                MinSize=2,
                MaxSize=2,
                DesiredCapacity=2,
                AvailabilityZones=["us-east-1b"],
                LaunchTemplate={"LaunchTemplateId": template["LaunchTemplate"]["LaunchTemplateId"], "Version": "1"},
                Tags=[{"Key": k, "Value": v, "PropagateAtLaunch": True} for k, v in tags.items()],
            )
        yield client


def sizes(client):
    return {
        g["AutoScalingGroupName"]: (g["MinSize"], g["MaxSize"], g["DesiredCapacity"])
        for g in client.describe_auto_scaling_groups()["AutoScalingGroups"]
    }


@pytest.mark.parametrize("detail_type", expiry.WARNING_DETAIL_TYPES)
def test_the_warned_blocks_group_goes_to_zero_and_nothing_else_moves(autoscaling, detail_type):
    outcome = expiry.drain(warning(detail_type=detail_type), autoscaling, CLUSTER)
    assert outcome == {"reservation": BLOCK, "drained": ["campaign-block"], "already_empty": []}
    assert sizes(autoscaling) == {
        "campaign-block": (0, 2, 0),
        "other-block": (2, 2, 2),
        "campaign-pool": (2, 2, 2),
        "staging-block": (2, 2, 2),
    }


def test_a_repeated_warning_finds_the_group_empty_and_changes_nothing(autoscaling, monkeypatch):
    expiry.drain(warning(), autoscaling, CLUSTER)
    monkeypatch.setattr(
        autoscaling, "update_auto_scaling_group", lambda **kwargs: pytest.fail(f"a second update: {kwargs}")
    )
    assert expiry.drain(warning(), autoscaling, CLUSTER) == {
        "reservation": BLOCK,
        "drained": [],
        "already_empty": ["campaign-block"],
    }


def test_a_group_emptied_but_still_holding_its_minimum_is_drained(autoscaling):
    """The start action sets the minimum to the block's count: a desired size of 0 alone would be refused."""
    autoscaling.update_auto_scaling_group(AutoScalingGroupName="campaign-block", MinSize=1, DesiredCapacity=1)
    assert expiry.drain(warning(), autoscaling, CLUSTER)["drained"] == ["campaign-block"]
    assert sizes(autoscaling)["campaign-block"] == (0, 2, 0)


@pytest.mark.parametrize(
    "detail",
    [
        {},
        {"capacity-reservation-id": None},
        {"capacity-reservation-id": "i-0123"},
        {"capacity-reservation-id": ["cr-0a1b2c3d4e5f60718"]},
    ],
)
def test_an_event_without_a_reservation_id_changes_nothing(autoscaling, detail):
    assert expiry.drain({**warning(), "detail": detail}, autoscaling, CLUSTER)["drained"] == []
    assert set(sizes(autoscaling).values()) == {(2, 2, 2)}


def test_every_page_of_groups_is_read(autoscaling):
    """Describe calls answer a page at a time: with pages of one group, both of the block's groups (one made
    by hand beside the stack's) are found on their own pages and drained."""
    template = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["campaign-block"])["AutoScalingGroups"][
        0
    ]["LaunchTemplate"]
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="campaign-block-by-hand",
        MinSize=1,
        MaxSize=1,
        DesiredCapacity=1,
        AvailabilityZones=["us-east-1b"],
        LaunchTemplate={"LaunchTemplateId": template["LaunchTemplateId"], "Version": "1"},
        Tags=[
            {"Key": k, "Value": v, "PropagateAtLaunch": True}
            for k, v in ((f"kubernetes.io/cluster/{CLUSTER}", "owned"), (CAPACITY_BLOCK_TAG, BLOCK))
        ],
    )

    class PagesOfOne:
        def get_paginator(self, name):
            paginator = autoscaling.get_paginator(name)
            return type(
                "Paginator",
                (),
                {"paginate": lambda _, **kwargs: paginator.paginate(PaginationConfig={"PageSize": 1}, **kwargs)},
            )()

        def __getattr__(self, name):
            return getattr(autoscaling, name)

    assert sorted(g["AutoScalingGroupName"] for g in expiry.block_groups(PagesOfOne(), CLUSTER, BLOCK)) == [
        "campaign-block",
        "campaign-block-by-hand",
    ]
    assert sorted(expiry.drain(warning(), PagesOfOne(), CLUSTER)["drained"]) == [
        "campaign-block",
        "campaign-block-by-hand",
    ]


def test_the_entry_point_reads_the_cluster_from_its_environment(autoscaling, monkeypatch):
    monkeypatch.setenv("CLUSTER_NAME", "seedance-staging")
    assert expiry.handler(warning())["drained"] == ["staging-block"]


def test_the_rule_matches_both_spellings_of_the_warning_for_the_stacks_blocks_only():
    pattern = expiry.warning_pattern([OTHER_BLOCK, BLOCK])
    assert pattern == {
        "source": ["aws.ec2"],
        "detail-type": list(expiry.WARNING_DETAIL_TYPES),
        "detail": {"capacity-reservation-id": [BLOCK, OTHER_BLOCK]},
    }
