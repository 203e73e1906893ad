"""Nodes launch only into private subnets: a group or node group whose subnets map public IPs on launch,
or route anything through an internet gateway (AWS's own definition of a public subnet: `2000::/3` or
`0.0.0.0/1` reach the internet as surely as a default route, and an IPv6 address needs no NAT), puts GPU
nodes on the internet whatever their launch template says. Judged on the subnets, route tables and routes
the plan itself creates (a subnet from elsewhere is another stack's to judge)."""

from components.plan.resources import (
    ASG,
    EKS_NODE_GROUP,
    INTERNET_GATEWAY,
    ROUTE,
    ROUTE_TABLE,
    SUBNET,
)
from components.plan.resources import (
    ROUTE_TABLE_ASSOCIATION as ASSOCIATION,
)
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.pods import on


def _internet_route(route, gateways) -> str | None:
    """The destination of a route through an internet gateway (None for any other route)."""
    destination = (
        route.get("destinationCidrBlock")
        or route.get("cidrBlock")
        or route.get("destinationIpv6CidrBlock")
        or route.get("ipv6CidrBlock")
        or route.get("destinationPrefixListId")
        or "a destination"
    )
    gateway = str(route.get("gatewayId") or "")
    return str(destination) if gateway.startswith("igw-") or gateway in gateways else None


def public_subnets(resources) -> dict[str, str]:
    """id -> why, of each subnet the plan creates that is public."""
    gateways = {r.id for r in of_types(resources, INTERNET_GATEWAY) if r.id}
    to_internet: dict[str | None, str] = {}  # route table id -> the default route it sends through an internet gateway
    for resource in of_types(resources, ROUTE_TABLE, ROUTE):  # only these are read (reading checks them)
        if resource.type == ROUTE_TABLE:
            routes, table = resource.props.get("routes") or [], resource.id
        else:
            routes, table = [resource.props], resource.props.get("routeTableId")
        for destination in filter(None, (_internet_route(route, gateways) for route in routes)):
            to_internet.setdefault(table, destination)
    routed = {
        r.props.get("subnetId"): to_internet[r.props.get("routeTableId")]
        for r in of_types(resources, ASSOCIATION)
        if r.props.get("routeTableId") in to_internet
    }
    found: dict[str, str] = {}
    for subnet in of_types(resources, SUBNET):
        if not subnet.id:
            continue
        if on(subnet.props.get("mapPublicIpOnLaunch")):
            found[subnet.id] = "maps a public IP to every instance it launches"
        elif subnet.id in routed:
            found[subnet.id] = f"routes {routed[subnet.id]} through an internet gateway"
    return found


def check(resources, config):
    public = public_subnets(resources)
    for resource in of_types(resources, ASG, EKS_NODE_GROUP):
        subnets = resource.props.get("vpcZoneIdentifiers" if resource.type == ASG else "subnetIds")
        for subnet in subnets if isinstance(subnets, list) else []:
            if subnet in public:
                yield resource.urn, f"{resource.name}: launches nodes into {subnet}, which {public[subnet]}"


RULE = Rule(
    name="aws-autoscaling-group-require-private-subnets",
    description="Auto Scaling groups and EKS node groups launch into private subnets only (no public IP on launch, "
    "no internet-gateway default route).",
    severity="critical",
    remediation="Give the group the stack's private subnets (network.private_subnet_ids); egress goes through NAT "
    "and the VPC endpoints.",
    topics=("security", "network"),
    check_stack=check,
    standards=("CIS EKS 5.4.3", "EKS BPG: Network security - deploy nodes to private subnets"),
)
