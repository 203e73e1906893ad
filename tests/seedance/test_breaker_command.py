"""`seedance breaker`: the 95 % budget step on recorded Auto Scaling answers (botocore Stubber)."""

import json
from datetime import UTC

import boto3
import pytest
from botocore.stub import Stubber

from seedance import breaker_command
from seedance.cli import main

CLASS_TAG = "k8s.io/cluster-autoscaler/node-template/label/seedance.io/workload-class"


def group(name, klass=None, base=1, percentage=100):
    tags = [
        {
            "Key": "kubernetes.io/cluster/seedance-dev",
            "Value": "owned",
            "ResourceId": name,
            "ResourceType": "auto-scaling-group",
            "PropagateAtLaunch": True,
        },
        {
            "Key": "team",
            "Value": "ml-platform",
            "ResourceId": name,
            "ResourceType": "auto-scaling-group",
            "PropagateAtLaunch": True,
        },
    ]
    if klass:
        tags.append(
            {
                "Key": CLASS_TAG,
                "Value": klass,
                "ResourceId": name,
                "ResourceType": "auto-scaling-group",
                "PropagateAtLaunch": True,
            }
        )
    return {
        "AutoScalingGroupName": name,
        "AutoScalingGroupARN": (
            f"arn:aws:autoscaling:us-west-2:123456789012:autoScalingGroup:x:autoScalingGroupName/{name}"
        ),
        "MinSize": 0,
        "MaxSize": 8,
        "DesiredCapacity": 2,
        "DefaultCooldown": 300,
        "AvailabilityZones": ["us-west-2a"],
        "HealthCheckType": "EC2",
        "CreatedTime": "2026-11-01T00:00:00Z",
        "Tags": tags,
        "MixedInstancesPolicy": {
            "InstancesDistribution": {"OnDemandBaseCapacity": base, "OnDemandPercentageAboveBaseCapacity": percentage},
            "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateId": "lt-1"}},
        },
    }


@pytest.fixture
def autoscaling(monkeypatch):
    client = boto3.client("autoscaling", region_name="us-west-2", aws_access_key_id="k", aws_secret_access_key="s")
    stub = Stubber(client)
    stub.activate()
    filters = {"Filters": [{"Name": "tag-key", "Values": ["kubernetes.io/cluster/seedance-dev"]}]}
    stub.add_response(
        "describe_auto_scaling_groups",
        {"AutoScalingGroups": [group("seedance-dev-batch-asg", "batch")], "NextToken": "page-2"},
        filters,
    )
    stub.add_response(
        "describe_auto_scaling_groups",
        {"AutoScalingGroups": [group("seedance-dev-online-asg", "online", 1, 100), group("seedance-dev-other-asg")]},
        {**filters, "NextToken": "page-2"},
    )
    monkeypatch.setattr(breaker_command, "clients", lambda service, region: client)
    return stub


def test_without_apply_it_only_reports(autoscaling, capsys):
    assert main(["breaker", "--stack", "dev"]) == 0
    autoscaling.assert_no_pending_responses()  # read every page, changed nothing
    out = capsys.readouterr().out
    record = json.loads(out[: out.index("\n}\n") + 2])
    assert [g["name"] for g in record["groups"]] == ["seedance-dev-batch-asg", "seedance-dev-online-asg"]
    assert record["applied"] is False and record["groups"][0]["owner"] == "ml-platform"
    # 95 % includes the 85 % step: batch groups (experiments) also stop growing.
    assert record["groups"][0]["after"] == {"max_size": 2, "on_demand_base": 0, "on_demand_percentage": 0}
    assert record["groups"][1]["before"] == {"on_demand_base": 1, "on_demand_percentage": 100}
    assert "2 GPU group(s) would change" in out


