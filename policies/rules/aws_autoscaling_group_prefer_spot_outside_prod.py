"""Outside prod, GPU groups run spot above a zero base: the source's budget-breaker stance (advisory)."""

from components.capacity.mix import asg_mix
from components.plan.resources import ASG
from policies.framework import Rule
from policies.rules._helpers import workload_class


def check(resource, config):
    if resource.type != ASG or workload_class(resource) is None:
        return
    mix = asg_mix(resource)
    if mix is None:
        return
    base, percentage = mix.on_demand_base, mix.on_demand_percentage_above_base
    if base > 0 or percentage >= 100:
        yield (
            f"{resource.name} keeps {base:g} GPUs on-demand and {percentage:g}% above them; outside prod run spot "
            "above a zero base (seedance decide with live prices, or class_overrides ri_baseline: 0)"
        )


RULE = Rule(
    name="aws-autoscaling-group-prefer-spot-outside-prod",
    description="Dev and staging GPU groups run spot above a zero on-demand base.",
    severity="low",
    remediation="Decide the group's capacity from live prices, with ri_baseline 0 for non-prod classes.",
    topics=("cost",),
    check_resource=check,
    resource_types=frozenset({ASG}),
)
