"""A purchased Capacity Block run by its pool (issue 38, item 3), planned by the real program under the mock
runtime: a plain launch template with the block's market type and reservation, a group in the block's zone
with the pool's labels and taints, scheduled to the block's size at its start and to zero before the
expiration warning, priced as paid at purchase and passed by the pack."""

import json
from datetime import UTC, datetime, timedelta

import yaml

from components.compute.labels import BREAKER_TAG, CAPACITY_BLOCK_TAG, POOL_TAINT_KEY
from components.plan.resources import ASG, LAUNCH_TEMPLATE
from seedance.cli import main, offline_plan
from tests.stacks import REPO

BLOCK_ID = "cr-0a1b2c3d4e5f60718"
SCHEDULE = "aws:autoscaling/schedule:Schedule"
# The program reads the clock: a block bought for a month from now, a week long (11:30 UTC, as AWS starts them).
START = (datetime.now(UTC) + timedelta(days=30)).replace(hour=11, minute=30, second=0, microsecond=0)
END = START + timedelta(days=7)


def text(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def block_stack(tmp_path, starts_at, ends_at, zone="us-east-1b", single_zone=False):
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    document["config"]["seedance-gpu:gpu_node_groups"].append(
        {
            "name": "campaign",
            "workload_class": "batch",
            "instance_types": ["p5.48xlarge"],
            "min_gpus": 0,
            "desired_gpus": 0,
            "max_gpus": 16,
            "single_zone": single_zone,
            "capacity_blocks": [
                {
                    "reservation_id": BLOCK_ID,
                    "instance_type": "p5.48xlarge",
                    "zone": zone,
                    "instance_count": 2,
                    "starts_at": starts_at,
                    "ends_at": ends_at,
                }
            ],
        }
    )
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def planned(tmp_path, starts_at=text(START), ends_at=text(END), **changes):
    plan, _ = offline_plan("prod", REPO / "infra", block_stack(tmp_path, starts_at, ends_at, **changes))
    block = [r for r in plan.resources if BLOCK_ID in r.name]
    return plan, block


def test_a_bought_block_runs_from_a_plain_template_in_its_zone_with_the_pools_nodes(tmp_path):
    plan, block = planned(tmp_path)
    (template,) = [r for r in block if r.type == LAUNCH_TEMPLATE]
    (group,) = [r for r in block if r.type == ASG]
    assert template.inputs["instanceType"] == "p5.48xlarge"
    assert template.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template.inputs["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": BLOCK_ID}
    }
    (pool_template,) = [r for r in plan.of_type(LAUNCH_TEMPLATE) if r.name.endswith("-campaign-template")]
    for key in ("metadataOptions", "networkInterfaces", "blockDeviceMappings", "userData", "imageId"):
        assert template.inputs[key] == pool_template.inputs[key], key  # IMDSv2, no public IP, the stack key
    # AWS: no mixed instances policy with a block; a specific template version; the block's zone only.
    assert "mixedInstancesPolicy" not in group.inputs and group.inputs["launchTemplate"]["version"] == "1"
    zones = {
        s.inputs["availabilityZone"]: s.id
        for s in plan.of_type("aws:ec2/subnet:Subnet")
        if s.name.startswith("seedance-prod-private")
    }
    assert group.inputs["vpcZoneIdentifiers"] == [zones["us-east-1b"]]
    tags = {t["key"]: t["value"] for t in group.inputs["tags"]}
    assert tags[CAPACITY_BLOCK_TAG] == BLOCK_ID and BREAKER_TAG not in tags  # prepaid: the breaker leaves it
    assert tags[f"k8s.io/cluster-autoscaler/node-template/taint/{POOL_TAINT_KEY}"] == "campaign:NoSchedule"
    assert tags["k8s.io/cluster-autoscaler/node-template/label/seedance.io/node-group"] == "campaign"
    assert group.inputs["protectFromScaleIn"] is False  # the scheduled drain must terminate
    assert (group.inputs["minSize"], group.inputs["maxSize"], group.inputs["desiredCapacity"]) == (0, 0, 0)
    (access,) = [r for r in plan.of_type("aws:eks/accessEntry:AccessEntry") if r.name.endswith("-campaign-access")]
    assert access.urn in group.dependencies  # a node launched mid-block can join: its role has its entry
    (hook,) = [r for r in block if r.type == "aws:autoscaling/lifecycleHook:LifecycleHook"]
    assert hook.inputs["heartbeatTimeout"] == 1800 and hook.inputs["lifecycleTransition"].endswith("TERMINATING")


