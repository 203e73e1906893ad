"""The GPU node groups in each stack's offline plan: the ASG renders the capacity plan, nodes are locked down."""

import base64
import json
import math

import pytest

import components.stack.capacity
from components.capacity.lock import build_lock, render_lock
from components.catalog.instance_types import gpu_instance_type
from components.compute.node_bootstrap import AMI_FAMILY_TRAITS
from components.stack.capacity import decide_stack
from seedance.cli import offline_plan
from tests.components.markets import NOW, FakeLiveSource
from tests.stacks import REPO, stack_config

ASG = "aws:autoscaling/group:Group"


def group_resources(plan, group):
    prefix = f"{plan.outputs['cluster_name']}-{group}-"
    return {r.type: r for r in plan.resources if r.name.startswith(prefix)}


def spot_share_at(distribution, size):
    above = max(0, size - distribution["onDemandBaseCapacity"])
    return above * (100 - distribution["onDemandPercentageAboveBaseCapacity"]) / 100 / size


def on_demand_at(distribution, size):
    """Instances an Auto Scaling group runs on demand at `size` (fractions round in favour of On-Demand)."""
    base = distribution["onDemandBaseCapacity"]
    return min(size, base) + math.ceil(max(0, size - base) * distribution["onDemandPercentageAboveBaseCapacity"] / 100)


def assert_asg_renders(asg, plan, gpus_per_instance):
    policy = asg.inputs["mixedInstancesPolicy"]
    distribution = policy["instancesDistribution"]
    base_gpus = distribution["onDemandBaseCapacity"] * gpus_per_instance
    assert plan["on_demand_base_gpus"] <= base_gpus < plan["on_demand_base_gpus"] + gpus_per_instance
    assert distribution["onDemandPercentageAboveBaseCapacity"] == plan["on_demand_percentage_above_base"]
    assert distribution["spotAllocationStrategy"] == "price-capacity-optimized"
    assert distribution["onDemandAllocationStrategy"] == "prioritized"
    overrides = policy["launchTemplate"]["overrides"]
    assert [o["instanceType"] for o in overrides] == plan["instance_types"]
    assert asg.inputs["capacityRebalance"] is bool(plan["spot_types"])
    # Launches that fail in one zone go to the others: the placement rule lets spot start when one zone can host it.
    assert asg.inputs["availabilityZoneDistribution"] == {"capacityDistributionStrategy": "balanced-best-effort"}
    return distribution, overrides


def test_spot_plans_have_spot_in_every_group(mixed_stack_plan, request):
    """What the fixture promises, so the tests below really see spot mixes."""
    groups = mixed_stack_plan.outputs["reports"]["capacity"]["groups"]
    spot = request.node.callspec.params["mixed_stack_plan"][1] == "spot"
    assert all(bool(g["spot_types"]) == spot and (g["max_spot_share"] > 0) == spot for g in groups.values())


def test_each_group_asg_renders_its_capacity_plan_within_the_class_cap(mixed_stack_plan):
    stack_plan = mixed_stack_plan
    groups = stack_plan.outputs["reports"]["capacity"]["groups"]
    configs = {g.name: g for g in stack_config(stack_plan.stack).gpu_node_groups}
    assert set(groups) == set(configs)
    for name, plan in groups.items():
        config = configs[name]
        asg = group_resources(stack_plan, name)[ASG]
        distribution, overrides = assert_asg_renders(asg, plan, config.gpus_per_instance)
        # AWS documents DesiredCapacityType for attribute-based selection only.
        assert "desiredCapacityType" not in asg.inputs
        # The cluster autoscaler ignores weights and counts instances (kubernetes/autoscaler#4851):
        # sizes are instances, and every type in the group has the same GPU count.
        assert all(o.get("weightedCapacity") in (None, "1") for o in overrides)
        assert len({gpu_instance_type(o["instanceType"]).gpus for o in overrides}) == 1
        sizes = (asg.inputs["minSize"], asg.inputs["desiredCapacity"], asg.inputs["maxSize"])
        assert [n * config.gpus_per_instance for n in sizes] == [config.min_gpus, config.desired_gpus, config.max_gpus]


