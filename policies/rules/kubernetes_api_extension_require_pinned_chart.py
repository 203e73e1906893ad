"""No new API and no validating webhook but those the platform's pinned charts bring. A CustomResourceDefinition
adds kinds whose objects no reader here knows (a kind may carry a pod, an identity or a door: the gate's list
of known kinds names Kueue's); a ValidatingWebhookConfiguration is sent every object it matches, Secrets
included, and may refuse the platform's own changes. A chart the platform pins brings its own (rendered by the
gate from the pinned chart, the release its parent); one the program declares itself, or under an unpinned or
unrendered release, fails in every environment. (Mutating webhooks: kubernetes-admission-disallow-undeclared-
mutation.)"""

from components.plan.resources import K8S_CRD
from components.plan.resources import K8S_VALIDATING_WEBHOOKS as VALIDATING_WEBHOOKS
from policies.framework import Rule

KINDS = frozenset({K8S_CRD, VALIDATING_WEBHOOKS})


def check(resource, config):
    if resource.type in KINDS and config["release_charts"].get(resource.parent) is None:
        kind = resource.type.rsplit(":", 1)[-1]
        yield f"{resource.name}: a {kind} the platform's pinned charts do not bring"


RULE = Rule(
    name="kubernetes-api-extension-require-pinned-chart",
    description="No CustomResourceDefinition or validating webhook but those the platform's pinned charts bring.",
    severity="critical",
    remediation="Add the controller as a pinned chart of the platform, reviewed with its values, with a rule "
    "that judges its kinds and their entries in policies/known_types.py.",
    topics=("security", "kubernetes"),
    # A rendered object's release (its parent) -> the pinned chart it came from (seedance check sets it).
    config={"release_charts": {"type": "object", "default": {}}},
    check_resource=check,
    resource_types=KINDS,
    standards=("Kubernetes: admission webhooks good practices", "EKS BPG: Multi-tenancy - policy as code"),
)