def test_apply_moves_every_gpu_group_to_spot_only_and_tags_what_it_replaced(autoscaling, capsys):
    policy = {
        "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateId": "lt-1"}},
        "InstancesDistribution": {"OnDemandBaseCapacity": 0, "OnDemandPercentageAboveBaseCapacity": 0},
    }
    for name, extra, before in (
        ("seedance-dev-batch-asg", {"MaxSize": 2}, {"max_size": 8, "on_demand_base": 1, "on_demand_percentage": 100}),
        ("seedance-dev-online-asg", {}, {"on_demand_base": 1, "on_demand_percentage": 100}),
    ):
        # What it replaces is recorded on the group first, so a retry after a failed update still knows it.
        autoscaling.add_response(
            "create_or_update_tags",
            {},
            {
                "Tags": [
                    {
                        "ResourceId": name,
                        "ResourceType": "auto-scaling-group",
                        "Key": "seedance.io/budget-breaker-before",
                        "Value": json.dumps(before, sort_keys=True),
                        "PropagateAtLaunch": False,
                    },
                    # and the ceiling the 85 % step set, which later runs keep
                    *(
                        [
                            {
                                "ResourceId": name,
                                "ResourceType": "auto-scaling-group",
                                "Key": "seedance.io/budget-breaker-ceiling",
                                "Value": str(extra["MaxSize"]),
                                "PropagateAtLaunch": False,
                            }
                        ]
                        if "MaxSize" in extra
                        else []
                    ),
                ]
            },
        )
        autoscaling.add_response(
            "update_auto_scaling_group", {}, {"AutoScalingGroupName": name, **extra, "MixedInstancesPolicy": policy}
        )
        autoscaling.add_response(
            "create_or_update_tags",
            {},
            {
                "Tags": [
                    {
                        "ResourceId": name,
                        "ResourceType": "auto-scaling-group",
                        "Key": "seedance.io/budget-breaker",
                        "Value": "on",
                        "PropagateAtLaunch": False,
                    }
                ]
            },
        )
    assert main(["breaker", "--stack", "dev", "--apply"]) == 0
    autoscaling.assert_no_pending_responses()
    assert '"applied": true' in capsys.readouterr().out


def test_prod_is_refused(capsys):
    assert main(["breaker", "--stack", "prod"]) == 2
    assert "dev and staging only" in capsys.readouterr().err


def test_apply_against_stateful_auto_scaling_changes_only_this_clusters_gpu_groups(monkeypatch, capsys):
    """moto keeps the groups' state: after the breaker the GPU groups are spot only and tagged, and a
    group of another cluster and a group without a workload class are as they were."""
    from moto import mock_aws

    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-west-2")
        template = ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={"ImageId": "ami-12345678"})
        template_id = template["LaunchTemplate"]["LaunchTemplateId"]
        autoscaling = boto3.client("autoscaling", region_name="us-west-2")

        def create(name, cluster, klass=None):
            tags = [
                {"Key": f"kubernetes.io/cluster/{cluster}", "Value": "owned"},
                {"Key": "team", "Value": "ml-platform"},
            ]
            tags += [{"Key": CLASS_TAG, "Value": klass}] if klass else []
            autoscaling.create_auto_scaling_group(
                AutoScalingGroupName=name,
                MinSize=0,
                MaxSize=4,
                DesiredCapacity=0,
                AvailabilityZones=["us-west-2a"],
                Tags=[{**t, "PropagateAtLaunch": True} for t in tags],
                MixedInstancesPolicy={
                    "LaunchTemplate": {
                        "LaunchTemplateSpecification": {"LaunchTemplateId": template_id, "Version": "1"},
                        "Overrides": [{"InstanceType": "g6.xlarge"}, {"InstanceType": "g5.xlarge"}],
                    },
                    "InstancesDistribution": {"OnDemandBaseCapacity": 1, "OnDemandPercentageAboveBaseCapacity": 100},
                },
            )

        create("seedance-dev-batch-asg", "seedance-dev", "batch")
        create("seedance-dev-online-asg", "seedance-dev", "online")
        create("seedance-dev-tooling-asg", "seedance-dev")  # no workload class: not a GPU group
        create("other-cluster-batch-asg", "other-cluster", "batch")
        monkeypatch.setattr(breaker_command, "clients", lambda service, region: autoscaling)
        assert main(["breaker", "--stack", "dev", "--apply"]) == 0
        groups = {g["AutoScalingGroupName"]: g for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]}

    def distribution(name):
        found = groups[name]["MixedInstancesPolicy"]["InstancesDistribution"]
        return found["OnDemandBaseCapacity"], found["OnDemandPercentageAboveBaseCapacity"]

    def tagged(name):
        return any(t["Key"] == "seedance.io/budget-breaker" and t["Value"] == "on" for t in groups[name]["Tags"])

    for name in ("seedance-dev-batch-asg", "seedance-dev-online-asg"):
        assert distribution(name) == (0, 0) and tagged(name), name
        overrides = groups[name]["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"]
        assert [o["InstanceType"] for o in overrides] == ["g6.xlarge", "g5.xlarge"]  # the template and types kept
    for name in ("seedance-dev-tooling-asg", "other-cluster-batch-asg"):
        assert distribution(name) == (1, 100) and not tagged(name), name
    assert '"applied": true' in capsys.readouterr().out


