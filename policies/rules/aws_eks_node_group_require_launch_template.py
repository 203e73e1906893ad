"""A managed node group launches from a launch template of the stack's: without one, EKS's own template
decides the instance metadata options (a hop limit of 2 reaches the node role from pods) and the root
volume, and nothing the gate checks on templates applies."""

from components.plan.resources import EKS_NODE_GROUP
from policies.framework import Rule


def check(resource, config):
    if resource.type != EKS_NODE_GROUP:
        return
    template = resource.props.get("launchTemplate") or {}
    if not (template.get("id") or template.get("name")):
        yield f"{resource.name}: launches from EKS's default template (IMDS and root volume unchecked)"


RULE = Rule(
    name="aws-eks-node-group-require-launch-template",
    description="EKS managed node groups name a launch template (where IMDSv2, the hop limit and volume encryption "
    "are set and checked).",
    severity="high",
    remediation="Give the node group the stack's launch template (launchTemplate.id and version).",
    topics=("security", "compute"),
    check_resource=check,
    resource_types=frozenset({EKS_NODE_GROUP}),
    standards=("EKS BPG: IAM - restrict access to the instance profile assigned to the worker node",),
)
