"""A NetworkPolicy never admits everything: a rule whose peers are everyone (no peers, an empty peer, every
pod of every namespace however the selectors say it, or the internet however the blocks add up) on every
port of a protocol silently undoes the namespace's default deny."""

from components.plan.resources import K8S_NETWORK_POLICY as NETWORK_POLICY
from policies.framework import Rule
from policies.readers.network import admits_everyone, all_ports


def check(resource, config):
    if resource.type != NETWORK_POLICY:
        return
    spec = resource.props.get("spec") or {}
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for index, rule in enumerate(spec.get(direction) or []):
            rule = rule if isinstance(rule, dict) else {}
            everyone = admits_everyone(rule.get(peers_key))
            if everyone and all_ports(rule.get("ports")):
                yield f"{resource.name}: {direction} rule {index} admits {everyone} on every port"


RULE = Rule(
    name="kubernetes-networkpolicy-disallow-allow-all",
    description="NetworkPolicy rules name their peers or their ports; none admits everyone on every port.",
    severity="high",
    remediation="Name the namespaces or pods a rule admits (namespaceSelector/podSelector with labels) and the ports.",
    topics=("security", "network", "kubernetes"),
    check_resource=check,
    resource_types=frozenset({NETWORK_POLICY}),
    standards=("CIS EKS 4.3.2", "CIS EKS 5.4.4"),
)