def test_base_and_spot_cap_hold_at_every_size_the_autoscaler_may_choose(mixed_stack_plan):
    """From min through desired to max, as the autoscaler moves the group: the RI/baseline GPUs stay on
    demand once the group is that large, and spot never exceeds the class cap."""
    stack_plan = mixed_stack_plan
    groups = stack_plan.outputs["reports"]["capacity"]["groups"]
    for config in stack_config(stack_plan.stack).gpu_node_groups:
        asg = group_resources(stack_plan, config.name)[ASG]
        distribution = asg.inputs["mixedInstancesPolicy"]["instancesDistribution"]
        cap = config.workload().max_spot_share
        base_gpus = groups[config.name]["on_demand_base_gpus"]
        for size in range(max(1, int(asg.inputs["minSize"])), int(asg.inputs["maxSize"]) + 1):
            on_demand = on_demand_at(distribution, size)
            assert (size - on_demand) / size <= cap + 1e-9, (config.name, size)
            assert on_demand * config.gpus_per_instance >= min(base_gpus, size * config.gpus_per_instance)


def test_nodes_join_with_labels_and_taint_and_no_public_ip(stack_plan):
    for name in ("batch", "online"):
        resources = group_resources(stack_plan, name)
        template = resources["aws:ec2/launchTemplate:LaunchTemplate"]
        user_data = base64.b64decode(template.inputs["userData"]).decode()
        assert f'"seedance.io/node-group" = "{name}"' in user_data or f"seedance.io/node-group={name}" in user_data
        assert "nvidia.com/gpu" in user_data
        assert template.inputs["networkInterfaces"][0]["associatePublicIpAddress"] == "false"
        assert template.inputs["metadataOptions"]["httpTokens"] == "required"
        assert template.inputs["imageId"].startswith("ami-")
        assert resources["aws:eks/accessEntry:AccessEntry"].inputs["type"] == "EC2_LINUX"
        tags = {t["key"]: t for t in resources[ASG].inputs["tags"]}
        managed = f"aws-node-termination-handler/managed/{stack_config(stack_plan.stack).cluster_name}"
        assert tags[managed]["propagateAtLaunch"] is True
        assert tags["k8s.io/cluster-autoscaler/enabled"]["value"] == "true"
        assert tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"]["value"] == "true:NoSchedule"
        hook = resources["aws:autoscaling/lifecycleHook:LifecycleHook"]
        assert hook.inputs["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING"
        # Scale from zero: the template promises what a node of the group offers after sharing.
        gpus = tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"]["value"]
        pool = next(p for p in stack_plan.outputs["gpu_pools"] if p["name"] == name)
        assert {int(gpus)} == set(pool["gpus_per_node"].values())
        assert "k8s.amazonaws.com/accelerator" in user_data  # a GPU node before its plugin reports GPUs


def test_every_volume_the_ami_maps_is_encrypted_with_the_stack_key(stack_plan):
    """An unmapped AMI device keeps the snapshot's size and default encryption: Bottlerocket keeps
    images and containers on /dev/xvdb, so a template mapping only /dev/xvda leaves that volume
    unencrypted by the stack key and at 20 GiB."""
    for name in ("batch", "online"):
        family = stack_config(stack_plan.stack).gpu_node_groups[["batch", "online"].index(name)].ami_family
        traits = AMI_FAMILY_TRAITS[family]
        template = group_resources(stack_plan, name)["aws:ec2/launchTemplate:LaunchTemplate"]
        mappings = {m["deviceName"]: m["ebs"] for m in template.inputs["blockDeviceMappings"]}
        assert set(mappings) == set(traits.block_devices), (stack_plan.stack, name)
        for ebs in mappings.values():
            assert (ebs["encrypted"], ebs["kmsKeyId"]) == ("true", stack_plan.outputs["kms_key_arn"])
        sizes = {device: ebs.get("volumeSize") for device, ebs in mappings.items()}
        assert sizes.pop(traits.image_device) >= 50 and not any(sizes.values())


def test_instance_refresh_rolls_on_every_launch_template_change(stack_plan):
    """The provider starts no refresh for "$Latest"/"$Default": the group must name the template's
    version number, read from the template, so a new AMI or user data makes a new version and a roll."""
    for name in ("batch", "online"):
        resources = group_resources(stack_plan, name)
        asg, template = resources[ASG], resources["aws:ec2/launchTemplate:LaunchTemplate"]
        assert asg.inputs["instanceRefresh"]["strategy"] == "Rolling"
        spec = asg.inputs["mixedInstancesPolicy"]["launchTemplate"]["launchTemplateSpecification"]
        assert spec["version"].isdigit(), spec["version"]
        assert template.urn in asg.dependencies


def test_termination_handler_completes_lifecycle_actions_of_this_stacks_groups_only(stack_plan):
    (policy,) = [r for r in stack_plan.of_type("aws:iam/rolePolicy:RolePolicy") if "interruptions" in r.name]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    (complete,) = [s for s in statements if "autoscaling:CompleteLifecycleAction" in s["Action"]]
    named = [arn.split(":autoScalingGroupName/")[1] for arn in complete["Resource"]]
    assert all(arn.startswith("arn:aws:autoscaling:") for arn in complete["Resource"])
    assert sorted(n.rsplit("-", 1)[0] for n in named) == sorted(asg.name for asg in stack_plan.of_type(ASG))


def test_spot_interruptions_reach_the_termination_handler(stack_plan):
    # the interruption rules (the breaker's schedule is a rule too, with no pattern)
    rules = [r for r in stack_plan.of_type("aws:cloudwatch/eventRule:EventRule") if "eventPattern" in r.inputs]
    patterns = [json.loads(r.inputs["eventPattern"]) for r in rules]
    kinds = {p["detail-type"][0] for p in patterns}
    assert {"EC2 Spot Instance Interruption Warning", "EC2 Instance-terminate Lifecycle Action"} <= kinds
    # A recommendation drains a node nothing replaces (queue mode); a rebalancing group's own replacement
    # terminates through the lifecycle hook, drained by the rule above.
    assert "EC2 Instance Rebalance Recommendation" not in kinds
    # Scheduled retirements and maintenance, as the handler's README lists them.
    assert {
        "source": ["aws.health"],
        "detail-type": ["AWS Health Event"],
        "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]},
    } in patterns
    (queue_policy,) = stack_plan.of_type("aws:sqs/queuePolicy:QueuePolicy")
    statement = json.loads(queue_policy.inputs["policy"])["Statement"][0]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert len(statement["Condition"]["ArnEquals"]["aws:SourceArn"]) == len(rules)
    (release,) = [
        r
        for r in stack_plan.of_type("kubernetes:helm.sh/v3:Release")
        if "node-termination-handler" in r.inputs["chart"]
    ]
    values = release.inputs["values"]
    assert values["enableSqsTerminationDraining"] is True
    assert values["queueURL"].startswith("https://sqs.")
    # The chart's IMDS-mode keys do nothing in queue mode (its Deployment does not read them).
    imds_only = {
        "enableSpotInterruptionDraining",
        "enableRebalanceDraining",
        "enableRebalanceMonitoring",
        "enableScheduledEventDraining",
    }
    assert not imds_only & set(values)


def test_a_stacks_handler_hears_and_drains_its_own_groups_only(stack_plan):
    """Stacks sharing an account and region each have a handler: each rule's lifecycle actions are its own
    groups', and each handler drains only the instances that carry its cluster's tag."""
    cluster = stack_config(stack_plan.stack).cluster_name
    groups = stack_plan.of_type(ASG)
    (terminate,) = [
        json.loads(r.inputs["eventPattern"])
        for r in stack_plan.of_type("aws:cloudwatch/eventRule:EventRule")
        if "Instance-terminate" in r.inputs.get("eventPattern", "")
    ]
    named = terminate["detail"]["AutoScalingGroupName"]
    assert sorted(n.rsplit("-", 1)[0] for n in named) == sorted(g.name for g in groups)
    (release,) = [
        r
        for r in stack_plan.of_type("kubernetes:helm.sh/v3:Release")
        if "node-termination-handler" in r.inputs["chart"]
    ]
    assert release.inputs["values"]["managedTag"] == f"aws-node-termination-handler/managed/{cluster}"
    for group in groups:
        assert {t["key"] for t in group.inputs["tags"]} >= {release.inputs["values"]["managedTag"]}
        assert not [t for t in group.inputs["tags"] if t["key"] == "aws-node-termination-handler/managed"]


def test_a_lock_with_spot_drives_the_asg(tmp_path, monkeypatch):
    config = stack_config("prod")
    result = decide_stack(
        config,
        ("us-east-1a", "us-east-1b", "us-east-1c"),
        [FakeLiveSource(0.3)],
        config.capacity.configured_holdings(),
        {},
        NOW,
    )
    lock = build_lock(
        None, "prod", config.region, NOW, "live", config.capacity.settings(), result.decisions, result.book
    )
    path = tmp_path / "capacity.prod.lock.json"
    path.write_text(render_lock(lock))
    monkeypatch.setattr(components.stack.capacity, "lock_path", lambda _dir, _stack: path)
    plan, _header = offline_plan("prod", REPO / "infra", None)
    assert plan.outputs["reports"]["capacity"]["origin"].startswith("lock capacity.prod.lock.json")
    batch = lock.plans()["batch"]
    assert batch.spot_types
    distribution, _ = assert_asg_renders(
        group_resources(plan, "batch")[ASG],
        {
            "on_demand_base_gpus": batch.on_demand_base_gpus,
            "on_demand_percentage_above_base": batch.on_demand_percentage_above_base,
            "instance_types": list(batch.instance_types),
            "spot_types": list(batch.spot_types),
        },
        gpus_per_instance=4,
    )
    assert 0 < spot_share_at(distribution, 64 // 4) <= 0.9


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_stack_configs_declare_a_batch_and_an_online_group(stack):
    assert {g.workload_class for g in stack_config(stack).gpu_node_groups} == {"batch", "online"}


def test_no_group_promises_a_gpu_model_some_of_its_nodes_lack(stack_plan):
    """The accelerator label names a model only when every type the group may launch has it (a group of
    g6, g5 and g6e launches L4, A10G or L40S); the autoscaler reads only that the label is there."""
    from components.catalog.instance_types import gpu_instance_type
    from tests.k8s_checks import node_labels

    for group in stack_config(stack_plan.stack).gpu_node_groups:
        (asg,) = [
            a
            for a in stack_plan.of_type("aws:autoscaling/group:Group")
            if node_labels(a).get("seedance.io/node-group") == group.name
        ]
        models = {gpu_instance_type(t).gpu.lower() for t in group.instance_types}
        label = node_labels(asg)["k8s.amazonaws.com/accelerator"]
        assert label == (f"nvidia-{models.pop()}" if len(models) == 1 else "nvidia"), group.name


def test_a_stockout_in_one_zone_does_not_fail_the_groups_creation(stack_plan):
    """Issue 37, item 1: the provider waits for capacity only when wait_for_capacity_timeout is above 0 and
    fails on any Failed scaling activity; the GPU groups skip the wait (nodes joining is the cluster's to
    judge) and ignore failed activities."""
    groups = stack_plan.of_type("aws:autoscaling/group:Group")
    assert groups
    for group in groups:
        assert group.inputs["waitForCapacityTimeout"] == "0"
        assert group.inputs["ignoreFailedScalingActivities"] is True
