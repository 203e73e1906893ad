"""The budget and its alerts in each stack's plan, and the durable breaker setting."""

import json
from pathlib import Path

import pytest

from components.stack.config import ConfigError, parse_config_values
from seedance.cli import main
from tests.stacks import REPO, bad_stack, stack_config


def test_budget_with_85_and_95_percent_actual_and_forecast_alerts(plan_of):
    prod = plan_of("prod")
    (budget,) = prod.of_type("aws:budgets/budget:Budget")
    assert budget.inputs["limitAmount"] == "95000.00" and budget.inputs["timeUnit"] == "MONTHLY"
    assert budget.inputs["costFilters"] == [{"name": "TagKeyValue", "values": ["user:cost-center$cc-ml-prod-4430"]}]
    notifications = {(n["threshold"], n["notificationType"]) for n in budget.inputs["notifications"]}
    assert notifications == {(85, "ACTUAL"), (85, "FORECASTED"), (95, "ACTUAL"), (95, "FORECASTED")}
    (topic,) = prod.of_type("aws:sns/topic:Topic")
    assert topic.inputs["kmsMasterKeyId"] == prod.outputs["kms_key_arn"]
    # Each address gets each alert exactly once: through its topic subscription, not also listed directly.
    subscribed = [s.inputs["endpoint"] for s in prod.of_type("aws:sns/topicSubscription:TopicSubscription")]
    for email in stack_config("prod").budget.alert_emails:
        direct = sum(email in n.get("subscriberEmailAddresses", []) for n in budget.inputs["notifications"])
        assert (subscribed.count(email), direct) == (1, 0), email
    (policy,) = prod.of_type("aws:sns/topicPolicy:TopicPolicy")
    assert json.loads(policy.inputs["policy"])["Statement"][0]["Principal"] == {"Service": "budgets.amazonaws.com"}
    (key,) = prod.of_type("aws:kms/key:Key")
    sids = {s["Sid"] for s in json.loads(key.inputs["policy"])["Statement"]}
    assert "BudgetsPublishToTheEncryptedAlertTopic" in sids  # without it Budgets cannot publish to the topic


@pytest.mark.parametrize(
    "budget",
    [
        {"alert_emails": ["ops@corp.example.org"]},
        {"alert_topic_arns": ["arn:aws:sns:us-east-1:111122223333:chatbot"]},
        {"alert_emails": ["ops@corp.example.org"], "alert_topic_arns": ["arn:aws:sns:us-east-1:111122223333:chatbot"]},
    ],
)
def test_every_notification_has_at_most_one_sns_subscriber_and_reaches_each_recipient_once(tmp_path, budget):
    """AWS Budgets refuses a notification with more than one SNS subscriber (and ten e-mails)."""
    stack_file = bad_stack(tmp_path, ["seedance-gpu:budget"], {"monthly_usd": 5000, **budget})
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file), "--json", str(tmp_path / "p.json")]) == 0
    resources = json.loads((tmp_path / "p.json").read_text())["resources"]
    (plan_budget,) = [r for r in resources if r["type"] == "aws:budgets/budget:Budget"]
    subscribed = [
        r["inputs"]["endpoint"] for r in resources if r["type"] == "aws:sns/topicSubscription:TopicSubscription"
    ]
    for notification in plan_budget["inputs"]["notifications"]:
        (topic,) = notification["subscriberSnsTopicArns"]
        assert topic == budget.get("alert_topic_arns", [topic])[0]
        direct = notification.get("subscriberEmailAddresses") or []
        for email in budget.get("alert_emails", []):
            assert subscribed.count(email) + direct.count(email) == 1
    topics = [r for r in resources if r["type"] == "aws:sns/topic:Topic"]
    assert len(topics) == (0 if "alert_topic_arns" in budget else 1)


