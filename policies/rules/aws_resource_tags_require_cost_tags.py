"""Every taggable AWS resource carries the cost-allocation tags (the source: attribute cost by team and env),
and so does what a launch template launches: its instances and their volumes, the GPU spend itself, are
tagged by the template's tagSpecifications (a template's own tags stay on the template)."""

from components.plan.resources import LAUNCH_TEMPLATE, TAGGABLE_WITHOUT_TAGS_INPUT, tags_of
from policies.framework import Rule

LAUNCHED = ("instance", "volume")


def check(resource, config):
    if not resource.type.startswith("aws:"):
        return
    tags = tags_of(resource)
    if tags is None and resource.type not in TAGGABLE_WITHOUT_TAGS_INPUT:
        return
    missing = [key for key in config["tags"] if not (tags or {}).get(key)]
    if missing:
        yield f"{resource.type} {resource.name} lacks cost tags {', '.join(missing)}: its spend cannot be attributed"
    if resource.type == LAUNCH_TEMPLATE:
        launched = {
            str(spec.get("resourceType")): spec.get("tags") or {}
            for spec in resource.props.get("tagSpecifications") or []
            if isinstance(spec, dict)
        }
        for kind in LAUNCHED:
            missing = [key for key in config["tags"] if not launched.get(kind, {}).get(key)]
            if missing:
                yield (
                    f"{resource.type} {resource.name} launches {kind}s without cost tags {', '.join(missing)} "
                    "(tagSpecifications): their spend cannot be attributed"
                )


RULE = Rule(
    name="aws-resource-tags-require-cost-tags",
    description="Taggable AWS resources carry the cost-allocation tags.",
    severity="medium",
    remediation="Add the tags (default team, env, cost-center) to the resource, e.g. through the stack's tags.",
    topics=("cost", "tagging"),
    config={"tags": {"type": "array", "items": {"type": "string"}, "default": ["team", "env", "cost-center"]}},
    check_resource=check,
    type_prefix="aws:",
)
