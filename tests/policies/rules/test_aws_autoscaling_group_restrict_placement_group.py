"""prod's placement group, as the program declares it, passes; the same group given reserved capacity, or its
placement group given another strategy, does not."""

import copy
from dataclasses import replace

import pytest

from components.plan.resources import ASG, LAUNCH_TEMPLATE, PLACEMENT_GROUP
from policies.rules.aws_autoscaling_group_restrict_placement_group import RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan


def _findings(resources):
    return [message for _, message in RULE.check_stack(resources, RULE.defaults())]


def _edited(resources, type_, name_part, edit):
    found = next(r for r in resources if r.type == type_ and name_part in r.name)
    changed = replace(found, props=copy.deepcopy(found.props))
    edit(changed.props)
    return [changed if r is found else r for r in resources]


def test_prods_efa_pool_is_the_only_group_in_its_placement_group():
    resources = plan_resources(_stack_plan("prod"))
    placed = [r.name for r in resources if r.type == ASG and r.props.get("placementGroup")]
    assert placed == ["seedance-prod-train-asg"]
    assert _findings(resources) == []


def test_reserved_capacity_or_another_strategy_is_refused():
    resources = plan_resources(_stack_plan("prod"))
    reserved = _edited(
        resources,
        ASG,
        "train-asg",
        lambda p: p.update(
            capacityReservationSpecification={"capacityReservationPreference": "capacity-reservations-first"}
        ),
    )
    assert any("into reserved capacity" in m for m in _findings(reserved))
    spread = _edited(resources, PLACEMENT_GROUP, "train", lambda p: p.update(strategy="spread"))
    assert any("'spread', not cluster" in m for m in _findings(spread))


@pytest.mark.parametrize(
    ("placement", "named"),
    [({"tenancy": "dedicated"}, "tenancy"), ({"groupName": "seedance-prod-train"}, "groupName")],
)
def test_a_template_that_places_its_instances_itself_is_refused(placement, named):
    """The platform's templates place nothing: a dedicated tenancy is billed at a premium the estimate does not
    price, and a placement group named in a template escapes the group's own checks."""
    resources = plan_resources(_stack_plan("prod"))
    placed = _edited(resources, LAUNCH_TEMPLATE, "-batch-template", lambda p: p.update(placement=placement))
    assert any(f"places its instances itself ({named})" in m for m in _findings(placed))
