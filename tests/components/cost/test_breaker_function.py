"""The budget breaker's Lambda code against moto's Auto Scaling, S3 and SNS, fed AWS Budgets
notifications as they reach SNS: each step, a repeated and an out-of-order message, a forecast, prod,
the reset, and what is not a budget alert."""

import json
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from components.compute.labels import CAPACITY_BLOCK_TAG
from components.cost import breaker as breaker_component
from components.cost import breaker_function as breaker

CLASS_TAG = breaker.CLASS_TAG
BUDGET = "seedance-dev-budget-monthly"
NOW = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def notification(percent, kind="ACTUAL", budget=BUDGET, budgeted=6000.0, date="December 05, 2026"):
    """The text AWS Budgets publishes to an SNS topic."""
    threshold = budgeted * percent / 100
    return (
        f"AWS Budget Notification {date}\nAWS Account 123456789012\n\nDear AWS Customer,\n\nYou requested that "
        f"we alert you when the {kind} Cost associated with your {budget} budget is greater than {percent}% for "
        f"the current month. The {kind} Cost associated with this budget is ${threshold + 12.34:,.2f}. You can "
        f"find additional details below and by accessing the AWS Budgets dashboard [1].\n\nBudget Name: {budget}\n"
        f"Budget Type: Cost\nBudgeted Amount: ${budgeted:,.2f}\nAlert Type: {kind}\n"
        f"Alert Threshold: > ${threshold:,.2f}\n{kind} Amount: ${threshold + 12.34:,.2f}\n\n"
        "[1] https://console.aws.amazon.com/billing/home#/budgets\n"
    )


def sns(message, message_id="m-1", subject=f"AWS Budgets: {BUDGET} has exceeded your alert threshold"):
    return {"Type": "Notification", "MessageId": message_id, "Subject": subject, "Message": message}