def test_a_reset_puts_the_groups_back_and_records_it_so_the_hold_stops(monkeypatch, capsys):
    """Issue 37, item 2: the function holds the month's step until a reset; the reset is recorded in the
    stack's incident bucket under the stack's budget, where the function looks."""
    from datetime import datetime

    from moto import mock_aws

    from components.cost import breaker_function as breaker

    with mock_aws():
        region = "us-west-2"
        ec2 = boto3.client("ec2", region_name=region)
        template = ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={"ImageId": "ami-12345678"})
        autoscaling = boto3.client("autoscaling", region_name=region)
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName="seedance-dev-batch-asg",
            MinSize=0,
            MaxSize=4,
            DesiredCapacity=0,
            AvailabilityZones=[f"{region}a"],
            Tags=[
                {"Key": k, "Value": v, "PropagateAtLaunch": True}
                for k, v in (
                    ("kubernetes.io/cluster/seedance-dev", "owned"),
                    (CLASS_TAG, "batch"),
                    (
                        "seedance.io/budget-breaker-before",
                        json.dumps({"on_demand_base": 1, "on_demand_percentage": 100}),
                    ),
                    ("seedance.io/budget-breaker", "on"),
                )
            ],
            MixedInstancesPolicy={
                "LaunchTemplate": {
                    "LaunchTemplateSpecification": {
                        "LaunchTemplateId": template["LaunchTemplate"]["LaunchTemplateId"],
                        "Version": "1",
                    },
                    "Overrides": [{"InstanceType": "g6.xlarge"}],
                },
                "InstancesDistribution": {"OnDemandBaseCapacity": 0, "OnDemandPercentageAboveBaseCapacity": 0},
            },
        )
        account = boto3.client("sts", region_name=region).get_caller_identity()["Account"]
        bucket = breaker.incident_bucket("seedance-dev", account)
        s3 = boto3.client("s3", region_name=region)
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})
        budget = breaker.monthly_budget("seedance-dev")
        now = datetime.now(UTC)
        s3.put_object(Bucket=bucket, Key=f"incidents/{now:%Y-%m}/{budget}/95.json", Body=b"{}")
        settings = breaker.Settings(
            stack="dev",
            env="dev",
            cluster_name="seedance-dev",
            budget_name=budget,
            account_id=account,
            bucket=bucket,
            key_arn="",
            topic_arn="",
        )
        assert breaker.held_step(s3, settings, now) == 95
        monkeypatch.setattr(
            breaker_command, "clients", lambda service, region: boto3.client(service, region_name=region)
        )
        assert main(["breaker", "--stack", "dev", "--reset"]) == 0
        assert "1 GPU group(s) put back" in capsys.readouterr().out
        assert breaker.held_step(s3, settings, now) is None


def test_one_deadline_ends_a_breaker_whose_endpoint_never_answers(monkeypatch, capsys):
    """Issue 37, item 5: Auto Scaling that accepts and never answers ends the command within --timeout, exit 2,
    one line that says groups may have changed when it was changing them."""
    import threading
    import time

    never = threading.Event()

    def hanging(service, region):
        never.wait(30)
        raise AssertionError("the deadline should have ended the command first")

    monkeypatch.setattr(breaker_command, "clients", hanging)
    for argv, partly in ((["--stack", "dev"], False), (["--stack", "dev", "--apply"], True)):
        started = time.monotonic()
        assert main(["breaker", *argv, "--timeout", "0.5"]) == 2
        assert time.monotonic() - started < 5
        err = capsys.readouterr().err
        assert "no answer within 0.5 s" in err and len(err.strip().splitlines()) == 1, err
        assert ("some groups may have changed" in err) == partly
    never.set()
