"""Priority classes over prod's plan: the platform's pass, as the plan writes them (numbers read back as
floats) and with the API server's defaults left out; batch raised or let preempt, a class of another name,
and a global default fail."""

import copy
from dataclasses import replace

import pytest

from policies.rules.kubernetes_priorityclass_restrict_to_platform import PRIORITY_CLASS_TYPE, RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.policies.spellings import resource


def _classes():
    return [r for r in plan_resources(_stack_plan("prod")) if r.type == PRIORITY_CLASS_TYPE]


def _findings(found):
    return [m for r in found for m in RULE.check_resource(r, RULE.defaults())]


def test_prods_classes_are_the_platforms_however_the_plan_writes_them():
    classes = _classes()
    assert len(classes) == 3 and _findings(classes) == []
    floats = [replace(c, props={**c.props, "value": float(c.props["value"])}) for c in classes]
    assert _findings(floats) == []
    online = next(c for c in classes if c.props["metadata"]["name"] == "seedance-online")
    defaults_left_out = replace(online, props={k: v for k, v in online.props.items() if k != "preemptionPolicy"})
    assert _findings([defaults_left_out]) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"value": 200000}, "value 200000"),
        ({"preemptionPolicy": "PreemptLowerPriority"}, "preemptionPolicy 'PreemptLowerPriority'"),
        ({"globalDefault": True}, "globalDefault True"),
    ],
)
def test_batch_changed_fails(change, problem):
    batch = next(c for c in _classes() if c.props["metadata"]["name"] == "seedance-batch")
    changed = replace(batch, props={**copy.deepcopy(batch.props), **change})
    found = _findings([changed])
    assert len(found) == 1 and problem in found[0], found


def test_a_class_of_another_name_fails():
    other = resource(PRIORITY_CLASS_TYPE, {"metadata": {"name": "team-urgent"}, "value": 999999}, "urgent")
    assert "is not one of the platform's" in _findings([other])[0]
