"""A GPU group's spot share stays within its workload class's cap at its largest size. A group without a
MixedInstancesPolicy declares no share the gate can weigh: its launch template's market options may run it
all on spot (EC2 refuses such a template inside a MixedInstancesPolicy, so a capped group needs one). A
purchased Capacity Block's group has none (its template's market is capacity-block, paid at purchase): it
carries the block's id in its tag, and with the stack config that id must be one of the config's blocks."""

from components.compute.labels import CAPACITY_BLOCK_TAG
from components.plan.resources import ASG, is_unknown, tags_of
from policies.framework import Rule
from policies.rules._helpers import CLASS_SETTINGS, capped_class, class_table, number, spot_share_at


def check(resource, config):
    klass = capped_class(resource, config, "caps")
    if klass is None:
        return
    policy = resource.props.get("mixedInstancesPolicy")
    block = (tags_of(resource) or {}).get(CAPACITY_BLOCK_TAG)
    known = config["capacity_blocks"]
    if block and not policy and (known is None or block in known):
        return  # a purchased block's group: its market is capacity-block, never spot
    if not policy and not is_unknown(policy):
        yield (
            f"{resource.name} ({klass}) has no MixedInstancesPolicy: its spot share is not declared (its launch "
            "template's market options decide it), so the class cap cannot hold"
        )
        return
    size = number(resource.props.get("maxSize"))
    share = spot_share_at(resource, size) if size else None
    cap = config["caps"][klass]
    if share is not None and share > cap + 1e-9:
        yield f"{resource.name} ({klass}) runs {share:.1%} spot at its max size {size:g}; the {klass} cap is {cap:.0%}"


RULE = Rule(
    name="aws-autoscaling-group-limit-spot-share",
    description="GPU groups keep their spot share within the workload class cap (batch 90 %, online 20 %).",
    severity="high",
    remediation="Raise on_demand_percentage_above_base_capacity (seedance decide computes it), or lower max size.",
    topics=("cost", "reliability"),
    config={
        **CLASS_SETTINGS,
        "caps": {"type": "object", "default": class_table("max_spot_share")},
        # The stack config's purchased blocks (reservation ids); null without it: a block tag is taken as it is.
        "capacity_blocks": {"type": ["array", "null"], "items": {"type": "string"}, "default": None},
    },
    check_resource=check,
    resource_types=frozenset({ASG}),
)
