"""A VPC that pays for NAT has S3 and KMS endpoints, so AWS-bound data does not pay NAT processing. An
endpoint counts only where traffic reaches it: in the VPC the NAT gateways serve (when the plan's ids say
which), a gateway endpoint on at least one route table, an interface endpoint in at least one subnet whose
private DNS answers the VPC (without it, or with `privateDnsOnlyForInboundResolverEndpoint`, the VPC's own
lookups of the service's name still go the public way)."""

from components.plan.resources import NAT_GATEWAY, SUBNET, VPC_ENDPOINT
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.pods import on


def _serves(endpoint, vpcs: set) -> bool:
    if vpcs and endpoint.props.get("vpcId") not in vpcs:
        return False
    props = endpoint.props
    if str(props.get("vpcEndpointType") or "Gateway") == "Gateway":  # the provider's default type
        return bool(props.get("routeTableIds"))
    inbound_only = on((props.get("dnsOptions") or {}).get("privateDnsOnlyForInboundResolverEndpoint"))
    return bool(props.get("subnetIds")) and on(props.get("privateDnsEnabled")) and not inbound_only


def check(resources, config):
    nat = of_types(resources, NAT_GATEWAY)
    if not nat:
        return
    nat_subnets = {n.props.get("subnetId") for n in nat}  # read first: the engine gives no ids to match them by
    vpcs = {r.props.get("vpcId") for r in of_types(resources, SUBNET) if r.id and r.id in nat_subnets} - {None}
    services = {
        str(r.props.get("serviceName", "")).rsplit(".", 1)[-1]
        for r in of_types(resources, VPC_ENDPOINT)
        if _serves(r, vpcs)
    }
    missing = [service for service in ("s3", "kms") if service not in services]
    if missing:
        yield (
            None,
            (
                f"the VPC has {len(nat)} NAT gateway(s) but no {' or '.join(missing)} endpoint that its traffic "
                "reaches (in its VPC, on a route table or in a subnet): that traffic pays NAT processing "
                "($0.045/GB) and cross-zone transfer"
            ),
        )


RULE = Rule(
    name="aws-vpc-nat-require-s3-kms-endpoints",
    description="A VPC with NAT gateways has S3 and KMS VPC endpoints.",
    severity="medium",
    remediation="Add PrivateEndpoints (an S3 gateway endpoint is free; KMS needs an interface endpoint).",
    topics=("cost", "network"),
    check_stack=check,
)
