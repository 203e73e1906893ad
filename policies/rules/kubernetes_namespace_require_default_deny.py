"""Every namespace the stack creates keeps a default deny in both directions over all its pods: one or
two policies that select every pod (an empty podSelector), cover Ingress and Egress, and allow nothing.
A default deny that selects some pods, or omits Egress, leaves the rest open. And the policies are enforced:
the plan's VPC CNI add-on keeps its network policy agent on (`enableNetworkPolicy`), without which no
NetworkPolicy in the cluster is enforced."""

from typing import Any

import yaml

from components.plan.resources import EKS_ADDON, K8S_NAMESPACE, K8S_NETWORK_POLICY, is_unknown
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.network import denies

DIRECTIONS = ("Ingress", "Egress")


def _enforces_policies(addon) -> bool:
    """Whether a vpc-cni add-on's configuration turns its network policy agent on (JSON or YAML, as EKS takes)."""
    values = addon.props.get("configurationValues")
    if is_unknown(values):
        return True  # judged when known
    try:
        settings = yaml.safe_load(values) if isinstance(values, str) else values
    except yaml.YAMLError:
        return False
    return isinstance(settings, dict) and str(settings.get("enableNetworkPolicy")).lower() == "true"


def check(resources, config):
    for addon in of_types(resources, EKS_ADDON):
        if addon.props.get("addonName") == "vpc-cni" and not _enforces_policies(addon):
            yield (
                addon.urn,
                f"{addon.name}: the VPC CNI's network policy agent is off (enableNetworkPolicy), so no "
                "NetworkPolicy in the cluster is enforced",
            )
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
