"""A NetworkPolicy never admits everything: a rule with no peers and no ports, an empty peer, or a peer
of every namespace with no port limit allows all traffic of that direction, and silently undoes the
namespace's default deny."""

from components.plan.resources import K8S_NETWORK_POLICY as NETWORK_POLICY, PlanResource
from policies.framework import Rule

OPEN_BLOCKS = {"0.0.0.0/0", "::/0"}


def _everyone(peer: dict) -> bool:
    if not peer:
        return True
    if set(peer) == {"namespaceSelector"} and not peer["namespaceSelector"]:
        return True  # every pod of every namespace
    block = peer.get("ipBlock") or {}
    return block.get("cidr") in OPEN_BLOCKS and not block.get("except")


def _open_rules(resource: PlanResource, direction: str, peers_key: str):
    for index, rule in enumerate((resource.props.get("spec") or {}).get(direction) or []):
        peers = rule.get(peers_key)
        if rule.get("ports"):
            continue  # limited to its ports
        if not peers or any(_everyone(peer) for peer in peers):
            yield f"{resource.name}: {direction} rule {index} admits all traffic (no peer or port limit)"


def check(resource, config):
    if resource.type != NETWORK_POLICY:
        return
    yield from _open_rules(resource, "ingress", "from")
    yield from _open_rules(resource, "egress", "to")


RULE = Rule(
    name="kubernetes-networkpolicy-disallow-allow-all",
    description="NetworkPolicy rules name their peers or their ports; none admits all traffic.",
    severity="high",
    remediation="Name the namespaces or pods a rule admits (namespaceSelector/podSelector with labels) and "
                "the ports.",
    topics=("security", "network", "kubernetes"),
    check_resource=check,
    resource_types=frozenset({NETWORK_POLICY}),
    standards=("CIS EKS 4.3.2", "CIS EKS 5.4.4"),
)
