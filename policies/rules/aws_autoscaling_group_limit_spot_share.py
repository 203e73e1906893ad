"""A GPU group's spot share stays within its workload class's cap at its largest size. A group without a
MixedInstancesPolicy declares no share the gate can weigh: its launch template's market options may run it
all on spot (EC2 refuses such a template inside a MixedInstancesPolicy, so a capped group needs one)."""

from components.plan.resources import ASG, is_unknown
from policies.framework import Rule
from policies.rules._helpers import BREAKER_SETTING, capped_class, class_table, number, spot_share_at


def check(resource, config):
    klass = capped_class(resource, config, "caps")
    if klass is None:
        return
    policy = resource.props.get("mixedInstancesPolicy")
    if not policy and not is_unknown(policy):
        yield (f"{resource.name} ({klass}) has no MixedInstancesPolicy: its spot share is not declared (its launch "
               "template's market options decide it), so the class cap cannot hold")
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
    config={**BREAKER_SETTING, "caps": {"type": "object", "default": class_table("max_spot_share")}},
    check_resource=check,
    resource_types=frozenset({ASG}),
)
