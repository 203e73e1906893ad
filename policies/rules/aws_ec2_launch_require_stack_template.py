"""Every fleet of instances launches from a launch template the stack declares, where the gate checks IMDSv2,
the hop limit, public IPs and volume encryption: an Auto Scaling group (its template, its mixed-instances
template and every override's), an EKS node group, an instance, an EC2 fleet or a spot fleet that names a
template from elsewhere (`lt-0legacy`) launches with settings nobody judged, and a spot fleet's launch
specifications cannot require IMDSv2 at all. The engine gives a stack policy no resource ids, so under
`pulumi preview` a reference stands when the group depends on a template of the plan (`seedance check`,
which has the ids, judges each reference)."""

from components.plan.resources import ASG, EC2_FLEET, EC2_INSTANCE, EKS_NODE_GROUP, LAUNCH_TEMPLATE, SPOT_FLEET
from components.plan.unknowns import of_types
from policies.framework import Rule

LAUNCHERS = frozenset({ASG, EKS_NODE_GROUP, EC2_INSTANCE, SPOT_FLEET, EC2_FLEET})


def _reference(spec) -> str | None:
    """The id or name a template specification names, in any of the provider's spellings."""
    if not isinstance(spec, dict):
        return None
    for key in ("id", "launchTemplateId", "name", "launchTemplateName"):
        value = spec.get(key)
        if value:
            return value
    return None


def _references(resource) -> list:
    if resource.type not in LAUNCHERS:
        return []  # before reading props: reading them checks them for unknowns
    props = resource.props
    if resource.type in (ASG, EKS_NODE_GROUP, EC2_INSTANCE):
        found = [props.get("launchTemplate")]
        mixed = (props.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}
        found += [mixed.get("launchTemplateSpecification")]
        found += [o.get("launchTemplateSpecification") for o in mixed.get("overrides") or [] if isinstance(o, dict)]
        return [r for r in map(_reference, found) if r is not None]
    if resource.type in (SPOT_FLEET, EC2_FLEET):
        return [
            _reference(c.get("launchTemplateSpecification"))
            for c in props.get("launchTemplateConfigs") or []
            if isinstance(c, dict)
        ]
    return []


def check(resources, config):
    templates = of_types(resources, LAUNCH_TEMPLATE)
    known_ids = {r.id for r in templates if r.id}
    declared = known_ids | {r.props.get("name") for r in templates if r.props.get("name")}
    linked = {r.urn for r in templates}
    for resource in resources:
        if resource.type == SPOT_FLEET and resource.props.get("launchSpecifications"):
            yield (
                resource.urn,
                (
                    f"{resource.name}: launches from launch specifications, which cannot require "
                    "IMDSv2 (no metadata options): use a launch template of the stack's"
                ),
            )
        for reference in _references(resource):
            if reference in declared or (not known_ids and linked & set(resource.dependencies)):
                continue
            yield (
                resource.urn,
                (
                    f"{resource.name}: launches from launch template {reference}, which the stack does "
                    "not declare (its IMDS, public IP and volume settings are unchecked)"
                ),
            )


RULE = Rule(
    name="aws-ec2-launch-require-stack-template",
    description="Groups, node groups, instances and fleets launch only from launch templates the stack declares.",
    severity="critical",
    remediation="Declare the launch template in the stack (the node group components do) and reference it by id.",
    topics=("security", "compute"),
    check_stack=check,
    standards=("EKS BPG: IAM - restrict access to the instance profile assigned to the worker node",),
)
