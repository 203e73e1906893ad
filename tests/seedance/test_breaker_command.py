"""`seedance breaker`: the 95 % budget step on recorded Auto Scaling answers (botocore Stubber)."""

import json

import boto3
import pytest
from botocore.stub import Stubber

from seedance import breaker_command
from seedance.cli import main

CLASS_TAG = "k8s.io/cluster-autoscaler/node-template/label/seedance.io/workload-class"


def group(name, klass=None, base=1, percentage=100):
    tags = [{"Key": "kubernetes.io/cluster/seedance-dev", "Value": "owned", "ResourceId": name,
             "ResourceType": "auto-scaling-group", "PropagateAtLaunch": True},
            {"Key": "team", "Value": "ml-platform", "ResourceId": name, "ResourceType": "auto-scaling-group",
             "PropagateAtLaunch": True}]
    if klass:
        tags.append({"Key": CLASS_TAG, "Value": klass, "ResourceId": name, "ResourceType": "auto-scaling-group",
                     "PropagateAtLaunch": True})
    return {"AutoScalingGroupName": name, "AutoScalingGroupARN": f"arn:aws:autoscaling:us-west-2:123456789012:autoScalingGroup:x:autoScalingGroupName/{name}",
            "MinSize": 0, "MaxSize": 8, "DesiredCapacity": 2, "DefaultCooldown": 300, "AvailabilityZones": ["us-west-2a"],
            "HealthCheckType": "EC2", "CreatedTime": "2026-11-01T00:00:00Z", "Tags": tags,
            "MixedInstancesPolicy": {"InstancesDistribution": {"OnDemandBaseCapacity": base,
                                                               "OnDemandPercentageAboveBaseCapacity": percentage},
                                     "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateId": "lt-1"}}}}


@pytest.fixture
def autoscaling(monkeypatch):
    client = boto3.client("autoscaling", region_name="us-west-2", aws_access_key_id="k", aws_secret_access_key="s")
    stub = Stubber(client)
    stub.activate()
    filters = {"Filters": [{"Name": "tag-key", "Values": ["kubernetes.io/cluster/seedance-dev"]}]}
    stub.add_response("describe_auto_scaling_groups",
                      {"AutoScalingGroups": [group("seedance-dev-batch-asg", "batch")], "NextToken": "page-2"}, filters)
    stub.add_response("describe_auto_scaling_groups",
                      {"AutoScalingGroups": [group("seedance-dev-online-asg", "online", 1, 100),
                                             group("seedance-dev-other-asg")]}, {**filters, "NextToken": "page-2"})
    monkeypatch.setattr(breaker_command, "clients", lambda service, region: client)
    return stub


def test_without_apply_it_only_reports(autoscaling, capsys):
    assert main(["breaker", "--stack", "dev"]) == 0
    autoscaling.assert_no_pending_responses()  # read every page, changed nothing
    out = capsys.readouterr().out
    record = json.loads(out[: out.index("\n}\n") + 2])
    assert [g["name"] for g in record["groups"]] == ["seedance-dev-batch-asg", "seedance-dev-online-asg"]
    assert record["applied"] is False and record["groups"][0]["owner"] == "ml-platform"
    assert record["groups"][1]["before"] == {"on_demand_base_capacity": 1, "on_demand_percentage_above_base": 100}
    assert "2 GPU group(s) would go spot only" in out


def test_apply_moves_every_gpu_group_to_spot_only_and_tags_it(autoscaling, capsys):
    for name in ("seedance-dev-batch-asg", "seedance-dev-online-asg"):
        autoscaling.add_response("update_auto_scaling_group", {}, {
            "AutoScalingGroupName": name,
            "MixedInstancesPolicy": {"InstancesDistribution": {"OnDemandBaseCapacity": 0,
                                                               "OnDemandPercentageAboveBaseCapacity": 0}}})
        autoscaling.add_response("create_or_update_tags", {}, {"Tags": [{
            "ResourceId": name, "ResourceType": "auto-scaling-group", "Key": "seedance.io/budget-breaker",
            "Value": "on", "PropagateAtLaunch": False}]})
    assert main(["breaker", "--stack", "dev", "--apply"]) == 0
    autoscaling.assert_no_pending_responses()
    assert '"applied": true' in capsys.readouterr().out


def test_prod_is_refused(capsys):
    assert main(["breaker", "--stack", "prod"]) == 2
    assert "dev and staging only" in capsys.readouterr().err
