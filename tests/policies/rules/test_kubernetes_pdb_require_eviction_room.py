"""Disruption budgets on the stacks' own plans: Triton's passes; the same budget edited to allow no eviction
(issue 49's review, D01: `maxUnavailable: 0` on Triton's budget kept its GPU nodes undrainable) fails in
each spelling: a zero count, a zero percentage, a minimum of all, a minimum of every pod its two
Deployments run at their fewest (the stable one's autoscaler floor and the canary's replica)."""

import copy

import pytest

from components.plan.resources import K8S_DEPLOYMENT, K8S_HPA, K8S_PDB
from policies.rules.kubernetes_pdb_require_eviction_room import RULE, check
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan


def _prod():
    return plan_resources(_stack_plan("prod"))


def test_the_stacks_budgets_leave_room():
    for stack in ("dev", "staging", "prod"):
        assert list(check(plan_resources(_stack_plan(stack)), RULE.defaults())) == [], stack


@pytest.mark.parametrize(
    "spec",
    [{"maxUnavailable": 0}, {"maxUnavailable": "0%"}, {"minAvailable": "100%"}, "the workloads' floor"],
    ids=["zero", "zero-percent", "all", "floor"],
)
def test_tritons_budget_edited_to_allow_no_eviction_fails(spec):
    resources = copy.deepcopy(_prod())
    (budget,) = [r for r in resources if r.type == K8S_PDB and "triton-video" in r.name]
    if spec == "the workloads' floor":  # the stable Deployment's autoscaler floor, and the canary's replica
        (autoscaler,) = [r for r in resources if r.type == K8S_HPA and "triton-video" in r.name]
        (canary,) = [
            r for r in resources if r.type == K8S_DEPLOYMENT and r.name.endswith("triton-video-deployment-canary")
        ]
        spec = {"minAvailable": autoscaler.props["spec"]["minReplicas"] + canary.props["spec"]["replicas"]}
    budget.props["spec"] = {k: v for k, v in budget.props["spec"].items() if k != "maxUnavailable"} | spec
    (found,) = list(check(resources, RULE.defaults()))
    assert found[0] == budget.urn and "no eviction" in found[1]
