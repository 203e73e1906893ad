"""`SpotInterruptionHandling`: EC2 interruption events to an SQS queue, drained by
aws-node-termination-handler in queue mode, so GPU nodes are cordoned and drained before they go."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.common.addon_resources import ADDON_RESOURCES
from components.common.iam import irsa_trust_policy
from components.common.manifests import cost_labels
from components.compute.asg import nth_managed_tag
from components.compute.labels import system_placement
from components.compute.priority import CLUSTER_CRITICAL

NTH_CHART = "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
NTH_NAMESPACE = "kube-system"
NTH_SERVICE_ACCOUNT = "aws-node-termination-handler"
# Its Prometheus endpoint: each drain counted with the node and the event (spot-itn-event-<id> for a spot
# interruption), scraped by annotation for the cost dashboard's interruptions per group.
NTH_METRICS_PORT = 9092

# The events the termination handler acts on (its README's EventBridge set), less one: a rebalance
# recommendation. In queue mode the handler drains a node on it, and nothing replaces the node unless its
# group runs capacity rebalancing; a group that does launches the replacement itself and terminates the
# old node through its lifecycle hook, which the asg-terminate rule already drains. AWS Health's scheduled
# changes (instance retirements, maintenance) are drained ahead of the date.
INTERRUPTION_EVENTS: dict[str, dict[str, Any]] = {
    "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "asg-terminate": {"source": ["aws.autoscaling"], "detail-type": ["EC2 Instance-terminate Lifecycle Action"]},
    "scheduled-change": {
        "source": ["aws.health"],
        "detail-type": ["AWS Health Event"],
        "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]},
    },
}


def group_name_of(arn: str) -> str:
    """An Auto Scaling group's name, from its ARN (...:autoScalingGroup:<id>:autoScalingGroupName/<name>)."""
    return arn.split(":autoScalingGroupName/", 1)[1]


def event_patterns(group_names: list[str]) -> dict[str, dict[str, Any]]:
    """The rules' patterns: lifecycle actions of this stack's groups only. The instance events name no group;
    the handler's managed tag, the cluster's own, keeps it to this stack's nodes there."""
    terminate = {**INTERRUPTION_EVENTS["asg-terminate"], "detail": {"AutoScalingGroupName": sorted(group_names)}}
    return {**INTERRUPTION_EVENTS, "asg-terminate": terminate}


def queue_policy(queue_arn: str, rule_arns: list[str]) -> dict:
    """Only this stack's EventBridge rules may send to the queue."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": rule_arns}},
            }
        ],
    }


def handler_policy(queue_arn: str, group_arns: list[str]) -> dict:
    """What the handler needs in queue mode, and nothing else: it completes lifecycle actions of
    this stack's GPU groups only."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage"], "Resource": queue_arn},
            {"Effect": "Allow", "Action": ["autoscaling:CompleteLifecycleAction"], "Resource": group_arns},
            # Describe calls take no resource-level permissions.
            {
                "Effect": "Allow",
                "Resource": "*",
                "Action": [
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeInstances",
                ],
            },
        ],
    }


def handler_values(queue_url: str, region: str, role_arn: str, cluster_name: str) -> dict[str, Any]:
    """Queue mode (chart 0.27.6 values.yaml): which events drain a node is decided by the EventBridge
    rules feeding the queue; the enable*Draining keys are IMDS-mode only and not set."""
    return {
        "enableSqsTerminationDraining": True,
        "queueURL": queue_url,
        "awsRegion": region,
        "checkTagBeforeDraining": True,
        "managedTag": nth_managed_tag(cluster_name),
        "serviceAccount": {"name": NTH_SERVICE_ACCOUNT, "annotations": {"eks.amazonaws.com/role-arn": role_arn}},
        "resources": ADDON_RESOURCES["aws-node-termination-handler"],
        **system_placement(CLUSTER_CRITICAL),  # it drains every node the stack loses
        "enablePrometheusServer": True,
        "prometheusServerPort": NTH_METRICS_PORT,
        "podAnnotations": {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(NTH_METRICS_PORT),
            "prometheus.io/path": "/metrics",
        },
    }


class SpotInterruptionHandling(pulumi.ComponentResource):
    queue_url: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        region: str,
        cluster_name: str,
        oidc_provider_arn: pulumi.Input[str],
        oidc_issuer_url: pulumi.Input[str],
        group_arns: list[pulumi.Input[str]],
        chart_version: str,
        provider: k8s.Provider,
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:compute:SpotInterruptionHandling", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(tags)
        queue = aws.sqs.Queue(
            f"{name}-queue",
            message_retention_seconds=300,  # a notice older than the 2-minute warning is useless
            sqs_managed_sse_enabled=True,  # EventBridge cannot send to a queue under an AWS-managed KMS key
            tags=tags,
            opts=child,
        )
        rules = []
        patterns = pulumi.Output.all(*group_arns).apply(
            lambda arns: {event: json.dumps(p) for event, p in event_patterns([group_name_of(a) for a in arns]).items()}
        )
        for event in INTERRUPTION_EVENTS:
            rule = aws.cloudwatch.EventRule(f"{name}-{event}", event_pattern=patterns[event], tags=tags, opts=child)
            aws.cloudwatch.EventTarget(f"{name}-{event}", rule=rule.name, arn=queue.arn, opts=child)
            rules.append(rule)
        aws.sqs.QueuePolicy(
            f"{name}-queue-policy",
            queue_url=queue.url,
            policy=pulumi.Output.all(queue.arn, *[r.arn for r in rules]).apply(
                lambda v: json.dumps(queue_policy(v[0], list(v[1:])))
            ),
            opts=child,
        )
        role = aws.iam.Role(
            f"{name}-handler-role",
            assume_role_policy=pulumi.Output.all(oidc_provider_arn, oidc_issuer_url).apply(
                lambda v: json.dumps(irsa_trust_policy(v[0], v[1], NTH_NAMESPACE, NTH_SERVICE_ACCOUNT))
            ),
            tags=tags,
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-handler-policy",
            role=role.id,
            policy=pulumi.Output.all(queue.arn, *group_arns).apply(
                lambda v: json.dumps(handler_policy(v[0], list(v[1:])))
            ),
            opts=child,
        )
        k8s.helm.v3.Release(
            f"{name}-handler",
            name="aws-node-termination-handler",
            chart=NTH_CHART,
            version=chart_version,
            namespace=NTH_NAMESPACE,
            values=pulumi.Output.all(queue.url, role.arn).apply(
                lambda v: {
                    **handler_values(v[0], region, v[1], cluster_name),
                    "podLabels": cost_labels(tags, "aws-node-termination-handler"),
                }
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.queue_url = queue.url
        self.register_outputs({"queue_url": self.queue_url})
