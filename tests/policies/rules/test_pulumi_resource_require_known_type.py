"""The positive model in the shipped configs: prod refuses a type the gate cannot judge, each of the
classes that hide from the readers (a custom resource carrying a pod, an identity grant of a type no rule
reads, a bundle of objects the plan does not hold), in two spellings each; dev only says so."""

import pytest

from policies.framework import load_enforcement, run_rules
from policies.rules.pulumi_resource_require_known_type import RULE
from tests.policies.spellings import resource

PRIVILEGED = {"containers": [{"name": "c", "image": "busybox:1.36", "securityContext": {"privileged": True}}]}
HIDDEN = [
    ("kubernetes:ray.io/v1:RayCluster", {"spec": {"headGroupSpec": {"template": {"spec": PRIVILEGED}}}}),
    (
        "kubernetes:kubeflow.org/v1:PyTorchJob",
        {"spec": {"pytorchReplicaSpecs": {"Master": {"template": {"spec": PRIVILEGED}}}}},
    ),
    ("aws:eks/podIdentityAssociation:PodIdentityAssociation", {"roleArn": "arn:aws:iam::123456789012:role/publisher"}),
    (
        "aws:iam/policyAttachment:PolicyAttachment",
        {"roles": ["node"], "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"},
    ),
    ("kubernetes:yaml/v2:ConfigGroup", {"yaml": "apiVersion: v1\nkind: Pod\n"}),
    ("kubernetes:helm.sh/v4:Chart", {"chart": "oci://example.com/charts/anything"}),
]


def _findings(env: str, token: str, props: dict, version: str = "1.35"):
    enforcement = load_enforcement(env)
    return run_rules([RULE], [resource(token, props)], enforcement, {RULE.name: {"kubernetes_version": version}})


@pytest.mark.parametrize(("token", "props"), HIDDEN, ids=[token.split(":")[-1] for token, _ in HIDDEN])
def test_prod_refuses_what_the_gate_cannot_judge(token, props):
    (finding,) = _findings("prod", token, props)
    assert finding.level == "mandatory"
    assert token in finding.message or "holds objects the plan does not" in finding.message


def test_dev_says_what_prod_would_refuse():
    (finding,) = _findings("dev", *HIDDEN[0])
    assert finding.level == "advisory"


def test_a_kind_the_clusters_version_no_longer_serves_is_named_as_such():
    (finding,) = _findings("prod", "kubernetes:autoscaling/v2beta2:HorizontalPodAutoscaler", {}, "1.35")
    assert "not served by Kubernetes 1.35 (removed in 1.26): use autoscaling/v2" in finding.message
    assert _findings("prod", "kubernetes:autoscaling/v2:HorizontalPodAutoscaler", {}) == []