def test_it_scales_to_the_block_at_its_start_and_to_zero_before_the_warning(tmp_path):
    _plan, block = planned(tmp_path)
    actions = {r.inputs["scheduledActionName"]: r.inputs for r in block if r.type == SCHEDULE}
    shape = lambda action: (action["startTime"], action["minSize"], action["maxSize"], action["desiredCapacity"])
    assert shape(actions["capacity-block-start"]) == (text(START), 2, 2, 2)
    assert shape(actions["capacity-block-drain"]) == (
        text(END - timedelta(minutes=90)),
        0,
        0,
        0,
    )  # 90 min before the end


def test_a_run_inside_the_window_declares_the_block_running_and_only_its_drain(tmp_path):
    now = datetime.now(UTC).replace(microsecond=0)
    _plan, block = planned(tmp_path, text(now - timedelta(days=1)), text(now + timedelta(days=2)))
    (group,) = [r for r in block if r.type == ASG]
    assert (group.inputs["minSize"], group.inputs["maxSize"], group.inputs["desiredCapacity"]) == (2, 2, 2)
    assert [r.inputs["scheduledActionName"] for r in block if r.type == SCHEDULE] == ["capacity-block-drain"]


def test_a_run_after_the_drain_or_an_edit_that_moved_it_past_declares_the_group_at_zero(tmp_path):
    """An `up` puts a missed or moved drain right: the group's size is what the actions due by now set."""
    now = datetime.now(UTC).replace(microsecond=0)
    _plan, block = planned(tmp_path, text(now - timedelta(days=1)), text(now + timedelta(minutes=100)))
    (group,) = [r for r in block if r.type == ASG]
    assert (group.inputs["minSize"], group.inputs["maxSize"], group.inputs["desiredCapacity"]) == (0, 0, 0)
    assert [r for r in block if r.type == SCHEDULE] == []


