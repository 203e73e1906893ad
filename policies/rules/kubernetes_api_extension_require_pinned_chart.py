"""No new API and no validating webhook but those the platform's pinned charts bring. A CustomResourceDefinition
adds kinds whose objects no reader here knows (a kind may carry a pod, an identity or a door: the gate's list
of known kinds names Kueue's); a ValidatingWebhookConfiguration is sent every object it matches, Secrets
included, and may refuse the platform's own changes. A chart the platform pins brings its own (rendered by the
gate from the pinned chart, the release its parent); one the program declares itself, or under an unpinned or
unrendered release, fails in every environment; so does one another pinned chart renders (Grafana's
`extraObjects` renders anything): only the chart that brings an extension may (policies/readers/rbac.py:
CHART_EXTENSIONS), a CRD only of its own API groups. Kueue's queues and flavors are the program's, from the
stack config: none is rendered by a chart. (Mutating webhooks: kubernetes-admission-disallow-undeclared-
mutation.)"""

from components.plan.resources import K8S_CRD, KUEUE_CLUSTER_QUEUE, KUEUE_FLAVOR, KUEUE_LOCAL_QUEUE
from components.plan.resources import K8S_VALIDATING_WEBHOOKS as VALIDATING_WEBHOOKS
from policies.framework import Rule
from policies.readers.rbac import chart_extends

QUEUE_KINDS = frozenset({KUEUE_FLAVOR, KUEUE_CLUSTER_QUEUE, KUEUE_LOCAL_QUEUE})
KINDS = frozenset({K8S_CRD, VALIDATING_WEBHOOKS, *QUEUE_KINDS})


def check(resource, config):
    if resource.type not in KINDS:
        return
    chart = config["release_charts"].get(resource.parent)
    if resource.type in QUEUE_KINDS:
        if chart is not None:  # the queues are the program's, from the stack config
            yield f"{resource.name}: a Kueue {resource.type.rsplit(':', 1)[-1]} rendered by chart {chart}"
        return
    kind = resource.type.rsplit(":", 1)[-1]
    group = ((resource.props.get("spec") or {}).get("group")) if resource.type == K8S_CRD else None
    if not chart_extends(chart, kind, None if resource.type != K8S_CRD else str(group)):
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
