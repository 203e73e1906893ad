"""Interface endpoints have private DNS on, or clients keep resolving the public name and using NAT."""

from components.plan.resources import VPC_ENDPOINT
from policies.framework import Rule


def check(resource, config):
    if (
        resource.type == VPC_ENDPOINT
        and resource.props.get("vpcEndpointType") == "Interface"
        and resource.props.get("privateDnsEnabled") is not True
    ):
        yield f"{resource.name} ({resource.props.get('serviceName')}) has private DNS off: clients still go through NAT"


RULE = Rule(
    name="aws-vpc-endpoint-require-private-dns",
    description="Interface VPC endpoints have private DNS enabled.",
    severity="medium",
    remediation="Set private_dns_enabled: true.",
    topics=("cost", "network"),
    check_resource=check,
    resource_types=frozenset({VPC_ENDPOINT}),
)