@pytest.fixture
def account(monkeypatch):
    # UpdateAutoScalingGroup changes only the parameters given; moto clears the mixed instances policy
    # when an update omits it, so keep it there as AWS does.
    from moto.autoscaling.models import FakeAutoScalingGroup

    update = FakeAutoScalingGroup.update

    def keeping_policy(self, *args, **kwargs):
        kept = self.mixed_instances_policy
        update(self, *args, **kwargs)
        if self.mixed_instances_policy is None:
            self.mixed_instances_policy = kept

    monkeypatch.setattr(FakeAutoScalingGroup, "update", keeping_policy)
    with mock_aws():
        region = "us-west-2"
        monkeypatch.setenv("AWS_DEFAULT_REGION", region)
        ec2 = boto3.client("ec2", region_name=region)
        template = ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={"ImageId": "ami-12345678"})
        autoscaling = boto3.client("autoscaling", region_name=region)
        for name, klass in (("seedance-dev-batch-asg", "batch"), ("seedance-dev-online-asg", "online")):
            autoscaling.create_auto_scaling_group(
                AutoScalingGroupName=name,
                MinSize=0,
                MaxSize=8,
                DesiredCapacity=2,
                AvailabilityZones=[f"{region}a"],
                Tags=[
                    {"Key": k, "Value": v, "PropagateAtLaunch": True}
                    for k, v in (
                        ("kubernetes.io/cluster/seedance-dev", "owned"),
                        ("team", "ml-platform"),
                        (CLASS_TAG, klass),
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
                    "InstancesDistribution": {"OnDemandBaseCapacity": 1, "OnDemandPercentageAboveBaseCapacity": 30},
                },
            )
        key = boto3.client("kms", region_name=region).create_key()["KeyMetadata"]["Arn"]
        s3 = boto3.client("s3", region_name=region)
        s3.create_bucket(Bucket="incidents", CreateBucketConfiguration={"LocationConstraint": region})
        topic = boto3.client("sns", region_name=region).create_topic(Name="alerts")["TopicArn"]
        sqs = boto3.client("sqs", region_name=region)
        queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        boto3.client("sns", region_name=region).subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
        budgets = boto3.client("budgets", region_name="us-east-1")
        account = boto3.client("sts", region_name=region).get_caller_identity()["Account"]
        budgets.create_budget(
            AccountId=account,
            Budget={
                "BudgetName": BUDGET,
                "BudgetType": "COST",
                "TimeUnit": "MONTHLY",
                "BudgetLimit": {"Amount": "6000", "Unit": "USD"},
                "CalculatedSpend": {"ActualSpend": {"Amount": "5800", "Unit": "USD"}},
            },
        )  # 96.7 %: both steps hold
        settings = breaker.Settings(
            stack="dev",
            env="dev",
            cluster_name="seedance-dev",
            budget_name=BUDGET,
            account_id=account,
            bucket="incidents",
            key_arn=key,
            topic_arn=topic,
        )
        clients = {
            "autoscaling": autoscaling,
            "s3": s3,
            "sns": boto3.client("sns", region_name=region),
            "budgets": budgets,
        }

        def published():
            messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
            return [json.loads(m["Body"]) for m in messages]

        yield settings, clients, published


def state(clients):
    groups = clients["autoscaling"].describe_auto_scaling_groups()["AutoScalingGroups"]
    found = {}
    for g in groups:
        distribution = g["MixedInstancesPolicy"]["InstancesDistribution"]
        tags = {t["Key"]: t["Value"] for t in g["Tags"]}
        found[g["AutoScalingGroupName"].split("-")[2]] = (
            g["MaxSize"],
            distribution["OnDemandBaseCapacity"],
            distribution["OnDemandPercentageAboveBaseCapacity"],
            tags.get(breaker.BREAKER_TAG),
        )
    return found


def records(clients):
    listed = clients["s3"].list_objects_v2(Bucket="incidents").get("Contents", [])
    return sorted(o["Key"] for o in listed if o["Key"].endswith(".json"))


def test_the_notification_text_is_read_as_budget_threshold_and_month():
    alert = breaker.parse_budget_message(notification(85))
    assert (alert.budget, alert.alert_type, alert.percent, alert.period) == (BUDGET, "ACTUAL", 85.0, "2026-12")
    assert breaker.step_of(alert) == 85 and breaker.step_of(breaker.parse_budget_message(notification(95))) == 95
    assert breaker.step_of(breaker.parse_budget_message(notification(95, "FORECASTED"))) is None
    assert breaker.parse_budget_message('{"AlarmName": "cpu"}') is None


def test_85_stops_experiments_growing_and_95_moves_dev_to_spot_only(account):
    settings, clients, published = account
    record = breaker.handle_message(sns(notification(85)), settings, clients, NOW)
    assert state(clients) == {"batch": (2, 1, 30, None), "online": (8, 1, 30, None)}
    assert record["groups"][0]["before"] == {"max_size": 8} and record["groups"][0]["owner"] == "ml-platform"
    breaker.handle_message(sns(notification(95), "m-2"), settings, clients, NOW)
    assert state(clients) == {"batch": (2, 0, 0, "on"), "online": (8, 0, 0, "on")}
    assert records(clients) == [f"incidents/2026-12/{BUDGET}/85.json", f"incidents/2026-12/{BUDGET}/95.json"]
    subjects = [m["Subject"] for m in published()]
    assert subjects == [
        f"seedance budget breaker: {BUDGET} at 85% (dev)",
        f"seedance budget breaker: {BUDGET} at 95% (dev)",
    ]
    # What it replaced is on the group, so the reset is exact.
    assert breaker.reset(clients["autoscaling"], breaker.gpu_groups(clients["autoscaling"], "seedance-dev"))
    assert state(clients) == {"batch": (8, 1, 30, None), "online": (8, 1, 30, None)}


def test_a_repeated_and_a_late_lower_message_change_nothing(account):
    settings, clients, published = account
    assert breaker.handle_message(sns(notification(95)), settings, clients, NOW) is not None
    after = state(clients)
    assert after == {"batch": (2, 0, 0, "on"), "online": (8, 0, 0, "on")}  # 95 % includes the 85 % step
    assert breaker.handle_message(sns(notification(95)), settings, clients, NOW) is None  # redelivered
    assert breaker.handle_message(sns(notification(85), "m-0"), settings, clients, NOW) is None  # arrived late
    assert state(clients) == after and records(clients) == [f"incidents/2026-12/{BUDGET}/95.json"]
    assert len(published()) == 1


def test_a_forecast_another_budget_and_prod_change_nothing(account):
    settings, clients, published = account
    before = state(clients)
    assert breaker.handle_message(sns(notification(95, "FORECASTED")), settings, clients, NOW) is None
    assert breaker.handle_message(sns(notification(95, budget="someone-else")), settings, clients, NOW) is None
    prod = breaker.Settings(**{**settings.__dict__, "env": "prod"})
    record = breaker.handle_message(sns(notification(95)), prod, clients, NOW)
    assert state(clients) == before and not any(g["changed"] for g in record["groups"])  # recorded, not changed


def test_only_budgets_messages_act_and_an_unreadable_one_is_reported(account):
    settings, clients, published = account
    for subject in ("seedance budget breaker: x", "[FIRING:1] TritonP99LatencyHigh", None):
        assert breaker.handle_message(sns(notification(95), subject=subject), settings, clients, NOW) is None
    assert published() == [] and records(clients) == []
    assert breaker.handle_message(sns("a changed format"), settings, clients, NOW) is None
    [message] = published()
    assert message["Subject"] == "seedance budget breaker: message not understood"


def test_the_lambda_entry_point_reads_its_settings_from_the_environment(account, monkeypatch):
    settings, clients, _ = account
    for name, value in (
        ("STACK", "dev"),
        ("STACK_ENV", "dev"),
        ("CLUSTER_NAME", "seedance-dev"),
        ("BUDGET_NAME", BUDGET),
        ("ACCOUNT_ID", settings.account_id),
        ("INCIDENT_BUCKET", "incidents"),
        ("INCIDENT_KEY_ARN", settings.key_arn),
        ("TOPIC_ARN", settings.topic_arn),
    ):
        monkeypatch.setenv(name, value)
    assert breaker.handler({"Records": [{"EventSource": "aws:sns", "Sns": sns(notification(85))}]}) == {"handled": 1}
    assert state(clients)["batch"][0] == 2


def test_a_retry_after_a_failed_update_finishes_the_step_and_the_reset_restores_the_stacks_values(account):
    settings, clients, _ = account
    autoscaling = clients["autoscaling"]

    class FailingOnce:
        """The first group update fails (throttled), as a Lambda run can be cut off between calls."""

        failed = False

        def __getattr__(self, name):
            return getattr(autoscaling, name)

        def update_auto_scaling_group(self, **kwargs):
            if not FailingOnce.failed:
                FailingOnce.failed = True
                raise RuntimeError("Throttling")
            return autoscaling.update_auto_scaling_group(**kwargs)

    with pytest.raises(RuntimeError):
        breaker.handle_message(sns(notification(95)), settings, {**clients, "autoscaling": FailingOnce()}, NOW)
    # Lambda retries the same message: it owns the claim, finishes the step and records all of it.
    record = breaker.handle_message(sns(notification(95)), settings, clients, NOW)
    assert state(clients) == {"batch": (2, 0, 0, "on"), "online": (8, 0, 0, "on")}
    assert {g["name"].split("-")[2]: g["before"] for g in record["groups"]} == {
        "batch": {"max_size": 8, "on_demand_base": 1, "on_demand_percentage": 30},
        "online": {"on_demand_base": 1, "on_demand_percentage": 30},
    }
    breaker.reset(autoscaling, breaker.gpu_groups(autoscaling, "seedance-dev"))
    assert state(clients) == {"batch": (8, 1, 30, None), "online": (8, 1, 30, None)}


def test_two_deliveries_at_once_act_once(account):
    settings, clients, published = account
    prefix = f"incidents/2026-12/{BUDGET}/"
    clients["s3"].put_object(Bucket="incidents", Key=f"{prefix}95.claim", Body=b"m-other")  # the other delivery
    assert breaker.handle_message(sns(notification(95), "m-1"), settings, clients, NOW) is None
    assert state(clients)["online"] == (8, 1, 30, None) and published() == []


def _s3_of_an_sdk_before_conditional_writes(tmp_path, region):
    """An S3 client whose model is botocore's own without PutObject's IfNoneMatch: the SDK a Lambda runtime
    may bundle (botocore added the parameter in 1.35; S3 honours the header whatever the SDK)."""
    import gzip

    import botocore
    import botocore.session

    shipped = Path(botocore.__file__).parent / "data" / "s3" / "2006-03-01" / "service-2.json.gz"
    model = json.loads(gzip.decompress(shipped.read_bytes()))
    del model["shapes"]["PutObjectRequest"]["members"]["IfNoneMatch"]
    (tmp_path / "s3" / "2006-03-01").mkdir(parents=True)
    (tmp_path / "s3" / "2006-03-01" / "service-2.json").write_text(json.dumps(model))
    session = botocore.session.Session()
    session.set_config_variable("data_path", str(tmp_path))
    client = boto3.Session(botocore_session=session).client("s3", region_name=region)
    assert "IfNoneMatch" not in client.meta.service_model.operation_model("PutObject").input_shape.members
    return client


def test_an_sdk_without_if_none_match_still_claims_once(account, tmp_path):
    """Issue 37, item 3: the claim stays a conditional write with an SDK older than botocore 1.35."""
    settings, clients, published = account
    old_s3 = _s3_of_an_sdk_before_conditional_writes(tmp_path, "us-west-2")
    prefix = f"incidents/2026-12/{BUDGET}/"
    assert breaker._claimed(old_s3, settings, f"{prefix}85.claim", "m-1")  # first: it writes the claim
    assert breaker._claimed(old_s3, settings, f"{prefix}85.claim", "m-1")  # a retry of the same message
    assert not breaker._claimed(old_s3, settings, f"{prefix}85.claim", "m-2")  # another delivery: refused
    assert clients["s3"].get_object(Bucket="incidents", Key=f"{prefix}85.claim")["Body"].read() == b"m-1"
    clients["s3"].put_object(Bucket="incidents", Key=f"{prefix}95.claim", Body=b"m-other")
    assert breaker.handle_message(sns(notification(95), "m-1"), settings, {**clients, "s3": old_s3}, NOW) is None
    assert state(clients)["online"] == (8, 1, 30, None) and published() == []
    old_s3.put_object(Bucket="incidents", Key="plain", Body=b"x")
    old_s3.put_object(Bucket="incidents", Key="plain", Body=b"y")  # the header was for the claim only


def test_a_group_the_stack_already_runs_spot_only_is_left_as_the_stack_set_it(account):
    settings, clients, _ = account
    autoscaling = clients["autoscaling"]
    # What `capacity.budget_breaker: true` deploys: spot only, and the mark the policies read.
    (online,) = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["seedance-dev-online-asg"])[
        "AutoScalingGroups"
    ]
    autoscaling.update_auto_scaling_group(
        AutoScalingGroupName="seedance-dev-online-asg",
        MixedInstancesPolicy=breaker.spot_only_policy(online["MixedInstancesPolicy"]),
    )
    autoscaling.create_or_update_tags(
        Tags=[
            {
                "ResourceId": "seedance-dev-online-asg",
                "ResourceType": "auto-scaling-group",
                "Key": breaker.BREAKER_TAG,
                "Value": "on",
                "PropagateAtLaunch": True,
            }
        ]
    )
    record = breaker.handle_message(sns(notification(95)), settings, clients, NOW)
    assert [g["changed"] for g in record["groups"]] == [True, False]  # batch changed; online already was
    breaker.reset(autoscaling, breaker.gpu_groups(autoscaling, "seedance-dev"))
    assert state(clients)["online"] == (8, 0, 0, "on")  # the stack's setting stays


