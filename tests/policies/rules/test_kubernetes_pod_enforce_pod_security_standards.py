"""Pods found where a kind keeps them: a custom resource's privileged pod is judged as a Deployment's,
in two spellings of kinds the rule has no table for; a pod-carrying kind is still read by its table."""

import pytest

from policies.rules.kubernetes_pod_enforce_pod_security_standards import RULE, check
from tests.policies.spellings import resource

PRIVILEGED = {
    "containers": [{"name": "head", "image": "rayproject/ray:2.40.0", "securityContext": {"privileged": True}}]
}


@pytest.mark.parametrize(
    ("token", "spec", "where"),
    [
        ("kubernetes:ray.io/v1:RayCluster", {"headGroupSpec": {"template": {"spec": PRIVILEGED}}}, "headGroupSpec"),
        (
            "kubernetes:kubeflow.org/v1:PyTorchJob",
            {"pytorchReplicaSpecs": {"Worker": {"replicas": 4, "template": {"spec": PRIVILEGED}}}},
            "pytorchReplicaSpecs.Worker",
        ),
    ],
    ids=["ray-cluster", "pytorch-job"],
)
def test_a_privileged_pod_in_a_kind_without_a_table_is_found_by_its_shape(token, spec, where):
    found = list(check(resource(token, {"metadata": {"namespace": "video-train"}, "spec": spec}), RULE.defaults()))
    assert len(found) == 1
    assert f"(spec.{where}.template.spec): Privileged Containers: container head is privileged" in found[0]


def test_a_deployment_is_read_by_its_table_once():
    deployment = resource("kubernetes:apps/v1:Deployment", {"spec": {"template": {"spec": PRIVILEGED}}})
    (finding,) = check(deployment, RULE.defaults())
    assert finding.startswith("subject: Privileged Containers")


def test_the_kinds_not_searched_are_known_built_in_kinds_that_carry_no_pod():
    """Skipped for speed only where the API schema holds no pod; a kind missing here is still searched."""
    from components.plan.resources import POD_CARRIERS
    from policies.known_types import KNOWN_TYPES
    from policies.readers.pods import POD_FREE_KINDS

    assert POD_FREE_KINDS <= set(KNOWN_TYPES)
    assert not POD_FREE_KINDS & set(POD_CARRIERS)
    assert "kubernetes:ray.io/v1:RayCluster" not in POD_FREE_KINDS
