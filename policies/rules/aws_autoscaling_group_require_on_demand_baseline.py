"""A GPU group's on-demand base covers its class's RI baseline share of the desired size."""

from components.capacity.mix import asg_mix, ceil_share
from components.plan.resources import ASG
from policies.framework import Rule
from policies.rules._helpers import CLASS_SETTINGS, capped_class, class_table, number


def check(resource, config):
    klass = capped_class(resource, config, "baselines")
    if klass is None:
        return
    desired = number(resource.props.get("desiredCapacity"))
    mix = asg_mix(resource)
    if desired is None or mix is None:
        return
    base = mix.on_demand_base
    needed = min(ceil_share(config["baselines"][klass], desired), number(resource.props.get("maxSize")) or desired)
    if base < needed:
        yield (
            f"{resource.name} ({klass}) has an on-demand base of {base:g} instances; the {klass} RI baseline "
            f"needs {needed} of its {desired:g} desired instances"
        )


RULE = Rule(
    name="aws-autoscaling-group-require-on-demand-baseline",
    description="GPU groups keep an on-demand base of at least the class RI baseline (batch 10 %, online 85 %).",
    severity="high",
    remediation="Raise on_demand_base_capacity (seedance decide computes it from RIs and the baseline).",
    topics=("cost", "reliability"),
    config={**CLASS_SETTINGS, "baselines": {"type": "object", "default": class_table("ri_baseline")}},
    check_resource=check,
    resource_types=frozenset({ASG}),
)
