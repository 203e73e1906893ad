"""A positive model of the plan: every resource is of a type the gate can judge (policies/known_types.py),
objects rendered from the platform's charts included. A type off the list is refused whatever it holds,
a kind that bundles objects the plan does not show (a ConfigGroup, a Chart v4) is refused for that, and a
Kubernetes API version the stack's Kubernetes version no longer serves is named as such. Mandatory in prod;
advisory elsewhere, where it says what prod would refuse."""

from policies.framework import Rule
from policies.known_types import EXPANDED_AT_UP, KNOWN_TYPES, kubernetes_api, removed_in


def check(resource, config):
    token = resource.type
    version = config.get("kubernetes_version")
    removal = removed_in(token, version) if version else None
    if removal is not None:
        api_version, kind = kubernetes_api(token) or ("", "")
        yield (
            f"{resource.name}: {api_version} {kind} is not served by Kubernetes {version} (removed in "
            f"{removal[0]}): use {removal[1]}"
        )
    elif token in EXPANDED_AT_UP:
        yield (
            f"{resource.name}: a {token} holds objects the plan does not (the provider expands them at `pulumi "
            "up`), so the gate cannot judge them: declare each object as a resource of its own"
        )
    elif token not in KNOWN_TYPES:
        yield (
            f"{resource.name}: {token} is not a type the gate can judge; deploying it takes a rule that judges "
            "it, with pass and fail fixtures, and its entry in policies/known_types.py"
        )


RULE = Rule(
    name="pulumi-resource-require-known-type",
    description="Every resource is of a type the gate can judge, in an API version the cluster serves.",
    severity="critical",
    remediation=(
        "Declare the objects as resources of known types; for a new type, add the rule that judges it "
        "(with fixtures) and its entry in policies/known_types.py."
    ),
    topics=("security", "cost"),
    config={"kubernetes_version": {"type": ["string", "null"], "default": None}},
    check_resource=check,
    standards=("CIS Controls v8 2.5 (allowlist authorized software)", "Kubernetes Deprecated API Migration Guide"),
)
