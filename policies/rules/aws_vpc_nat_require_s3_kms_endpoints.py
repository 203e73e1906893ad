"""A VPC that pays for NAT has S3 and KMS endpoints, so AWS-bound data does not pay NAT processing."""

from components.plan.resources import NAT_GATEWAY, VPC_ENDPOINT
from policies.framework import Rule


def check(resources, config):
    nat = [r for r in resources if r.type == NAT_GATEWAY]
    if not nat:
        return
    services = {str(r.props.get("serviceName", "")).rsplit(".", 1)[-1] for r in resources if r.type == VPC_ENDPOINT}
    missing = [service for service in ("s3", "kms") if service not in services]
    if missing:
        yield None, (f"the VPC has {len(nat)} NAT gateway(s) but no {' or '.join(missing)} endpoint: that traffic "
                           "pays NAT processing ($0.045/GB) and cross-zone transfer")


RULE = Rule(
    name="aws-vpc-nat-require-s3-kms-endpoints",
    description="A VPC with NAT gateways has S3 and KMS VPC endpoints.",
    severity="medium",
    remediation="Add PrivateEndpoints (an S3 gateway endpoint is free; KMS needs an interface endpoint).",
    topics=("cost", "network"),
    check_stack=check,
)
