"""Service accounts over prod's plan with what its releases render, as `seedance check` judges them: each pod
runs as an account declared with it; a pod of the program, or of another chart, that names a chart's account
(Kueue's, the autoscaler's) or a Kubernetes controller's fails."""

from dataclasses import replace

import pytest

from components.plan.resources import HELM_RELEASE
from policies.rules.kubernetes_workload_restrict_service_account import RULE
from seedance.check_command import plan_resources, release_charts, rendered_releases, service_accounts
from tests.conftest import _stack_plan
from tests.policies.spellings import resource


def _findings(extra=(), rendered_extra=()):
    """The rule over prod's plan and its releases' objects, with these added to each."""
    resources = [*plan_resources(_stack_plan("prod")), *extra]
    rendered, _ = rendered_releases(resources, "1.35")
    rendered = [*rendered, *rendered_extra]
    config = {"service_accounts": service_accounts(resources, rendered), "release_charts": release_charts(resources)}
    plan = [m for r in resources for m in RULE.check_resource(r, {**config, "release_charts": {}})]
    return plan + [m for r in rendered for m in RULE.check_resource(r, config)]


def _deployment(namespace: str, account: str, name: str = "impostor"):
    pod = {"serviceAccountName": account, "containers": [{"name": "c", "image": "registry.k8s.io/kueue/kueue:v0.19.2"}]}
    return resource(
        "kubernetes:apps/v1:Deployment",
        {"metadata": {"name": name, "namespace": namespace}, "spec": {"template": {"spec": pod}}},
        name,
    )


def test_prods_pods_run_as_accounts_declared_with_them():
    assert _findings() == []


@pytest.mark.parametrize(
    ("namespace", "account", "problem"),
    [
        ("kueue-system", "kueue-controller-manager", "release seedance-prod-queues-kueue declares"),
        ("kube-system", "cluster-autoscaler", "release seedance-prod-autoscaler-release declares"),
        ("kube-system", "job-controller", "a Kubernetes controller's account"),
    ],
)
def test_a_program_pod_as_a_charts_or_a_controllers_account_fails(namespace, account, problem):
    found = _findings([_deployment(namespace, account)])
    assert len(found) == 1 and problem in found[0], found


def test_a_pod_another_chart_renders_as_the_autoscalers_account_fails():
    """Grafana's extra objects render anything: under Grafana's release, the autoscaler's identity is not its."""
    grafana = next(
        r
        for r in plan_resources(_stack_plan("prod"))
        if r.type == HELM_RELEASE and str(r.props.get("chart")) == "grafana"
    )
    rendered = replace(_deployment("kube-system", "cluster-autoscaler"), parent=grafana.urn)
    assert any("release seedance-prod-autoscaler-release declares" in m for m in _findings(rendered_extra=[rendered]))


def test_the_programs_own_account_for_its_own_pod_passes():
    account = resource(
        "kubernetes:core/v1:ServiceAccount", {"metadata": {"name": "worker", "namespace": "apps"}}, "worker-sa"
    )
    assert _findings([account, _deployment("apps", "worker", "worker")]) == []
