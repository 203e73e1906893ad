"""The Kubernetes API is private, or public only to named networks where the environment allows it. EKS
opens the public endpoint to 0.0.0.0/0 when a cluster says nothing."""

from components.plan.resources import EKS_CLUSTER
from policies.framework import Rule

OPEN = {"0.0.0.0/0", "::/0"}


def check(resource, config):
    if resource.type != EKS_CLUSTER:
        return
    vpc = resource.props.get("vpcConfig") or {}
    if vpc.get("endpointPublicAccess", True) is False:  # EKS's default is public
        return
    if not config["allow_public_endpoint"]:
        yield f"{resource.name}: the Kubernetes API has a public endpoint"
        return
    cidrs = vpc.get("publicAccessCidrs") or ["0.0.0.0/0"]
    if OPEN & set(cidrs):
        yield f"{resource.name}: the public Kubernetes API endpoint admits the whole internet"


RULE = Rule(
    name="aws-eks-cluster-restrict-public-endpoint",
    description="EKS API endpoints are private; where an environment allows a public one, it admits named CIDRs only.",
    severity="critical",
    remediation="Set vpc_config endpoint_public_access=False (deploy from inside the network), or list "
    "public_access_cidrs where the environment allows a public endpoint.",
    topics=("security", "network"),
    config={"allow_public_endpoint": {"type": "boolean", "default": False}},
    check_resource=check,
    resource_types=frozenset({EKS_CLUSTER}),
    standards=("CIS EKS 5.4.1", "CIS EKS 5.4.2"),
)
