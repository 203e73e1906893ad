"""No mutating admission the platform did not pin: a MutatingWebhookConfiguration or MutatingAdmissionPolicy
(or its binding), at any API version, rewrites every object it matches after the author wrote it and before
any validating guard or Pod Security sees it (an image swapped, a privileged sidecar added). The program
declares none; a chart the platform pins may bring its own (rendered by the gate from the pinned chart, the
release its parent), if it is the chart that brings them (policies/readers/rbac.py: CHART_EXTENSIONS), not
one whose values render arbitrary objects. One the program declares itself, or under an unpinned or
unrendered release, fails in every environment."""

from policies.framework import Rule
from policies.readers.rbac import chart_extends

MUTATING_KINDS = ("MutatingWebhookConfiguration", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")
ADMISSION_PREFIX = "kubernetes:admissionregistration.k8s.io/"


def check(resource, config):
    if not resource.type.startswith(ADMISSION_PREFIX):
        return
    kind = resource.type.rsplit(":", 1)[-1]
    if kind in MUTATING_KINDS and not chart_extends(config["release_charts"].get(resource.parent), kind):
        yield f"{resource.name}: a {kind} the platform's pinned charts do not bring: it rewrites what it admits"


RULE = Rule(
    name="kubernetes-admission-disallow-undeclared-mutation",
    description="No mutating webhook or mutating admission policy but those the platform's pinned charts bring.",
    severity="critical",
    remediation="Validate instead of mutating (a ValidatingAdmissionPolicy), or add the controller as a pinned "
    "chart of the platform, reviewed with its values.",
    topics=("security", "kubernetes"),
    # A rendered object's release (its parent) -> the pinned chart it came from (seedance check sets it).
    config={"release_charts": {"type": "object", "default": {}}},
    check_resource=check,
    type_prefix=ADMISSION_PREFIX,
    standards=("Kubernetes: admission webhooks good practices", "EKS BPG: Multi-tenancy - policy as code"),
)
