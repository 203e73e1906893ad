"""Roles judged by their effect on the platform, over the prod plan and what its charts render: the charts'
controllers keep what they need and no more, and a role the program declares gets no chart's allowance by
naming a release as its parent."""

from dataclasses import replace

from components.plan.resources import HELM_RELEASE, K8S_ROLES
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.policies.spellings import resource

RULE = "kubernetes-rbac-role-disallow-escalation"
BUDGET = {
    name: {"monthly_budget_usd": 1e9} for name in ("budget-monthly-cost-limit", "budget-monthly-cost-warn-near-budget")
}


def _findings(resources) -> list[str]:
    violations, _ = check(resources, "prod", "us-east-1", BUDGET, kubernetes_version="1.35")
    return [v.message for v in violations if v.policy == RULE]


def test_the_charts_roles_pass_and_one_that_grows_does_not(monkeypatch):
    import seedance.check_command as command

    prod = plan_resources(_stack_plan("prod"))
    assert _findings(prod) == []
    real = command.rendered_resources

    def grown(release, version):
        objects = real(release, version)
        if release.props.get("chart") != "cluster-autoscaler":
            return objects
        return [
            replace(
                o,
                props={
                    **o.props,
                    "rules": [*o.props["rules"], {"apiGroups": [""], "resources": ["nodes"], "verbs": ["delete"]}],
                },
            )
            if o.type == K8S_ROLES[0]
            else o
            for o in objects
        ]

    monkeypatch.setattr(command, "rendered_resources", grown)
    (finding,) = _findings(prod)
    assert "cluster-autoscaler" in finding and "grants delete on nodes" in finding


def test_a_declared_role_under_a_release_gets_no_chart_allowance():
    prod = plan_resources(_stack_plan("prod"))
    (release,) = [r for r in prod if r.type == HELM_RELEASE and r.props.get("chart") == "cluster-autoscaler"]
    role = {
        "metadata": {"name": "borrowed"},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["update"]}],
    }
    borrowed = replace(resource(K8S_ROLES[0], role, "borrowed"), parent=release.urn)
    assert _findings([*prod, borrowed]) == ["borrowed: rule 0 grants update on nodes"]
