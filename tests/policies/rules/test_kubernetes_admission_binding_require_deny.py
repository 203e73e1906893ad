"""The admission guards as the engine hands them to the pack: a stack is judged by its resources' outputs,
and a guard already in the cluster comes back as the API server stores it, with the defaults it fills in.
Those are the guard as built; a value the platform does not build is not."""

import copy

import pytest

from components.plan.resources import PlanResource
from policies.expectations import guard_expectations
from policies.framework import run_rules
from policies.rules.kubernetes_admission_binding_require_deny import RULE
from tests.stacks import stack_config

POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"


@pytest.fixture(scope="module")
def expected():
    return guard_expectations(stack_config("prod"))


def _declared(expected) -> list[PlanResource]:
    """Each guard the stack requires, declared as built and bound with Deny."""
    resources = []
    for name, spec in expected["required_specs"].items():
        body = {key: value for key, value in spec.items() if value is not None}
        policy = {"apiVersion": "admissionregistration.k8s.io/v1", "metadata": {"name": name}, "spec": body}
        binding = {"metadata": {"name": name}, "spec": {"policyName": name, "validationActions": ["Deny"]}}
        resources += [
            PlanResource(f"urn:{name}", POLICY, name, copy.deepcopy(policy)),
            PlanResource(f"urn:{name}-binding", BINDING, f"{name}-binding", binding),
        ]
    return resources


def _served(resource: PlanResource) -> PlanResource:
    """The object as kube-apiserver stores it (SetObjectDefaults_ValidatingAdmissionPolicy)."""
    props = copy.deepcopy(resource.props)
    match = props["spec"].get("matchConstraints")
    if match is not None:
        match.setdefault("matchPolicy", "Equivalent")
        match.setdefault("namespaceSelector", {})
        match.setdefault("objectSelector", {})
        for rule in match.get("resourceRules", []) + match.get("excludeResourceRules", []):
            rule.setdefault("scope", "*")
    props["spec"].setdefault("failurePolicy", "Fail")
    return PlanResource(resource.urn, resource.type, resource.name, props)


def _findings(resources, expected):
    return [v.message for v in run_rules([RULE], resources, {"all": "mandatory"}, {RULE.name: expected})]


def test_guards_as_built_pass_declared_and_as_the_server_stores_them(expected):
    declared = _declared(expected)
    assert _findings(declared, expected) == []
    served = [_served(r) if r.type == POLICY else r for r in declared]
    assert served != declared
    assert _findings(served, expected) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda match: match.update(matchPolicy="Exact"),
        lambda match: match.update(namespaceSelector={"matchLabels": {"nobody": "here"}}),
        lambda match: match["resourceRules"][0].update(scope="Cluster"),
    ],
    ids=["match-policy", "namespace-selector", "rule-scope"],
)
def test_a_value_the_platform_does_not_build_is_still_found_after_the_defaults(expected, change):
    resources = [_served(r) if r.type == POLICY else r for r in _declared(expected)]
    first = next(r for r in resources if r.type == POLICY)
    change(first.props["spec"]["matchConstraints"])
    (finding,) = _findings(resources, expected)
    assert f"{first.name}: its matchConstraints are not the ones the platform builds it with" in finding
