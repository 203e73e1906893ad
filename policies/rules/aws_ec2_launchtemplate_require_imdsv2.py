"""Launch templates require IMDSv2 tokens with a hop limit of 1, so pods cannot read node credentials."""

from components.resource_types import LAUNCH_TEMPLATE
from policies.framework import Rule


def check(resource, config):
    if resource.type != LAUNCH_TEMPLATE:
        return
    options = resource.props.get("metadataOptions") or {}
    if options.get("httpTokens") != "required":
        yield f"{resource.name} does not require IMDSv2 tokens"
    elif (options.get("httpPutResponseHopLimit") or 1) > config["max_hop_limit"]:
        yield f"{resource.name} lets the instance metadata reach {options['httpPutResponseHopLimit']} hops (pods)"


RULE = Rule(
    name="aws-ec2-launchtemplate-require-imdsv2",
    description="Launch templates require IMDSv2 with a hop limit of 1.",
    severity="high",
    remediation="Set metadata_options http_tokens: required, http_put_response_hop_limit: 1.",
    topics=("security",),
    config={"max_hop_limit": {"type": "integer", "default": 1}},
    check_resource=check,
)
