"""Every namespace the stack creates keeps a default deny in both directions over all its pods: one or
two policies that select every pod (an empty podSelector), cover Ingress and Egress, and allow nothing.
A default deny that selects some pods, or omits Egress, leaves the rest open."""

from typing import Any

from components.plan.resources import K8S_NAMESPACE, K8S_NETWORK_POLICY
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.network import denies

DIRECTIONS = ("Ingress", "Egress")


def check(resources, config):
    denied: dict[Any, set[str]] = {}  # by namespace, as the plan writes it
    for resource in of_types(resources, K8S_NETWORK_POLICY):
        namespace = (resource.props.get("metadata") or {}).get("namespace") or "default"
        spec = resource.props.get("spec") or {}
        denied.setdefault(namespace, set()).update(d for d in DIRECTIONS if denies(spec, d))
    for resource in of_types(resources, K8S_NAMESPACE):
        name = (resource.props.get("metadata") or {}).get("name")
        missing = [d for d in DIRECTIONS if d not in denied.get(name, set())]
        if missing:
            yield (
                resource.urn,
                f"{resource.name}: namespace {name} has no default deny for {' or '.join(missing)} over all its pods",
            )


RULE = Rule(
    name="kubernetes-namespace-require-default-deny",
    description="Every namespace the stack creates has a default-deny NetworkPolicy for ingress and egress that "
    "selects all its pods.",
    severity="high",
    remediation="Keep the namespace's `default-deny` NetworkPolicy: podSelector {}, policyTypes [Ingress, Egress], "
    "no rules (components/common/manifests.py namespace_baseline).",
    topics=("security", "network", "kubernetes"),
    check_stack=check,
    standards=("CIS EKS 4.3.2", "EKS BPG: Network security - create a default deny policy"),
)