def test_a_forged_alert_the_budget_does_not_confirm_changes_nothing(account):
    settings, clients, published = account
    clients["budgets"].delete_budget(AccountId=settings.account_id, BudgetName=BUDGET)
    clients["budgets"].create_budget(
        AccountId=settings.account_id,
        Budget={
            "BudgetName": BUDGET,
            "BudgetType": "COST",
            "TimeUnit": "MONTHLY",
            "BudgetLimit": {"Amount": "6000", "Unit": "USD"},
            "CalculatedSpend": {"ActualSpend": {"Amount": "900", "Unit": "USD"}},
        },
    )  # 15 %: anyone could have sent it
    before = state(clients)
    assert breaker.handle_message(sns(notification(95)), settings, clients, NOW) is None
    assert state(clients) == before and records(clients) == []
    [message] = published()
    assert message["Subject"] == "seedance budget breaker: alert not confirmed" and "15.0% spent" in message["Message"]


def _an_up_restores_the_stacks_mix(clients):
    """What a `pulumi up` that writes a new launch-template version does: the stack's instance mix again."""
    autoscaling = clients["autoscaling"]
    for group in breaker.gpu_groups(autoscaling, "seedance-dev"):
        policy = breaker.spot_only_policy(group["MixedInstancesPolicy"])
        policy["InstancesDistribution"].update(OnDemandBaseCapacity=1, OnDemandPercentageAboveBaseCapacity=30)
        autoscaling.update_auto_scaling_group(
            AutoScalingGroupName=group["AutoScalingGroupName"], MixedInstancesPolicy=policy
        )


