"""Triton's pods take calls from whom the config says, and nobody else: in a serving namespace, every
NetworkPolicy ingress rule must fall within what the platform declares for it (the client namespaces on the
inference ports, Prometheus on the metrics port: components/serving/manifests.py: triton_ingress), judged by
meaning, not spelling. Policies add up, so each rule of each policy is judged, split or not. What it cannot
judge it refuses: an address block, a namespace chosen by labels other than its name (anyone who may label
a namespace could join), a named port, every port, a peer list that is everyone."""

from components.plan.resources import K8S_NETWORK_POLICY as NETWORK_POLICY
from policies.framework import Rule
from policies.readers.network import beyond_ingress


def check(resource, config):
    if resource.type != NETWORK_POLICY:
        return
    namespace = str((resource.props.get("metadata") or {}).get("namespace") or "default")
    expected = config["serving_ingress"].get(namespace)
    if expected is None:
        return
    for index, rule in enumerate((resource.props.get("spec") or {}).get("ingress") or []):
        beyond = beyond_ingress(rule, expected, namespace)
        if beyond:
            yield f"{resource.name}: ingress rule {index} in serving namespace {namespace} admits {beyond}"


RULE = Rule(
    name="kubernetes-networkpolicy-restrict-serving-ingress",
    description="In a serving namespace, NetworkPolicy ingress admits only the configured client namespaces on "
    "Triton's inference ports and Prometheus on its metrics port, however the rules are spelled or split.",
    severity="high",
    remediation="Add the calling namespace to the serving set's client_namespaces in the stack config; the platform "
    "writes the policy.",
    topics=("security", "network", "kubernetes"),
    # Serving namespace -> the ingress rules the platform declares there (from the stack config).
    config={"serving_ingress": {"type": "object", "default": {}}},
    check_resource=check,
    resource_types=frozenset({NETWORK_POLICY}),
    standards=("CIS EKS 4.3.2", "EKS BPG: Network security - network policies"),
)
