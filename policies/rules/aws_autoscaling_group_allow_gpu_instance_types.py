"""GPU instance families allowed per environment: size the GPU to the work (no p4d/p5 in dev by default)."""

from components.plan.resources import ASG, EC2_INSTANCE, EKS_NODE_GROUP, LAUNCH_TEMPLATE
from policies.framework import Rule


def _instance_types(resource):
    if resource.type == ASG:
        overrides = ((resource.props.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}).get(
            "overrides"
        ) or []
        return [o.get("instanceType") for o in overrides]
    if resource.type == EKS_NODE_GROUP:
        return list(resource.props.get("instanceTypes") or [])
    if resource.type in (EC2_INSTANCE, LAUNCH_TEMPLATE):  # a template names its type for a plain group (a block's)
        return [resource.props.get("instanceType")]
    return []


def check(resource, config):
    types = _instance_types(resource)
    denied = [t for t in types if isinstance(t, str) and t.split(".")[0] in config["denied_families"]]
    if denied:
        yield (
            f"{resource.name} may launch {', '.join(denied)}; families {', '.join(config['denied_families'])} "
            "are not allowed here"
        )
    elif resource.type == ASG and config["denied_families"] and None in types:
        # An override by instanceRequirements: EC2 picks any type with those attributes, a denied family's too.
        yield (
            f"{resource.name} chooses instance types by attributes, which may pick families "
            f"{', '.join(config['denied_families'])} (not allowed here): name the types"
        )


RULE = Rule(
    name="aws-autoscaling-group-allow-gpu-instance-types",
    description="Node groups, instances and launch templates use only the GPU families allowed in the environment.",
    severity="medium",
    remediation="Use a smaller GPU type (g5, g6, g6e) or run the work in an environment that allows it.",
    topics=("cost",),
    config={"denied_families": {"type": "array", "items": {"type": "string"}, "default": []}},
    check_resource=check,
    resource_types=frozenset({ASG, EKS_NODE_GROUP, EC2_INSTANCE, LAUNCH_TEMPLATE}),
)