def test_the_step_holds_through_an_up_on_the_schedule_and_on_any_later_message(account):
    """Issue 37, item 2: the 95 % step is put back where an `up` left the groups, judged from their values."""
    settings, clients, published = account
    breaker.handle_message(sns(notification(95)), settings, clients, NOW)
    _an_up_restores_the_stacks_mix(clients)
    assert state(clients)["online"][1:3] == (1, 30)
    held = breaker.hold(settings, clients, NOW)  # the schedule's run
    assert held["event"] == "budget-breaker-95-percent-held"
    assert state(clients) == {"batch": (2, 0, 0, "on"), "online": (8, 0, 0, "on")}
    assert [key for key in records(clients) if "/held-" in key]
    assert breaker.hold(settings, clients, NOW) is None  # nothing left to put back
    _an_up_restores_the_stacks_mix(clients)
    assert breaker.handle_message(sns(notification(95), "m-9"), settings, clients, NOW) is not None  # a later message
    assert state(clients)["online"] == (8, 0, 0, "on")
    subjects = [m["Subject"] for m in published()]
    assert sum("step put back" in s for s in subjects) == 2


def test_a_recorded_reset_ends_the_hold(account):
    settings, clients, _published = account
    breaker.handle_message(sns(notification(95)), settings, clients, NOW)
    groups = breaker.gpu_groups(clients["autoscaling"], "seedance-dev")
    put_back = breaker.reset(clients["autoscaling"], groups)
    breaker.record_reset(clients["s3"], settings.bucket, settings.budget_name, put_back, NOW)
    assert breaker.held_step(clients["s3"], settings, NOW) is None
    assert breaker.hold(settings, clients, NOW) is None
    assert state(clients) == {"batch": (8, 1, 30, None), "online": (8, 1, 30, None)}


