"""Triton's ingress over the prod plan: the program's own policies pass, judged against the stack config's
intent (the same `triton_ingress` the program writes them with); a policy added beside them that admits a
namespace the config does not name, however spelled, is refused."""

import pytest

from components.plan.resources import K8S_NETWORK_POLICY
from policies.expectations import stack_policy_config
from policies.framework import run_rules
from policies.rules.kubernetes_networkpolicy_restrict_serving_ingress import RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan
from tests.policies.spellings import resource
from tests.stacks import stack_config

NAME = "kubernetes.io/metadata.name"


def _config() -> dict:
    return {RULE.name: stack_policy_config(stack_config("prod"))[RULE.name]}


def test_the_programs_serving_policies_pass():
    prod = plan_resources(_stack_plan("prod"))
    serving = [r for r in prod if r.type == K8S_NETWORK_POLICY and r.props["metadata"]["namespace"] == "triton-video"]
    assert any((r.props.get("spec") or {}).get("ingress") for r in serving)
    assert run_rules([RULE], prod, {"all": "mandatory"}, _config()) == []


@pytest.mark.parametrize(
    "peer",
    [
        {"namespaceSelector": {"matchLabels": {NAME: "video-train"}}},
        {"namespaceSelector": {"matchExpressions": [{"key": NAME, "operator": "In", "values": ["video-train"]}]}},
        {"namespaceSelector": {"matchExpressions": [{"key": NAME, "operator": "NotIn", "values": ["kube-system"]}]}},
        {"podSelector": {"matchLabels": {"app": "debug"}}, "namespaceSelector": {"matchLabels": {"tier": "api"}}},
    ],
    ids=["by-name", "by-in", "by-not-in", "by-other-label"],
)
def test_a_caller_the_config_does_not_name_is_refused(peer):
    added = resource(
        K8S_NETWORK_POLICY,
        {
            "metadata": {"name": "extra", "namespace": "triton-video"},
            "spec": {"podSelector": {}, "ingress": [{"from": [peer], "ports": [{"port": 8001}]}]},
        },
        "extra",
    )
    (finding,) = run_rules([RULE], [added], {"all": "mandatory"}, _config())
    assert "in serving namespace triton-video admits" in finding.message
