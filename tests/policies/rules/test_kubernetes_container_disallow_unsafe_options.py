"""The platform's charts as `seedance check` renders them with Helm's engine: as the program sets their
values they pass; a release whose values turn the autoscaler's scale-down off, or keep idle nodes longer
than the stack config allows, fails on the Deployment the chart renders from them."""

from dataclasses import replace

import pytest

from components.plan.resources import HELM_RELEASE
from policies.expectations import stack_policy_config
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config

RULE = "kubernetes-container-disallow-unsafe-options"
PROD = stack_config("prod")


def _judged(extra_args=None):
    resources = plan_resources(_stack_plan("prod"))
    if extra_args is not None:
        release = next(r for r in resources if r.type == HELM_RELEASE and "autoscaler" in r.name)
        values = {**release.props["values"], "extraArgs": {**release.props["values"]["extraArgs"], **extra_args}}
        resources = [replace(r, props={**r.props, "values": values}) if r is release else r for r in resources]
    violations, _ = check(
        resources, "prod", PROD.region, stack_policy_config(PROD), kubernetes_version=PROD.cluster.kubernetes_version
    )
    return [v.message for v in violations if v.policy == RULE]


@pytest.mark.parametrize(
    "extra_args, said",
    [
        (None, None),
        ({"scale-down-enabled": False}, "scale-down off"),
        ({"scale-down-unneeded-time": "6h"}, "keeps an unneeded node 6h"),
    ],
)
def test_the_rendered_autoscaler_keeps_scale_down_as_the_config_sets_it(extra_args, said):
    found = _judged(extra_args)
    assert found == [] if said is None else (len(found) == 1 and said in found[0])