def test_the_schedule_reaches_the_function_and_its_names_match_the_stacks(plan_of, account, monkeypatch):
    """The stack invokes the function on a schedule; the reset command finds the stack's bucket and budget."""
    plan = plan_of("dev")
    (rule,) = [r for r in plan.of_type("aws:cloudwatch/eventRule:EventRule") if r.name.endswith("-breaker-hold")]
    assert rule.inputs["scheduleExpression"] == breaker_component.HOLD_SCHEDULE
    (permission,) = [r for r in plan.of_type("aws:lambda/permission:Permission") if "schedule" in r.name]
    assert permission.inputs["principal"] == "events.amazonaws.com"
    (budget,) = plan.of_type("aws:budgets/budget:Budget")
    assert budget.inputs["name"] == breaker.monthly_budget("seedance-dev")
    buckets = [r.inputs.get("bucket") for r in plan.of_type("aws:s3/bucket:Bucket")]
    assert breaker.incident_bucket("seedance-dev", "123456789012") in buckets
    settings, clients, _ = account
    monkeypatch.setattr(breaker, "hold", lambda *args: {"held": True})
    monkeypatch.setenv("STACK", "dev")
    for key, value in (
        ("STACK_ENV", "dev"),
        ("CLUSTER_NAME", "seedance-dev"),
        ("BUDGET_NAME", BUDGET),
        ("ACCOUNT_ID", settings.account_id),
        ("INCIDENT_BUCKET", "incidents"),
        ("INCIDENT_KEY_ARN", settings.key_arn),
        ("TOPIC_ARN", settings.topic_arn),
    ):
        monkeypatch.setenv(key, value)
    assert breaker.handler({"source": "aws.events", "detail-type": "Scheduled Event"}) == {"handled": 1}


