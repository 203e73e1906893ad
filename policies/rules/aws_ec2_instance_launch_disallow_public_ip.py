"""Nodes get no public IP: they sit in private subnets behind NAT and endpoints."""

from components.plan.resources import INSTANCE_LAUNCHERS, public_ip_switches
from policies.framework import Rule


def check(resource, config):
    if resource.type not in INSTANCE_LAUNCHERS:
        return
    if any(str(switch).lower() == "true" for switch in public_ip_switches(resource)):
        yield f"{resource.name} gives its instances a public IP"


RULE = Rule(
    name="aws-ec2-instance-launch-disallow-public-ip",
    description="Launch templates, instances, spot requests and launch configurations never associate a public IP.",
    severity="high",
    remediation="Set associate_public_ip_address: false (on each network interface of a template).",
    topics=("security", "network"),
    check_resource=check,
    resource_types=frozenset(INSTANCE_LAUNCHERS),
    standards=("CIS EKS 5.4.3",),
)
