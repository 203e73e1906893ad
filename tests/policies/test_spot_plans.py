"""The pack over the plans that run spot (each stack from a spot lock, at the class caps), and each
spot rule at its threshold: at it passes, a hair above it fails, whatever the slack or the comparison."""

import copy

import pytest

from components.capacity.workload_classes import workload_classes
from components.cost.estimate import catalog_for, estimate
from components.plan.resources import ASG, PlanResource
from policies.framework import load_enforcement, run_rules
from policies.rules import ALL_RULES
from seedance.check_command import plan_resources
from tests.stacks import stack_config


def test_the_whole_pack_passes_every_spot_plan_with_no_mandatory_finding(mixed_stack_plan):
    """The planner's own plans sit at the caps (batch 90 %): a rule stricter than the cap, by slack or by
    `>=`, flags them here."""
    resources = plan_resources(mixed_stack_plan)
    budget = {
        "monthly_budget_usd": stack_config(mixed_stack_plan.stack).budget.monthly_usd,
        "region": stack_config(mixed_stack_plan.stack).region,
    }
    extra = {"budget-monthly-cost-limit": budget, "budget-monthly-cost-warn-near-budget": budget}
    found = run_rules(ALL_RULES, resources, load_enforcement(mixed_stack_plan.stack), extra)
    assert [(v.policy, v.message) for v in found if v.level == "mandatory"] == []


def _group(klass, base, percentage, max_size):
    return PlanResource(
        f"urn:g-{klass}",
        ASG,
        f"g-{klass}",
        {
            "desiredCapacity": max_size,
            "maxSize": max_size,
            "minSize": 0,
            "mixedInstancesPolicy": {
                "instancesDistribution": {
                    "onDemandBaseCapacity": base,
                    "onDemandPercentageAboveBaseCapacity": percentage,
                },
                "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]},
            },
            "tags": [
                {
                    "key": "k8s.io/cluster-autoscaler/node-template/label/seedance.io/workload-class",
                    "value": klass,
                    "propagateAtLaunch": True,
                }
            ],
        },
    )


LIMIT = next(r for r in ALL_RULES if r.name == "aws-autoscaling-group-limit-spot-share")


@pytest.mark.parametrize("klass", ["batch", "online"])
def test_the_spot_share_limit_holds_exactly_at_the_class_cap(klass):
    cap = workload_classes()[klass].max_spot_share
    percentage = round(100 * (1 - cap))  # no base: the share is (100 - p) % at every size
    at_cap = _group(klass, 0, percentage, 100)
    above = _group(klass, 0, percentage - 1, 100)  # one point over the cap
    assert run_rules([LIMIT], [at_cap], {"all": "mandatory"}) == []
    (violation,) = run_rules([LIMIT], [above], {"all": "mandatory"})
    assert f"the {klass} cap is {cap:.0%}" in violation.message


def test_the_estimate_prices_spot_units_as_on_demand(mixed_stack_plan):
    """Spot prices are not bundled: a group's estimate is its cost with no spot at all, so a spot unit is
    never priced at $0 (nor below on-demand, which the budget would then understate)."""
    resources = plan_resources(mixed_stack_plan)
    catalog = catalog_for(stack_config(mixed_stack_plan.stack).region)
    priced = {line.urn: line.monthly_usd for line in estimate(resources, catalog).lines}
    groups = [r for r in resources if r.type == ASG and (r.props.get("desiredCapacity") or 0) > 0]
    assert groups
    for group in groups:
        on_demand = copy.deepcopy(group.props)
        distribution = on_demand["mixedInstancesPolicy"]["instancesDistribution"]
        distribution.update(onDemandBaseCapacity=on_demand["desiredCapacity"], onDemandPercentageAboveBaseCapacity=100)
        alone = PlanResource(group.urn, group.type, group.name, on_demand, group.parent, group.dependencies, group.id)
        others = [r for r in resources if r.urn != group.urn]
        assert priced[group.urn] == pytest.approx(
            {line.urn: line.monthly_usd for line in estimate([*others, alone], catalog).lines}[group.urn]
        )
        assert priced[group.urn] > 0
