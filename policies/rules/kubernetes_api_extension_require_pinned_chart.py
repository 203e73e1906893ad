"""No new API and no validating webhook but those the platform's pinned charts bring. A CustomResourceDefinition
adds kinds whose objects no reader here knows (a kind may carry a pod, an identity or a door: the gate's list
of known kinds names Kueue's); a ValidatingWebhookConfiguration is sent every object it matches, Secrets
included, and may refuse the platform's own changes. A chart the platform pins brings its own (rendered by the
gate from the pinned chart, the release its parent); one the program declares itself, or under an unpinned or
unrendered release, fails in every environment; so does one another pinned chart renders (Grafana's
`extraObjects` renders anything): only the chart that brings an extension may (policies/readers/rbac.py:
CHART_EXTENSIONS), a CRD only of its own API groups. One CRD is the program's own: the autoscaler's
ProvisioningRequest API, which no chart ships, passes only as vendored (components/cluster/provisioning.py),
field for field. Kueue's queues, flavors and checks are the program's, from the stack config: none is rendered
by a chart. (Mutating webhooks: kubernetes-admission-disallow-undeclared-mutation.)"""

from components.cluster.provisioning import provisioning_request_crd
from components.plan.resources import K8S_CRD, KUEUE_KINDS
from components.plan.resources import K8S_VALIDATING_WEBHOOKS as VALIDATING_WEBHOOKS
from policies.framework import Rule
from policies.readers.rbac import chart_extends

KINDS = frozenset({K8S_CRD, VALIDATING_WEBHOOKS, *KUEUE_KINDS})


def _vendored(resource) -> bool:
    """The program's own ProvisioningRequest CRD, exactly as vendored."""
    crd, metadata = provisioning_request_crd(), resource.props.get("metadata")
    named = isinstance(metadata, dict) and metadata.get("name") == crd["metadata"]["name"]
    return named and resource.props.get("spec") == crd["spec"]


def check(resource, config):
    if resource.type not in KINDS:
        return
    chart = config["release_charts"].get(resource.parent)
    if resource.type in KUEUE_KINDS:
        if chart is not None:  # the queues are the program's, from the stack config
            yield f"{resource.name}: a Kueue {resource.type.rsplit(':', 1)[-1]} rendered by chart {chart}"
        return
    kind = resource.type.rsplit(":", 1)[-1]
    if resource.type == K8S_CRD and chart is None and _vendored(resource):
        return
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
