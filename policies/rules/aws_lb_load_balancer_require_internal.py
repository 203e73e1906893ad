"""No load balancer the stack declares faces the internet: an `aws.lb`, `aws.alb` or classic `aws.elb` load
balancer is internet-facing unless it says `internal: true` (the provider's default is false). Serving is
reached through internal load balancers only; the Services' controller-made ones are judged by
kubernetes-service-require-internal-load-balancer."""

import json

from components.plan.resources import LOAD_BALANCERS, is_unknown
from policies.framework import Rule
from policies.readers.pods import on


def check(resource, config):
    if resource.type not in LOAD_BALANCERS:
        return
    internal = resource.props.get("internal")
    if not on(internal) and not is_unknown(internal):
        said = (
            "it says nothing, and the provider's default is internet-facing"
            if internal is None
            else f"it says internal: {json.dumps(internal)}"
        )
        yield f"{resource.name}: an internet-facing load balancer: {said}"


RULE = Rule(
    name="aws-lb-load-balancer-require-internal",
    description="Load balancers the stack declares are internal.",
    severity="critical",
    remediation="Set internal: true and place it in the private subnets.",
    topics=("security", "network"),
    check_resource=check,
    resource_types=LOAD_BALANCERS,
    standards=("CIS EKS 5.4.5", "EKS BPG: Network security - internal load balancers"),
)
