"""Mutating admission over dev's plan, where the known-type rule only advises: a mutating webhook or policy the
program declares fails the gate at any API version; the same kind rendered from a pinned chart (its release
the parent) would be the platform's."""

from dataclasses import replace

import pytest

from components.plan.resources import HELM_RELEASE
from policies.rules.kubernetes_admission_disallow_undeclared_mutation import RULE as MUTATION
from seedance.check_command import check, plan_resources
from tests.conftest import _stack_plan
from tests.policies.spellings import resource

RULE = "kubernetes-admission-disallow-undeclared-mutation"


@pytest.mark.parametrize(
    "type_",
    [
        "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
        "kubernetes:admissionregistration.k8s.io/v1beta1:MutatingAdmissionPolicy",
        "kubernetes:admissionregistration.k8s.io/v1:MutatingAdmissionPolicyBinding",
    ],
)
def test_declared_mutation_fails_dev_and_a_pinned_charts_would_not(type_):
    dev = plan_resources(_stack_plan("dev"))
    declared = resource(type_, {"metadata": {"name": "rewrite"}}, "rewrite")
    violations, _ = check([*dev, declared], "dev", "us-west-2", kubernetes_version="1.36")
    assert [(v.level, v.urn) for v in violations if v.policy == RULE] == [("mandatory", declared.urn)]

    release = next(r for r in dev if r.type == HELM_RELEASE)
    charted = replace(resource(type_, {"metadata": {"name": "rewrite"}}, "rendered"), parent=release.urn)
    if type_.endswith(":MutatingWebhookConfiguration"):  # the kind Kueue's chart brings
        assert list(MUTATION.check_resource(charted, {"release_charts": {release.urn: "kueue"}})) == []
    # A pinned chart that brings no mutation (whose values may render anything, as Grafana's extraObjects) may not.
    assert list(MUTATION.check_resource(charted, {"release_charts": {release.urn: "grafana"}}))
    assert list(MUTATION.check_resource(charted, {"release_charts": {}}))
