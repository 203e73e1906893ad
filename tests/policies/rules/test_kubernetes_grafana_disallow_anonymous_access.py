"""Grafana's chart as `seedance check` renders it: the platform's values pass; values that let anonymous users
in, or set a known admin password, fail on the ConfigMap and Secret the chart renders from them."""

from dataclasses import replace

import pytest

from components.plan.resources import HELM_RELEASE
from policies.expectations import stack_policy_config
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.stacks import stack_config

RULE = "kubernetes-grafana-disallow-anonymous-access"
PROD = stack_config("prod")


def _judged(change=None):
    resources = plan_resources(_stack_plan("prod"))
    if change is not None:
        release = next(r for r in resources if r.type == HELM_RELEASE and r.name.endswith("grafana"))
        values = change(dict(release.props["values"]))
        resources = [replace(r, props={**r.props, "values": values}) if r is release else r for r in resources]
    violations, _ = check(
        resources, "prod", PROD.region, stack_policy_config(PROD), kubernetes_version=PROD.cluster.kubernetes_version
    )
    return [v.message for v in violations if v.policy == RULE]


def _anonymous(values):
    return {
        **values,
        "grafana.ini": {**values["grafana.ini"], "auth.anonymous": {"enabled": True, "org_role": "Admin"}},
    }


@pytest.mark.parametrize(
    "change, said",
    [
        (None, None),
        (_anonymous, "auth.anonymous enabled, as Admin"),
        (lambda values: {**values, "adminPassword": "admin"}, "known Grafana admin password"),
    ],
)
def test_the_rendered_grafana_admits_no_anonymous_user_and_no_known_password(change, said):
    found = _judged(change)
    assert found == [] if said is None else (len(found) == 1 and said in found[0])
