"""No security group admits the internet: an ingress rule (standalone or inline, IPv4 or IPv6) whose ranges
together reach a /8 of public addresses opens what it guards (the cluster API, the endpoints, the nodes)
to anyone, however the range is split or excepted. The VPC's default group admits and sends nothing at all:
whatever is launched without a group gets it (CIS AWS Foundations: the default group restricts all traffic)."""

from components.plan.resources import (DEFAULT_SECURITY_GROUP as DEFAULT_GROUP, SECURITY_GROUP as GROUP, SECURITY_GROUP_INGRESS_RULE as INGRESS_RULE,
                                       SECURITY_GROUP_RULE as GROUP_RULE)
from policies.framework import Rule
from policies.readers.network import reaches_internet



def _ranges(props: dict) -> list[str]:
    ranges = [props.get("cidrIpv4"), props.get("cidrIpv6")]
    ranges += list(props.get("cidrBlocks") or []) + list(props.get("ipv6CidrBlocks") or [])
    return [str(r) for r in ranges if r]


def check(resource, config):
    if resource.type == INGRESS_RULE or (resource.type == GROUP_RULE and resource.props.get("type") == "ingress"):
        rules = [resource.props]
    elif resource.type == GROUP:
        rules = [r for r in resource.props.get("ingress") or [] if isinstance(r, dict)]
    elif resource.type == DEFAULT_GROUP:
        given = [direction for direction in ("ingress", "egress") if resource.props.get(direction)]
        if given:
            yield (f"{resource.name}: the VPC's default security group has {' and '.join(given)} rules; it must "
                   "admit and send nothing (whatever is launched without a group gets it)")
        return
    else:
        return
    for rule in rules:
        if reaches_internet([{"cidr": r} for r in _ranges(rule)]):
            ports = f"{rule.get('fromPort', '*')}-{rule.get('toPort', '*')}"
            yield f"{resource.name}: admits {', '.join(_ranges(rule))} on ports {ports}: the internet"


RULE = Rule(
    name="aws-vpc-security-group-disallow-open-ingress",
    description="No security group ingress admits the internet (ranges that together reach a /8 of public addresses).",
    severity="critical",
    remediation="Admit the VPC, the deployer network (cluster.deployer_cidrs) or a security group, never 0.0.0.0/0.",
    topics=("security", "network"),
    check_resource=check,
    resource_types=frozenset({INGRESS_RULE, GROUP_RULE, GROUP, DEFAULT_GROUP}),
    standards=("CIS EKS 5.4.1", "EKS BPG: Network security - restrict the cluster security group",
               "CIS AWS Foundations 5.4 (the default security group restricts all traffic)"),
)
