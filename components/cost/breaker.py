"""`BudgetBreaker`: the budget's alerts act by themselves. The budget's SNS topic invokes a Lambda
function (components/cost/breaker_function.py, packaged from this package's own files) that applies
the 85 % and 95 % steps to the stack's GPU groups and writes each incident record to an encrypted
bucket and the topic.

The function's role may describe Auto Scaling groups, change and tag only this cluster's (the
`kubernetes.io/cluster/<name>` tag), use the groups' launch templates and node roles as an update of
a launch-template group requires (ec2:RunInstances on the template, iam:PassRole of its instance
profile's role), write incident records, publish to the topic, and use the stack key for both.
No reserved concurrency (a new account's quota of 10 leaves none to reserve): two deliveries at once
are told apart by a conditional write of the step's claim. A delivery that fails after Lambda's
retries goes to the topic (its dead-letter target).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pulumi
import pulumi_aws as aws

from components.common.buckets import private_bucket
from components.common.iam import Document, deny_plain_http
from components.compute.asg import group_update_statements
from components.compute.lambda_function import alert_topic_publishing, log_writing, packaged_function
from components.cost import breaker_function
from components.cost.breaker_function import incident_bucket


def breaker_role_policy(
    *,
    partition: str,
    region: str,
    account_id: str,
    cluster_name: str,
    function_name: str,
    budget_name: str,
    bucket_arn: str,
    topic_arn: str,
    key_arn: str,
    node_role_arns: list[str],
    template_arns: list[str],
) -> Document:
    return {
        "Version": "2012-10-17",
        "Statement": [
            *group_update_statements(
                partition=partition,
                region=region,
                account_id=account_id,
                cluster_name=cluster_name,
                actions=["autoscaling:UpdateAutoScalingGroup", "autoscaling:CreateOrUpdateTags"],
                template_arns=template_arns,
                node_role_arns=node_role_arns,
            ),
            {
                "Sid": "ConfirmTheAlertWithTheBudget",
                "Effect": "Allow",
                "Action": "budgets:ViewBudget",
                "Resource": f"arn:{partition}:budgets::{account_id}:budget/{budget_name}",
            },
            {
                "Sid": "ReadAndWriteIncidentRecords",
                "Effect": "Allow",
                "Action": ["s3:PutObject", "s3:GetObject", "s3:ListBucket"],
                "Resource": [bucket_arn, f"{bucket_arn}/incidents/*"],
            },
            *alert_topic_publishing(topic_arn, key_arn),
            log_writing(partition, region, account_id, function_name),
        ],
    }


HOLD_SCHEDULE = "rate(15 minutes)"  # a GPU hour of drift at most a quarter; ~2,900 free invocations a month


class BudgetBreaker(pulumi.ComponentResource):
    function_arn: pulumi.Output[str]
    bucket_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        stack: str,
        env: str,
        cluster_name: str,
        budget_name: str,
        topic_arn: pulumi.Input[str],
        kms_key_arn: pulumi.Input[str],
        partition: str,
        region: str,
        account_id: str,
        node_role_arns: list[pulumi.Input[str]],
        template_arns: list[pulumi.Input[str]],
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:cost:BudgetBreaker", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(tags)
        # Bucket names are global: the account keeps the stack's unique (as the model bucket's).
        bucket = private_bucket(
            f"{name}-incidents",
            bucket_name=incident_bucket(cluster_name, account_id),
            kms_key_arn=kms_key_arn,
            tags=tags,
            opts=child,
        )
        # Records are kept; an overwritten one (never by the breaker) stays recoverable for a year.
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-incidents-lifecycle",
            bucket=bucket.id,
            opts=child,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-replaced-records",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                        noncurrent_days=365
                    ),
                    abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=7
                    ),
                )
            ],
        )
        aws.s3.BucketPolicy(
            f"{name}-incidents-tls-only",
            bucket=bucket.id,
            opts=child,
            policy=bucket.arn.apply(
                lambda arn: json.dumps({"Version": "2012-10-17", "Statement": [deny_plain_http(arn)]})
            ),
        )
        function_name = name[:64]
        policy = pulumi.Output.all(
            bucket.arn, topic_arn, kms_key_arn, pulumi.Output.all(*node_role_arns), pulumi.Output.all(*template_arns)
        ).apply(
            lambda values: json.dumps(
                breaker_role_policy(
                    partition=partition,
                    region=region,
                    account_id=account_id,
                    cluster_name=cluster_name,
                    function_name=function_name,
                    budget_name=budget_name,
                    bucket_arn=values[0],
                    topic_arn=values[1],
                    key_arn=values[2],
                    node_role_arns=list(values[3]),
                    template_arns=list(values[4]),
                )
            )
        )
        # A few lines a run, a few runs a month: the stated log ingestion the estimate prices.
        function = packaged_function(
            name,
            function_name=function_name,
            module=Path(breaker_function.__file__),
            role_policy=policy,
            account_id=account_id,
            kms_key_arn=kms_key_arn,
            dead_letter_arn=topic_arn,
            timeout=120,
            expected_log_gb="0.02",
            tags=tags,
            opts=child,
            environment={
                "STACK": stack,
                "STACK_ENV": env,
                "CLUSTER_NAME": cluster_name,
                "BUDGET_NAME": budget_name,
                "ACCOUNT_ID": account_id,
                "INCIDENT_BUCKET": bucket.bucket,
                "INCIDENT_KEY_ARN": kms_key_arn,
                "TOPIC_ARN": topic_arn,
            },
        )
        aws.lambda_.Permission(
            f"{name}-invoked-by-topic",
            action="lambda:InvokeFunction",
            function=function.name,
            principal="sns.amazonaws.com",
            source_arn=topic_arn,
            opts=child,
        )
        aws.sns.TopicSubscription(
            f"{name}-subscription", topic=topic_arn, protocol="lambda", endpoint=function.arn, opts=child
        )
        # The step holds through a `pulumi up` that rewrites the instance mix: AWS Budgets says 95 % once a
        # month, so the function also looks on a schedule and puts the month's step back where it was left.
        schedule = aws.cloudwatch.EventRule(
            f"{name}-hold",
            schedule_expression=HOLD_SCHEDULE,
            tags=tags,
            opts=child,
            description="The budget breaker holds its step through any up",
        )
        aws.cloudwatch.EventTarget(f"{name}-hold-target", rule=schedule.name, arn=function.arn, opts=child)
        aws.lambda_.Permission(
            f"{name}-invoked-by-schedule",
            action="lambda:InvokeFunction",
            function=function.name,
            principal="events.amazonaws.com",
            source_arn=schedule.arn,
            opts=child,
        )
        self.function_arn = function.arn
        self.bucket_name = bucket.bucket
        self.register_outputs({"function_arn": self.function_arn, "bucket_name": self.bucket_name})
