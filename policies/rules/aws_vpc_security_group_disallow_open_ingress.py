"""No security group admits the internet: an ingress rule (standalone or inline, IPv4 or IPv6) whose ranges
together reach a /8 of public addresses opens what it guards (the cluster API, the endpoints, the nodes)
to anyone, however the range is split or excepted, or put in a managed prefix list the plan creates (its
entries, inline or as entry resources, count as the rule's own ranges). The VPC's default group admits and
sends nothing at all: whatever is launched without a group gets it (CIS AWS Foundations: the default group
restricts all traffic). Judged over the whole plan: a prefix list's entries are other resources.

With the stack config known, ingress is held to what the stack intends: its ranges lie inside the VPC or the
deployer networks (a broad private range such as 10.0.0.0/8 reaches every peered network), its prefix lists
are ones the plan creates (an AWS-managed or another account's list has entries the gate cannot see), and
its source groups are the plan's own (a literal id, or `account/sg-...`, names a group someone else
controls)."""

from components.plan.resources import (
    DEFAULT_SECURITY_GROUP as DEFAULT_GROUP,
)
from components.plan.resources import (
    MANAGED_PREFIX_LIST,
    MANAGED_PREFIX_LIST_ENTRY,
    is_unknown,
)
from components.plan.resources import (
    SECURITY_GROUP as GROUP,
)
from components.plan.resources import (
    SECURITY_GROUP_INGRESS_RULE as INGRESS_RULE,
)
from components.plan.resources import (
    SECURITY_GROUP_RULE as GROUP_RULE,
)
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.network import outside_ranges, reaches_internet

JUDGED = (INGRESS_RULE, GROUP_RULE, GROUP, DEFAULT_GROUP)


def prefix_list_ranges(resources) -> dict[str, list[str]]:
    """Each managed prefix list the plan creates, by id: the ranges of its entries."""
    ranges: dict[str, list[str]] = {}
    for resource in of_types(resources, MANAGED_PREFIX_LIST, MANAGED_PREFIX_LIST_ENTRY):
        if resource.type == MANAGED_PREFIX_LIST and resource.id:
            ranges.setdefault(resource.id, []).extend(
                str(e["cidr"]) for e in resource.props.get("entries") or [] if isinstance(e, dict) and e.get("cidr")
            )
        elif resource.type == MANAGED_PREFIX_LIST_ENTRY and resource.props.get("cidr"):
            ranges.setdefault(str(resource.props.get("prefixListId")), []).append(str(resource.props["cidr"]))
    return ranges


def _ranges(props: dict, lists: dict[str, list[str]]) -> list[str]:
    ranges = [props.get("cidrIpv4"), props.get("cidrIpv6")]
    ranges += list(props.get("cidrBlocks") or []) + list(props.get("ipv6CidrBlocks") or [])
    listed = [props.get("prefixListId"), *(props.get("prefixListIds") or [])]
    return [str(r) for r in ranges if r] + [r for pl in listed if pl for r in lists.get(str(pl), [])]


def _sources(props: dict) -> list[str]:
    """The security groups an ingress rule admits (standalone, legacy rule or inline)."""
    found = [
        props.get("referencedSecurityGroupId"),
        props.get("sourceSecurityGroupId"),
        *(props.get("securityGroups") or []),
    ]
    return [str(group) for group in found if group and not is_unknown(group)]


def _beyond_intent(
    rule: dict, lists: dict[str, list[str]], config: dict, groups: set[str], open_to_internet: bool
) -> list[str]:
    """What the ingress rule admits beyond the stack's intent (nothing judged when the config names no ranges)."""
    if not config["allowed_ranges"]:
        return []
    beyond = []
    # Its own ranges and its plan-made prefix lists' entries alike; the internet is said once, above.
    outside = [] if open_to_internet else outside_ranges(_ranges(rule, lists), config["allowed_ranges"])
    if outside:
        beyond.append(f"{', '.join(outside)}, beyond the VPC and the deployer networks")
    listed = [str(pl) for pl in [rule.get("prefixListId"), *(rule.get("prefixListIds") or [])] if pl]
    foreign_lists = [pl for pl in listed if not is_unknown(pl) and pl not in lists]
    if foreign_lists:
        beyond.append(f"prefix list {', '.join(foreign_lists)}, which the plan does not create")
    foreign_groups = [group for group in _sources(rule) if group not in groups]
    if foreign_groups:
        beyond.append(f"security group {', '.join(foreign_groups)}, which the plan does not create")
    return beyond


def findings(resource, lists, config, groups):
    if resource.type == INGRESS_RULE or (resource.type == GROUP_RULE and resource.props.get("type") == "ingress"):
        rules = [resource.props]
    elif resource.type == GROUP:
        rules = [r for r in resource.props.get("ingress") or [] if isinstance(r, dict)]
    elif resource.type == DEFAULT_GROUP:
        given = [direction for direction in ("ingress", "egress") if resource.props.get(direction)]
        if given:
            yield (
                f"{resource.name}: the VPC's default security group has {' and '.join(given)} rules; it must "
                "admit and send nothing (whatever is launched without a group gets it)"
            )
        return
    else:
        return
    for rule in rules:
        ranges = _ranges(rule, lists)
        ports = f"{rule.get('fromPort', '*')}-{rule.get('toPort', '*')}"
        open_to_internet = reaches_internet([{"cidr": r} for r in ranges])
        if open_to_internet:
            yield f"{resource.name}: admits {', '.join(ranges)} on ports {ports}: the internet"
        for beyond in _beyond_intent(rule, lists, config, groups, open_to_internet):
            yield f"{resource.name}: admits {beyond} (ports {ports})"


def check(resources, config):
    lists = prefix_list_ranges(resources)
    groups = {str(r.id) for r in of_types(resources, GROUP, DEFAULT_GROUP) if r.id}
    for resource in of_types(resources, *JUDGED):
        for message in findings(resource, lists, config, groups):
            yield resource.urn, message


RULE = Rule(
    name="aws-vpc-security-group-disallow-open-ingress",
    description="No security group ingress admits the internet (ranges, its own or a managed prefix list's, that "
    "together reach a /8 of public addresses).",
    severity="critical",
    remediation="Admit the VPC, the deployer network (cluster.deployer_cidrs) or a security group, never 0.0.0.0/0 "
    "(nor a prefix list holding it).",
    topics=("security", "network"),
    # The VPC's and the deployer networks' ranges (from the stack config; none known: ranges unjudged).
    config={"allowed_ranges": {"type": "array", "items": {"type": "string"}, "default": []}},
    check_stack=check,
    standards=(
        "CIS EKS 5.4.1",
        "EKS BPG: Network security - restrict the cluster security group",
        "CIS AWS Foundations 5.4 (the default security group restricts all traffic)",
    ),
)
