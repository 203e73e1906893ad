"""`BudgetAlerts`: the stack's monthly AWS Budget, filtered to its cost-allocation tag, with 85 % and
95 % notifications (actual and forecasted) to an encrypted SNS topic and an e-mail list.

The source's breaker acts on those thresholds by itself: the topic invokes `BudgetBreaker`'s function
(at 85 % experiments stop growing, at 95 % dev and staging GPU groups go spot only; docs/runbooks.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.compute.labels import DEGRADE, SPOT_ONLY

THRESHOLDS = (DEGRADE, SPOT_ONLY)  # the breaker acts at the budget's own notifications
BUDGET_SERVICE = "budgets.amazonaws.com"


def topic_policy(topic_arn: str, account_id: str) -> dict:
    """Only AWS Budgets of this account may publish to the alert topic (the Budgets guide's statement:
    aws:SourceAccount and aws:SourceArn)."""
    partition = topic_arn.split(":")[1]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "BudgetsOfThisAccountPublish",
                "Effect": "Allow",
                "Principal": {"Service": BUDGET_SERVICE},
                "Action": "SNS:Publish",
                "Resource": topic_arn,
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account_id},
                    "ArnLike": {"aws:SourceArn": f"arn:{partition}:budgets::{account_id}:*"},
                },
            }
        ],
    }


def tag_filter(tags: Mapping[str, str], key: str) -> str:
    """Cost Explorer's form for a cost-allocation tag filter: user:<key>$<value>."""
    return f"user:{key}${tags[key]}"


class BudgetAlerts(pulumi.ComponentResource):
    topic_arn: pulumi.Output[str]
    budget_name: str

    def __init__(
        self,
        name: str,
        *,
        monthly_usd: float,
        emails: list[str],
        topic_arns: list[str],
        filter_tag: str,
        account_id: str,
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:cost:BudgetAlerts", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(tags)
        # AWS Budgets takes one SNS subscriber per notification (and up to ten e-mails): a given topic is
        # that one, and the e-mails go to the budget itself; else the stack's own encrypted topic, which
        # the e-mails subscribe to (listing them on the budget too would send each alert twice).
        if topic_arns:
            topic_arn: pulumi.Input[str] = topic_arns[0]
            direct_emails = list(emails)
        else:
            topic = aws.sns.Topic(f"{name}-alerts", kms_master_key_id=kms_key_arn, tags=tags, opts=child)
            aws.sns.TopicPolicy(
                f"{name}-alerts-policy",
                arn=topic.arn,
                policy=topic.arn.apply(lambda arn: json.dumps(topic_policy(arn, account_id))),
                opts=child,
            )
            for index, email in enumerate(emails):
                aws.sns.TopicSubscription(
                    f"{name}-mail-{index}", topic=topic.arn, protocol="email", endpoint=email, opts=child
                )
            topic_arn, direct_emails = topic.arn, []
        self.budget_name = f"{name}-monthly"
        aws.budgets.Budget(
            f"{name}-monthly",
            name=self.budget_name,
            budget_type="COST",
            limit_amount=f"{monthly_usd:.2f}",
            limit_unit="USD",
            time_unit="MONTHLY",
            cost_filters=[aws.budgets.BudgetCostFilterArgs(name="TagKeyValue", values=[tag_filter(tags, filter_tag)])],
            notifications=[
                aws.budgets.BudgetNotificationArgs(
                    comparison_operator="GREATER_THAN",
                    threshold=threshold,
                    threshold_type="PERCENTAGE",
                    notification_type=kind,
                    subscriber_sns_topic_arns=[topic_arn],
                    subscriber_email_addresses=direct_emails or None,
                )
                for threshold in THRESHOLDS
                for kind in ("ACTUAL", "FORECASTED")
            ],
            tags=tags,
            opts=child,
        )
        self.topic_arn = pulumi.Output.from_input(topic_arn)
        self.register_outputs({"topic_arn": self.topic_arn})