def test_a_block_outside_the_zones_its_group_launches_in_is_one_config_line(tmp_path, capsys):
    stack_file = block_stack(tmp_path, text(START), text(END), single_zone=True)
    assert main(["plan", "--stack", "prod", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'seedance-gpu:gpu_node_groups[3].capacity_blocks[0].zone = "us-east-1b"' in err
    assert "group campaign launches in us-east-1a" in err


def test_a_drain_too_short_for_the_pool_names_the_key(tmp_path, capsys):
    stack_file = block_stack(tmp_path, text(START), text(END))
    document = yaml.safe_load(stack_file.read_text())
    document["config"]["seedance-gpu:gpu_node_groups"][3]["capacity_blocks"][0]["drain_minutes_before_end"] = 45
    stack_file.write_text(yaml.safe_dump(document))
    assert main(["plan", "--stack", "prod", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "gpu_node_groups[3].capacity_blocks[0].drain_minutes_before_end = 45" in err and "allowed: 70 to 720" in err


def test_the_block_is_priced_as_paid_and_the_pack_passes_it(tmp_path, capsys):
    plan_file = tmp_path / "plan.json"
    stack_file = block_stack(tmp_path, text(START), text(END))
    assert (
        main(["plan", "--stack", "prod", "--stack-file", str(stack_file), "--json", str(plan_file), "--show-secrets"])
        == 0
    )
    out = capsys.readouterr().out
    assert "campaign: cr-0a1b2c3d4e5f60718, 2 x p5.48xlarge in us-east-1b" in out
    assert main(["check", "--plan", str(plan_file), "--stack-file", str(stack_file), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [
        v for v in document["violations"] if BLOCK_ID in (v.get("urn") or "") or "-block-expiry" in (v.get("urn") or "")
    ] == []
    assert any("-block-expiry" in r["urn"] for r in document["cost"]["resources"])  # the backstop was checked too
    (line,) = [r for r in document["cost"]["resources"] if r["urn"].endswith(f"{BLOCK_ID}-asg")]
    assert line["monthly_usd"] == 0.0 and "paid at purchase" in line["basis"]


def test_the_blocks_expiration_warning_drains_its_group_through_a_function_that_may_change_no_other(tmp_path):
    """The backstop of the scheduled drain: EventBridge sends this stack's blocks' warnings (both of AWS's
    spellings) to a function whose role may change only this cluster's block groups."""
    from components.compute.block_expiry_function import WARNING_DETAIL_TYPES
    from tests.policy_evaluation import Request, allows

    plan, _block = planned(tmp_path)
    expiry = [r for r in plan.resources if "-block-expiry" in r.name]
    (function,) = [r for r in expiry if r.type == "aws:lambda/function:Function"]
    assert function.inputs["handler"] == "block_expiry_function.handler"
    assert function.inputs["environment"]["variables"] == {"CLUSTER_NAME": "seedance-prod"}
    (rule,) = [r for r in expiry if r.type == "aws:cloudwatch/eventRule:EventRule"]
    assert json.loads(rule.inputs["eventPattern"]) == {
        "source": ["aws.ec2"],
        "detail-type": list(WARNING_DETAIL_TYPES),
        "detail": {"capacity-reservation-id": [BLOCK_ID]},
    }
    (target,) = [r for r in expiry if r.type == "aws:cloudwatch/eventTarget:EventTarget"]
    (permission,) = [r for r in expiry if r.type == "aws:lambda/permission:Permission"]
    assert {function.urn, rule.urn} <= set(target.dependencies)  # the rule's target is the function
    assert target.inputs["arn"].endswith(":function:seedance-prod-block-expiry")
    assert (permission.inputs["principal"], permission.inputs["sourceArn"]) == (
        "events.amazonaws.com",
        f"arn:aws:events:us-east-1:123456789012:rule/{rule.id}",
    )  # invoked by that rule only
    (policy,) = [r for r in expiry if r.type == "aws:iam/rolePolicy:RolePolicy"]
    document = json.loads(policy.inputs["policy"])
    group = "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:uuid:autoScalingGroupName/g"
    owned = {"autoscaling:ResourceTag/kubernetes.io/cluster/seedance-prod": "owned"}
    block_tag = {f"autoscaling:ResourceTag/{CAPACITY_BLOCK_TAG}": BLOCK_ID}
    assert allows(document, Request("autoscaling:UpdateAutoScalingGroup", group, {**owned, **block_tag}))
    assert not allows(document, Request("autoscaling:UpdateAutoScalingGroup", group, owned))  # the pool's own group
    assert not allows(document, Request("autoscaling:UpdateAutoScalingGroup", group, block_tag))  # another cluster's
    assert not allows(document, Request("autoscaling:CreateOrUpdateTags", group, {**owned, **block_tag}))
    (block_template,) = [r for r in plan.of_type(LAUNCH_TEMPLATE) if BLOCK_ID in r.name]
    (pool_template,) = [r for r in plan.of_type(LAUNCH_TEMPLATE) if r.name.endswith("-campaign-template")]
    arn = lambda template: f"arn:aws:ec2:us-east-1:123456789012:launch-template/{template.id}"
    launch = lambda template: Request("ec2:RunInstances", "*", {"ec2:LaunchTemplate": arn(template)})
    assert allows(document, launch(block_template)) and not allows(document, launch(pool_template))


def test_a_stack_without_blocks_has_no_expiry_function():
    plan, _ = offline_plan("prod", REPO / "infra", None)
    assert [r for r in plan.resources if "-block-expiry" in r.name] == []


def test_the_termination_handler_completes_the_block_groups_drains_too(tmp_path):
    """Its CompleteLifecycleAction on a block group's drain hook would be refused, and each node would wait
    out the hook's 30-minute heartbeat, were the block's group not among the handler's groups."""
    plan, block = planned(tmp_path)
    (group,) = [r for r in block if r.type == ASG]
    (policy,) = [r for r in plan.of_type("aws:iam/rolePolicy:RolePolicy") if "interruptions" in r.name]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    (complete,) = [s for s in statements if "autoscaling:CompleteLifecycleAction" in s["Action"]]
    named = {arn.split(":autoScalingGroupName/")[1].rsplit("-", 1)[0] for arn in complete["Resource"]}
    assert group.name in named
    assert named == {asg.name for asg in plan.of_type(ASG)}
