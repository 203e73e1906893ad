"""Instances launch only through the launchers the gate judges whole: Auto Scaling groups on launch
templates, EKS node groups and instances. Their spot share, their cost against the budget, IMDSv2 and public
IPs are each judged; an EC2 Fleet or a Spot Fleet (even from the stack's own template), a spot instance
request, a launch configuration (or a group launching from one) and an AWS Batch managed compute
environment (it makes its own groups, spot ones included, with Batch's default metadata settings) would
launch GPU capacity past all of them. An unmanaged Batch environment launches nothing."""

from components.plan.resources import (
    ASG,
    BATCH_COMPUTE_ENVIRONMENT,
    EC2_FLEET,
    LAUNCH_CONFIGURATION,
    SPOT_FLEET,
    SPOT_INSTANCE_REQUEST,
)
from policies.framework import Rule

UNJUDGED = {
    EC2_FLEET: "an EC2 Fleet",
    SPOT_FLEET: "a Spot Fleet",
    SPOT_INSTANCE_REQUEST: "a spot instance request",
    LAUNCH_CONFIGURATION: "a launch configuration",
}


def check(resource, config):
    if resource.type in UNJUDGED:
        yield (
            f"{resource.name}: {UNJUDGED[resource.type]} launches instances whose spot share, cost and settings "
            "no rule judges"
        )
    elif resource.type == ASG and resource.props.get("launchConfiguration"):
        yield (
            f"{resource.name}: launches from launch configuration {resource.props['launchConfiguration']}, whose "
            "IMDS and public-IP settings no rule judges"
        )
    elif resource.type == BATCH_COMPUTE_ENVIRONMENT and str(resource.props.get("type")).upper() != "UNMANAGED":
        yield (
            f"{resource.name}: a managed AWS Batch environment launches its own groups, whose spot share, cost "
            "and settings no rule judges"
        )


RULE = Rule(
    name="aws-ec2-launch-restrict-launchers",
    description="Instances launch only through Auto Scaling groups on launch templates, EKS node groups and "
    "instances, whose mix, cost and settings the gate judges.",
    severity="critical",
    remediation="Add the capacity as a GPU node group in the stack config (an Auto Scaling group on the stack's "
    "launch template); run batch work as Kubernetes Jobs on it.",
    topics=("security", "cost", "compute"),
    check_resource=check,
    resource_types=frozenset({ASG, BATCH_COMPUTE_ENVIRONMENT, *UNJUDGED}),
    standards=("EKS BPG: IAM - restrict access to the instance profile assigned to the worker node",),
)
