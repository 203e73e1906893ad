"""Nodes get no public IP: they sit in private subnets behind NAT and endpoints."""

from components.resource_types import LAUNCH_TEMPLATE
from policies.framework import Rule


def check(resource, config):
    if resource.type != LAUNCH_TEMPLATE:
        return
    for interface in resource.props.get("networkInterfaces") or []:
        if str(interface.get("associatePublicIpAddress", "false")).lower() == "true":
            yield f"{resource.name} gives its instances a public IP"


RULE = Rule(
    name="aws-ec2-launchtemplate-disallow-public-ip",
    description="Launch templates never associate a public IP.",
    severity="high",
    remediation="Set associate_public_ip_address: false on the network interfaces.",
    topics=("security", "network"),
    check_resource=check,
)
