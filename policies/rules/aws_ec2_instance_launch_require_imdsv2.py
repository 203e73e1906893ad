"""Everything that launches EC2 instances requires IMDSv2 tokens with a hop limit of 1, so pods cannot
read node credentials. An instance without metadata options gets EC2's default, which allows IMDSv1;
one without a hop limit gets its AMI's (2 on the EKS-optimised AL2023 AMIs: pods reach the node's role)."""

from components.plan.resources import INSTANCE_LAUNCHERS
from policies.framework import Rule


def check(resource, config):
    if resource.type not in INSTANCE_LAUNCHERS:
        return
    options = resource.props.get("metadataOptions") or {}
    if options.get("httpTokens") != "required":
        yield f"{resource.name} does not require IMDSv2 tokens"
    else:
        # A number or a numeric string, as the provider takes it (the plan document refuses any other).
        hops = float(options.get("httpPutResponseHopLimit") or config["ami_default_hop_limit"])
        if hops > config["max_hop_limit"]:
            said = "" if options.get("httpPutResponseHopLimit") else " (no hop limit set: the AMI's default)"
            yield f"{resource.name} lets the instance metadata reach {hops:g} hops (pods){said}"


RULE = Rule(
    name="aws-ec2-instance-launch-require-imdsv2",
    description="Launch templates, instances, spot requests and launch configurations require IMDSv2 with a hop "
    "limit of 1.",
    severity="high",
    remediation="Set metadata_options http_tokens: required, http_put_response_hop_limit: 1.",
    topics=("security",),
    config={
        "max_hop_limit": {"type": "integer", "default": 1},
        "ami_default_hop_limit": {"type": "integer", "default": 2},
    },
    check_resource=check,
    resource_types=frozenset(INSTANCE_LAUNCHERS),
    standards=("EKS BPG: IAM - restrict access to the instance profile assigned to the worker node",),
)