def test_breaker_setting_makes_dev_groups_spot_only_and_passes_its_checks(tmp_path, capsys):
    stack_file = bad_stack(tmp_path, ["seedance-gpu:capacity", "budget_breaker"], True)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file), "--json", str(tmp_path / "p.json")]) == 0
    resources = json.loads((tmp_path / "p.json").read_text())["resources"]
    groups = [r for r in resources if r["type"] == "aws:autoscaling/group:Group"]
    for asg in groups:
        distribution = asg["inputs"]["mixedInstancesPolicy"]["instancesDistribution"]
        assert (distribution["onDemandBaseCapacity"], distribution["onDemandPercentageAboveBaseCapacity"]) == (0, 0)
        assert {"key": "seedance.io/budget-breaker", "value": "on", "propagateAtLaunch": True} in asg["inputs"]["tags"]
    capsys.readouterr()
    assert main(["check", "--plan", str(tmp_path / "p.json"), "--env", "dev"]) == 0


@pytest.mark.parametrize(
    "budget, expected",
    [
        (
            {"monthly_usd": 10, "filter_tag": "owner", "alert_emails": ["a@b.io"]},
            'budget.filter_tag = "owner": must be one of the stack\'s tags',
        ),
        ({"monthly_usd": 10, "alert_emails": ["not-an-address"]}, "'not-an-address' is not an e-mail address"),
        # An SNS topic nobody subscribes to delivers the alerts to nobody.
        ({"monthly_usd": 10}, "budget.alert_emails = []: a budget must reach someone"),
        ({"monthly_usd": 10, "alert_topic_arns": ["chatbot"]}, "'chatbot' is not an SNS topic ARN"),
        (
            {
                "monthly_usd": 10,
                "alert_topic_arns": ["arn:aws:sns:us-east-1:111122223333:a", "arn:aws:sns:us-east-1:111122223333:b"],
            },
            "at most 1 item",
        ),
    ],
)
def test_bad_budget_config_names_the_key(budget, expected):
    values = {
        "aws:region": "us-east-1",
        "seedance-gpu:env": "dev",
        "seedance-gpu:tags": json.dumps({"team": "a", "cost-center": "b"}),
        "seedance-gpu:budget": json.dumps(budget),
        "seedance-gpu:cluster": json.dumps({"deployer_cidrs": ["10.0.200.0/24"]}),
    }
    with pytest.raises(ConfigError, match="seedance-gpu:budget"):
        parse_config_values(values)
    with pytest.raises(ConfigError) as error:
        parse_config_values(values)
    assert expected in str(error.value)


def test_prod_refuses_the_breaker_setting(tmp_path, capsys):
    document_path = bad_stack(tmp_path, ["seedance-gpu:capacity", "budget_breaker"], True)
    prod = (REPO / "stacks" / "Pulumi.prod.yaml").read_text()
    assert stack_config("prod").capacity.budget_breaker is False and "budget_breaker" not in prod
    text = document_path.read_text().replace("seedance-gpu:env: dev", "seedance-gpu:env: prod")
    document_path.write_text(text.replace("source: live", "source: lock"))
    assert main(["plan", "--stack", "dev", "--stack-file", str(document_path)]) == 2
    assert "seedance-gpu:capacity.budget_breaker = true: allowed in dev and staging only" in capsys.readouterr().err


def test_plan_names_the_cost_allocation_tag_step(plan_of):
    """The budget's tag filter matches nothing until the tag is activated, which `pulumi up` cannot
    do (billing data first, payer account only): the plan must say so with the command."""
    for stack in ("dev", "prod"):
        steps = plan_of(stack).outputs["reports"]["account_steps"]
        key = stack_config(stack).budget.filter_tag
        assert any(f"'{key}'" in step and f"seedance budget-tag --stack {stack} --activate" in step for step in steps)


