"""Nodes get no public IP: they sit in private subnets behind NAT and endpoints."""

from components.plan.resources import EIP_ASSOCIATION, ELASTIC_IP, INSTANCE_LAUNCHERS, public_ip_switches
from policies.framework import Rule


def check(resource, config):
    if resource.type == EIP_ASSOCIATION or (
        resource.type == ELASTIC_IP and (resource.props.get("instance") or resource.props.get("networkInterface"))
    ):
        # A NAT gateway's address is allocated bare and given to the gateway, never to an instance.
        target = (
            resource.props.get("instanceId")
            or resource.props.get("instance")
            or resource.props.get("networkInterfaceId")
            or resource.props.get("networkInterface")
        )
        yield f"{resource.name} gives {target or 'an instance'} a public Elastic IP"
    elif resource.type in INSTANCE_LAUNCHERS and any(
        str(switch).lower() == "true" for switch in public_ip_switches(resource)
    ):
        yield f"{resource.name} gives its instances a public IP"


RULE = Rule(
    name="aws-ec2-instance-launch-disallow-public-ip",
    description="Launch templates, instances, spot requests and launch configurations never associate a public IP, "
    "and no Elastic IP is given to an instance or its network interface.",
    severity="high",
    remediation="Set associate_public_ip_address: false (on each network interface of a template).",
    topics=("security", "network"),
    check_resource=check,
    resource_types=frozenset({*INSTANCE_LAUNCHERS, ELASTIC_IP, EIP_ASSOCIATION}),
    standards=("CIS EKS 5.4.3",),
)
