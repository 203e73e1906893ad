"""`CapacityBlockExpiry`: a stack's Capacity Blocks' expiration warnings, handled as termination notices.
An EventBridge rule for the warnings of this stack's blocks only invokes a Lambda function
(components/compute/block_expiry_function.py) that takes the block's group to zero, so its nodes drain
through the group's termination lifecycle hook before EC2 reclaims them. The scheduled drain normally
empties the group first; then the function finds it empty and changes nothing.

The function's role may describe groups and change only this cluster's block groups (those carrying the
block tag), launch from the block groups' templates and pass their node roles (what Auto Scaling checks
on an update), send its dead letters to the alert topic with the stack key, and write its own logs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pulumi
import pulumi_aws as aws

from components.common.iam import Document
from components.compute import block_expiry_function
from components.compute.asg import group_update_statements
from components.compute.block_expiry_function import warning_pattern
from components.compute.labels import CAPACITY_BLOCK_TAG
from components.compute.lambda_function import alert_topic_publishing, log_writing, packaged_function


def expiry_role_policy(
    *,
    partition: str,
    region: str,
    account_id: str,
    cluster_name: str,
    function_name: str,
    template_arns: list[str],
    node_role_arns: list[str],
    topic_arn: str,
    key_arn: str,
) -> Document:
    return {
        "Version": "2012-10-17",
        "Statement": [
            *group_update_statements(
                partition=partition,
                region=region,
                account_id=account_id,
                cluster_name=cluster_name,
                actions=["autoscaling:UpdateAutoScalingGroup"],
                template_arns=template_arns,
                node_role_arns=node_role_arns,
                tagged=CAPACITY_BLOCK_TAG,
            ),
            # Dead letters (a drain that failed after Lambda's retries) go to the encrypted alert topic.
            *alert_topic_publishing(topic_arn, key_arn),
            log_writing(partition, region, account_id, function_name),
        ],
    }


class CapacityBlockExpiry(pulumi.ComponentResource):
    function_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        cluster_name: str,
        reservation_ids: Sequence[str],
        partition: str,
        region: str,
        account_id: str,
        template_arns: Sequence[pulumi.Input[str]],
        node_role_arns: Sequence[pulumi.Input[str]],
        alert_topic_arn: pulumi.Input[str],
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:compute:CapacityBlockExpiry", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        function_name = name[:64]
        policy = pulumi.Output.all(
            pulumi.Output.all(*template_arns), pulumi.Output.all(*node_role_arns), alert_topic_arn, kms_key_arn
        ).apply(
            lambda values: json.dumps(
                expiry_role_policy(
                    partition=partition,
                    region=region,
                    account_id=account_id,
                    cluster_name=cluster_name,
                    function_name=function_name,
                    template_arns=list(values[0]),
                    node_role_arns=list(values[1]),
                    topic_arn=values[2],
                    key_arn=values[3],
                )
            )
        )
        # A line a warning, a warning a block.
        function = packaged_function(
            name,
            function_name=function_name,
            module=Path(block_expiry_function.__file__),
            role_policy=policy,
            account_id=account_id,
            environment={"CLUSTER_NAME": cluster_name},
            kms_key_arn=kms_key_arn,
            dead_letter_arn=alert_topic_arn,
            timeout=60,
            expected_log_gb="0.01",
            tags=tags,
            opts=child,
        )
        rule = aws.cloudwatch.EventRule(
            f"{name}-warning",
            event_pattern=json.dumps(warning_pattern(list(reservation_ids))),
            description="A Capacity Block of this stack expires in 40 minutes",
            tags=dict(tags),
            opts=child,
        )
        aws.cloudwatch.EventTarget(f"{name}-target", rule=rule.name, arn=function.arn, opts=child)
        aws.lambda_.Permission(
            f"{name}-invoked-by-warning",
            action="lambda:InvokeFunction",
            function=function.name,
            principal="events.amazonaws.com",
            source_arn=rule.arn,
            opts=child,
        )
        self.function_arn = function.arn
        self.register_outputs({"function_arn": self.function_arn})
