"""The platform's admission guards deny: every ValidatingAdmissionPolicy the plan declares fails closed
(failurePolicy Fail, the API's default) and is bound by a binding whose actions include Deny (a binding
set to Audit or Warn lets every request through); the guards the stack config requires are all there, each
guarding what the platform built it to guard and refusing what it built it to refuse: its matchConstraints,
matchConditions, variables, validations and paramKind as built, and no binding of it narrowed by
matchResources or given a paramRef (a selector nobody matches, a condition that never holds, a parameter
whose absence allows: a guard in name only).

Both sides are compared as the API server stores them: the engine judges a stack by its resources' outputs,
which for a policy already in the cluster are the object as the server defaulted it (matchPolicy,
selectors, each rule's scope: k8s.io/kubernetes pkg/apis/admissionregistration/v1/defaults.go)."""

from components.plan.resources import K8S_ADMISSION_BINDING as BINDING
from components.plan.resources import K8S_ADMISSION_POLICY as POLICY
from components.plan.unknowns import of_types
from policies.expectations import GUARD_KEYS
from policies.framework import Rule


def _match_as_served(match):
    """A MatchResources with the defaults the API server gives it; anything else as it is."""
    if not isinstance(match, dict):
        return match
    served = {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}, **match}
    for key in ("resourceRules", "excludeResourceRules"):
        if isinstance(served.get(key), list):
            served[key] = [{"scope": "*", **rule} if isinstance(rule, dict) else rule for rule in served[key]]
    return served


def _as_served(key, value):
    return _match_as_served(value) if key == "matchConstraints" else value


def check(resources, config):
    # Each declaration judged: two of one name are one object in the cluster, and either may be applied last.
    policies = [((r.props.get("metadata") or {}).get("name"), r) for r in of_types(resources, POLICY)]
    denying = set()
    scopes = config["required_specs"]
    for binding in of_types(resources, BINDING):
        spec = binding.props.get("spec") or {}
        actions = spec.get("validationActions") or []
        if spec.get("policyName") in scopes and spec.get("matchResources"):
            yield (
                binding.urn,
                (
                    f"{binding.name}: narrows the guard {spec.get('policyName')} by matchResources; "
                    "the guard's own matchConstraints say what it guards"
                ),
            )
        if spec.get("policyName") in scopes and spec.get("paramRef"):
            yield (
                binding.urn,
                (
                    f"{binding.name}: gives the guard {spec.get('policyName')} a parameter (paramRef), which it "
                    "was not built to read; a missing one may allow every request"
                ),
            )
        if "Deny" in actions:
            denying.add(spec.get("policyName"))
        else:
            yield (
                binding.urn,
                f"{binding.name}: binds {spec.get('policyName')} with {actions or 'no actions'}, not Deny",
            )
    for name, policy in policies:
        if (policy.props.get("spec") or {}).get("failurePolicy", "Fail") != "Fail":
            yield policy.urn, f"{policy.name}: fails open (failurePolicy {policy.props['spec']['failurePolicy']})"
        if name not in denying:
            yield policy.urn, f"{policy.name}: no binding denies what it refuses"
        for key in (k for k in GUARD_KEYS if k in scopes[name]) if name in scopes else ():
            declared = (policy.props.get("spec") or {}).get(key)
            if _as_served(key, declared) != _as_served(key, scopes[name][key]):
                yield (
                    policy.urn,
                    (
                        f"{policy.name}: its {key} are not the ones the platform builds it with, so it "
                        "does not guard what it should"
                    ),
                )
    declared = {name for name, _policy in policies}
    for name in config["required_policies"]:
        if name not in declared:
            yield None, f"the admission policy {name} the stack requires is not in the plan"


RULE = Rule(
    name="kubernetes-admission-binding-require-deny",
    description="Every ValidatingAdmissionPolicy fails closed and is bound with Deny; the stack's required guards "
    "are declared.",
    severity="critical",
    remediation="Bind each policy with validationActions [Deny] and keep failurePolicy Fail.",
    topics=("security", "kubernetes"),
    config={
        "required_policies": {"type": "array", "items": {"type": "string"}, "default": []},
        # name -> {matchConstraints, matchConditions, variables, validations} of each required guard
        # (policies/expectations.py)
        "required_specs": {"type": "object", "default": {}},
    },
    check_stack=check,
    standards=("Kubernetes: ValidatingAdmissionPolicy validationActions", "EKS BPG: Multi-tenancy - policy as code"),
)
