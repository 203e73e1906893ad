"""Bindings of built-in roles over the prod plan: the aggregated API servers' charts bind system:auth-delegator
to their own accounts and pass; the same binding declared by the program for a team's account does not."""

from components.plan.resources import K8S_ROLE_BINDINGS
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.policies.spellings import resource

RULE = "kubernetes-rbac-binding-disallow-escalating-roles"
BUDGET = {
    name: {"monthly_budget_usd": 1e9} for name in ("budget-monthly-cost-limit", "budget-monthly-cost-warn-near-budget")
}


def test_a_charts_delegator_binding_passes_and_a_declared_one_does_not():
    prod = plan_resources(_stack_plan("prod"))
    binding = {
        "metadata": {"name": "team-delegator"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:auth-delegator"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": "video-train"}],
    }
    declared = resource(K8S_ROLE_BINDINGS[0], binding, "team-delegator")
    for resources, expected in ((prod, []), ([*prod, declared], ["team-delegator"])):
        violations, _ = check(resources, "prod", "us-east-1", BUDGET, kubernetes_version="1.35")
        assert [v.message.split(":")[0] for v in violations if v.policy == RULE] == expected