def test_a_capacity_blocks_group_is_left_alone_at_every_step(account):
    """A block's group (plain launch template, the pool's class tag, the block's tag) is paid and has no mix
    to move: the breaker neither lowers its maximum at 85 nor moves it at 95, and the others still change."""
    settings, clients, _published = account
    autoscaling = clients["autoscaling"]
    template = boto3.client("ec2").describe_launch_templates()["LaunchTemplates"][0]["LaunchTemplateId"]
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="seedance-dev-campaign-block-asg",
        MinSize=2,
        MaxSize=2,
        DesiredCapacity=2,
        AvailabilityZones=["us-west-2a"],
        LaunchTemplate={"LaunchTemplateId": template, "Version": "1"},
        Tags=[
            {"Key": k, "Value": v, "PropagateAtLaunch": True}
            for k, v in (
                ("kubernetes.io/cluster/seedance-dev", "owned"),
                (CLASS_TAG, "batch"),
                (CAPACITY_BLOCK_TAG, "cr-0a1b2c3d4e5f60718"),
            )
        ],
    )
    assert [g["AutoScalingGroupName"] for g in breaker.gpu_groups(autoscaling, "seedance-dev")] == [
        "seedance-dev-batch-asg",
        "seedance-dev-online-asg",
    ]
    for percent, message in ((85, "m-1"), (95, "m-2")):
        breaker.handle_message(sns(notification(percent), message), settings, clients, NOW)
    (block,) = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["seedance-dev-campaign-block-asg"])[
        "AutoScalingGroups"
    ]
    assert (block["MaxSize"], "MixedInstancesPolicy" in block) == (2, False)
    assert breaker.BREAKER_TAG not in {t["Key"] for t in block["Tags"]}
    groups = {g["AutoScalingGroupName"]: g for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]}
    assert groups["seedance-dev-batch-asg"]["MaxSize"] == 2  # the pool's own group still stopped growing


def test_a_scale_in_between_two_runs_keeps_the_first_ceiling(account):
    """Issue 53 item 8: re-run every 15 minutes, the 85 % step lowered a batch group's MaxSize to its desired
    size again after each scale-in, so the group could only shrink through the month."""
    settings, clients, _published = account
    autoscaling = clients["autoscaling"]
    breaker.handle_message(sns(notification(85)), settings, clients, NOW)
    assert state(clients)["batch"][0] == 2  # the ceiling: the desired size when the step came
    (batch,) = [g for g in breaker.gpu_groups(autoscaling, "seedance-dev") if "batch" in g["AutoScalingGroupName"]]
    autoscaling.update_auto_scaling_group(AutoScalingGroupName=batch["AutoScalingGroupName"], DesiredCapacity=1)
    breaker.hold(settings, clients, NOW)  # the schedule's next run
    assert state(clients)["batch"][0] == 2  # kept, not 1
    # An `up` that put the stack's maximum back: the step puts its own ceiling back, not the smaller size.
    autoscaling.update_auto_scaling_group(AutoScalingGroupName=batch["AutoScalingGroupName"], MaxSize=8)
    breaker.hold(settings, clients, NOW)
    assert state(clients)["batch"][0] == 2
    assert breaker.reset(autoscaling, breaker.gpu_groups(autoscaling, "seedance-dev"))
    (after,) = [g for g in breaker.gpu_groups(autoscaling, "seedance-dev") if "batch" in g["AutoScalingGroupName"]]
    assert after["MaxSize"] == 8 and breaker.CEILING_TAG not in {t["Key"] for t in after["Tags"]}
