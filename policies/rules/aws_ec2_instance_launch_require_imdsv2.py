"""Everything that launches EC2 instances requires IMDSv2 tokens with a hop limit of 1, so pods cannot
read node credentials. An instance without metadata options gets EC2's default, which allows IMDSv1."""

from components.plan.resources import INSTANCE_LAUNCHERS
from policies.framework import Rule


def check(resource, config):
    if resource.type not in INSTANCE_LAUNCHERS:
        return
    options = resource.props.get("metadataOptions") or {}
    if options.get("httpTokens") != "required":
        yield f"{resource.name} does not require IMDSv2 tokens"
    elif (options.get("httpPutResponseHopLimit") or 1) > config["max_hop_limit"]:
        yield f"{resource.name} lets the instance metadata reach {options['httpPutResponseHopLimit']} hops (pods)"


RULE = Rule(
    name="aws-ec2-instance-launch-require-imdsv2",
    description="Launch templates, instances, spot requests and launch configurations require IMDSv2 with a hop "
                "limit of 1.",
    severity="high",
    remediation="Set metadata_options http_tokens: required, http_put_response_hop_limit: 1.",
    topics=("security",),
    config={"max_hop_limit": {"type": "integer", "default": 1}},
    check_resource=check,
    resource_types=frozenset(INSTANCE_LAUNCHERS),
)