def test_the_budget_topic_invokes_the_breaker_whose_role_reaches_only_this_clusters_groups(stack_plan):
    from components.compute.lambda_function import archive_files
    from components.cost import breaker_function
    from tests.policy_evaluation import Request, allows

    (function,) = stack_plan.of_type("aws:lambda/function:Function")
    (topic,) = stack_plan.of_type("aws:sns/topic:Topic")
    (budget,) = stack_plan.of_type("aws:budgets/budget:Budget")
    assert function.inputs["handler"] == "breaker_function.handler"
    # No reserved concurrency: a new account's quota of 10 leaves none to reserve (the step claim serialises).
    assert "reservedConcurrentExecutions" not in function.inputs
    variables = function.inputs["environment"]["variables"]
    topic_arn = variables["TOPIC_ARN"]
    assert variables["BUDGET_NAME"] == budget.inputs["name"] and topic_arn.endswith(f":{topic.id}")
    assert variables["STACK_ENV"] == stack_config(stack_plan.stack).env
    assert set(function.inputs["code"].assets) == set(archive_files(Path(breaker_function.__file__)))  # its own files
    subscriptions = [
        s.inputs
        for s in stack_plan.of_type("aws:sns/topicSubscription:TopicSubscription")
        if s.inputs["protocol"] == "lambda"
    ]
    assert [s["topic"] for s in subscriptions] == [topic_arn]
    permissions = {
        p.inputs["principal"]: p.inputs["sourceArn"] for p in stack_plan.of_type("aws:lambda/permission:Permission")
    }
    # the budget's topic, and the schedule that holds the step through an `up` (its rule, by ARN)
    assert set(permissions) == {"sns.amazonaws.com", "events.amazonaws.com"}
    assert permissions["sns.amazonaws.com"] == topic_arn and "-breaker-hold" in permissions["events.amazonaws.com"]
    (policy,) = [p for p in stack_plan.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("breaker-policy")]
    document = json.loads(policy.inputs["policy"])
    cluster = stack_config(stack_plan.stack).cluster_name
    region = stack_config(stack_plan.stack).region
    group = f"arn:aws:autoscaling:{region}:123456789012:autoScalingGroup:1:autoScalingGroupName/x"
    mine = {f"autoscaling:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    assert allows(document, Request("autoscaling:UpdateAutoScalingGroup", group, mine))
    assert not allows(
        document,
        Request(
            "autoscaling:UpdateAutoScalingGroup",
            group,
            {"autoscaling:ResourceTag/kubernetes.io/cluster/other": "owned"},
        ),
    )
    assert not allows(document, Request("autoscaling:DeleteAutoScalingGroup", group, mine))
    bucket = next(b for b in stack_plan.of_type("aws:s3/bucket:Bucket") if "incidents" in b.name)
    arn = f"arn:aws:s3:::{bucket.inputs['bucket']}"
    assert allows(document, Request("s3:PutObject", f"{arn}/incidents/2026-12/b/95.json"))
    assert not allows(document, Request("s3:PutObject", f"{arn}/elsewhere.json"))
    assert not allows(document, Request("s3:DeleteObject", f"{arn}/incidents/2026-12/b/95.json"))
    node_roles = [r.id for r in stack_plan.of_type("aws:iam/role:Role") if r.name.endswith("-node-role")]
    passed = {"iam:PassedToService": "ec2.amazonaws.com"}
    assert len(node_roles) == len(stack_config(stack_plan.stack).gpu_node_groups) + 1  # and the system nodes'
    gpu_roles = [r for r in node_roles if "system" not in r]
    assert all(
        allows(document, Request("iam:PassRole", f"arn:aws:iam::123456789012:role/{r}", passed)) for r in gpu_roles
    )
    assert not allows(document, Request("iam:PassRole", "arn:aws:iam::123456789012:role/admin", passed))
    # It launches from the groups' own templates only, and reads its own budget to confirm an alert.
    (template_statement,) = [st for st in document["Statement"] if st["Sid"] == "UseTheGroupsLaunchTemplates"]
    ours = template_statement["Condition"]["ArnLike"]["ec2:LaunchTemplate"]
    assert len(ours) == len(stack_config(stack_plan.stack).gpu_node_groups)
    assert allows(document, Request("ec2:RunInstances", "arn:aws:ec2:x", {"ec2:LaunchTemplate": ours[0]}))
    assert not allows(document, Request("ec2:RunInstances", "arn:aws:ec2:x", {"ec2:LaunchTemplate": "arn:lt/other"}))
    budget_arn = f"arn:aws:budgets::123456789012:budget/{budget.inputs['name']}"
    assert allows(document, Request("budgets:ViewBudget", budget_arn))
    assert not allows(document, Request("budgets:ViewBudget", budget_arn + "-other"))
