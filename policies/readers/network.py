"""NetworkPolicies by set reasoning: which pods, namespaces and addresses a rule's peers admit, on which
ports, whatever the spelling (`{}`, `{namespaceSelector: {}, podSelector: {}}`, selectors whose every
expression is NotIn or DoesNotExist, `0.0.0.0/0` less a token `except`, `0.0.0.0/1` plus `128.0.0.0/1`,
ports of a protocol with no number, a range to 65535), and whether a namespace keeps a default deny."""

from __future__ import annotations

import ipaddress
from typing import Any

# Address space a pod should never reach unbounded: everything but private, shared and link-local ranges.
NOT_PUBLIC = [
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "fc00::/7",
        "fe80::/10",
        "::1/128",
    )
]
# A rule whose peers reach this many public addresses (a /8 of IPv4, a /16 of IPv6) reaches the internet.
PUBLIC_LIMIT = {4: 2**24, 6: 2**112}
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # every namespace has it (the API server sets it)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def selects_all(selector: Any, namespaces: bool) -> bool:
    """Whether a label selector selects every object, or all but those it names (NotIn, DoesNotExist; for
    namespaces also Exists on the name label every namespace carries). An absent selector is not `{}`."""
    if not isinstance(selector, dict):
        return False
    if _dict(selector.get("matchLabels")):
        return False
    for expression in selector.get("matchExpressions") or []:
        operator = _dict(expression).get("operator")
        if operator in ("NotIn", "DoesNotExist"):
            continue
        if namespaces and operator == "Exists" and _dict(expression).get("key") == NAMESPACE_NAME_LABEL:
            continue
        return False
    return True


def selects_every_pod(selector: Any) -> bool:
    """Whether a policy's podSelector covers every pod of its namespace, with no exceptions (a default deny
    that leaves out pods with some label leaves them open)."""
    return (
        isinstance(selector, dict) and not _dict(selector.get("matchLabels")) and not selector.get("matchExpressions")
    )


def _upper_bound(blocks: list[dict]) -> dict[int, int] | None:
    """At most how many addresses the blocks hold, from their prefix lengths alone (None: a block to parse)."""
    bound = {4: 0, 6: 0}
    for block in blocks:
        address, _, length = str(block.get("cidr")).partition("/")
        if not length.isdigit():
            return None
        version = 6 if ":" in address else 4
        bound[version] += 2 ** ((32 if version == 4 else 128) - int(length))
    return bound


def public_addresses(blocks: list[dict]) -> dict[int, int]:
    """How many public addresses the ipBlocks admit, per IP version (each block's cidr less its excepts)."""
    admitted: dict[int, list] = {4: [], 6: []}
    for block in blocks:
        try:
            network = ipaddress.ip_network(str(block.get("cidr")), strict=False)
            excepts = [ipaddress.ip_network(str(e), strict=False) for e in block.get("except") or []]
        except ValueError:
            continue  # the API server refuses it
        parts = [network]
        for removed in [*excepts, *NOT_PUBLIC]:
            parts = [piece for part in parts for piece in _without(part, removed)]
        admitted[network.version] += parts
    return {
        version: sum(n.num_addresses for n in ipaddress.collapse_addresses(nets)) if nets else 0
        for version, nets in admitted.items()
    }


def _without(network, removed):
    if network.version != removed.version or not network.overlaps(removed):
        return [network]
    if removed.supernet_of(network):
        return []
    return list(network.address_exclude(removed))


def admits_everyone(peers: Any) -> str | None:
    """What a rule's peers admit when it is everyone: no peers, an empty peer, every pod of every namespace,
    or the internet (its blocks together)."""
    if not peers:
        return "every peer (no from/to)"
    blocks = []
    for peer in peers if isinstance(peers, list) else []:
        peer = _dict(peer)
        if not peer:
            return "every peer (an empty peer)"
        if (
            "namespaceSelector" in peer
            and selects_all(peer["namespaceSelector"], namespaces=True)
            and ("podSelector" not in peer or selects_all(peer["podSelector"], namespaces=False))
        ):
            return "every pod of every namespace"
        if "ipBlock" in peer:
            blocks.append(_dict(peer["ipBlock"]))
    if reaches_internet(blocks):
        return "the internet (its ipBlocks together)"
    return None


def outside_ranges(ranges: list[str], allowed: list[str]) -> list[str]:
    """The ranges not inside any allowed range (an unparsable one counts as outside)."""
    inside = []
    for text in allowed:
        try:
            inside.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            continue
    outside = []
    for text in ranges:
        try:
            network = ipaddress.ip_network(text, strict=False)
        except ValueError:
            outside.append(text)
            continue
        if not any(network.version == a.version and network.subnet_of(a) for a in inside):  # type: ignore[arg-type]
            outside.append(text)
    return outside


def reaches_internet(blocks: list[dict]) -> bool:
    """Whether the blocks together admit a /8 of public IPv4 (a /16 of IPv6); blocks too small to, by their
    prefix lengths alone, are not counted address by address."""
    bound = _upper_bound(blocks)
    if bound is not None and all(bound[version] < PUBLIC_LIMIT[version] for version in bound):
        return False
    public = public_addresses(blocks)
    return any(public[version] >= PUBLIC_LIMIT[version] for version in public)


# A rule whose ports leave out fewer than this many of a protocol's ports admits every port that matters: a
# container listens where it likes, so 2-65535 or 1024-65535 is "every port" spelled another way.
PORTS_LEFT_OUT_LIMIT = 1024


def all_ports(ports: Any) -> bool:
    """Whether a rule's ports admit (nearly) every port of a protocol: no ports, a port with no number, or
    ranges that together leave out fewer than PORTS_LEFT_OUT_LIMIT of its 65535 ports."""
    if not ports or not isinstance(ports, list):  # not a list: no spelling the API accepts, judged as every port
        return True
    covered: dict[str, list[tuple[int, int]]] = {}
    for port in ports:
        port = _dict(port)
        number = port.get("port")
        if number is None:
            return True
        try:
            first = max(1, int(float(number)))
            last = max(first, min(65535, int(float(port.get("endPort") or first))))
        except (TypeError, ValueError):
            continue  # a named port: one port
        covered.setdefault(str(port.get("protocol") or "TCP").upper(), []).append((first, last))
    return any(65535 - _union_size(ranges) < PORTS_LEFT_OUT_LIMIT for ranges in covered.values())


def _union_size(ranges: list[tuple[int, int]]) -> int:
    size, reached = 0, 0
    for first, last in sorted(ranges):
        if last > reached:
            size += last - max(first, reached + 1) + 1
            reached = last
    return size


def denies(policy_spec: dict, direction: str) -> bool:
    """Whether a policy is a default deny for `direction` ("Ingress"/"Egress") over every pod: it selects
    all pods, covers the direction, and allows nothing in it."""
    if not selects_every_pod(policy_spec.get("podSelector")):
        return False
    types = policy_spec.get("policyTypes")
    if types is None:  # the API server's default: Ingress, and Egress when egress rules are given
        types = ["Ingress", *(["Egress"] if policy_spec.get("egress") else [])]
    return direction in types and not policy_spec.get(direction.lower())


# --- Ingress against what the platform declares (a positive model: what cannot be judged is beyond) ---

MAX_RANGE_PORTS = 64  # a port range is judged port by port up to this size; a wider one is beyond


def _ports(ports: Any) -> frozenset[tuple[str, int]] | None:
    """A rule's (protocol, number) ports; None when they cannot be listed (every port, a named port, a
    wide range)."""
    if not ports or not isinstance(ports, list):
        return None
    found: set[tuple[str, int]] = set()
    for port in ports:
        port = _dict(port)
        try:
            first = int(float(port["port"]))
            last = int(float(port.get("endPort") or first))
        except (KeyError, TypeError, ValueError):
            return None
        if last - first >= MAX_RANGE_PORTS:
            return None
        protocol = str(port.get("protocol") or "TCP").upper()
        found |= {(protocol, number) for number in range(first, max(first, last) + 1)}
    return frozenset(found)


def _named_namespaces(selector: Any) -> frozenset[str] | None:
    """The namespaces a selector allows by their name label (matchLabels or In; other terms only narrow);
    None when it names none (it selects by labels a namespace's owner may set)."""
    selector = _dict(selector)
    named: list[frozenset[str]] = []
    if NAMESPACE_NAME_LABEL in _dict(selector.get("matchLabels")):
        named.append(frozenset({str(selector["matchLabels"][NAMESPACE_NAME_LABEL])}))
    for expression in selector.get("matchExpressions") or []:
        expression = _dict(expression)
        if expression.get("key") == NAMESPACE_NAME_LABEL and expression.get("operator") == "In":
            named.append(frozenset(str(v) for v in expression.get("values") or []))
    return frozenset.intersection(*named) if named else None


def _peer(peer: Any, namespace: str) -> tuple[frozenset[str], dict] | None:
    """A peer as (namespaces, the pod labels it requires); None when it cannot be judged (an address
    block, or namespaces chosen by other labels)."""
    peer = _dict(peer)
    if not peer or "ipBlock" in peer:
        return None
    namespaces = (
        frozenset({namespace}) if "namespaceSelector" not in peer else _named_namespaces(peer["namespaceSelector"])
    )
    if namespaces is None:
        return None
    return namespaces, _dict(_dict(peer.get("podSelector")).get("matchLabels"))


def _narrower(peer: tuple[frozenset[str], dict], allowed: tuple[frozenset[str], dict]) -> bool:
    """Whether every pod the peer admits, the allowed peer admits too (more labels only narrow)."""
    return peer[0] <= allowed[0] and allowed[1].items() <= peer[1].items()


def beyond_ingress(rule: Any, expected: list[dict], namespace: str) -> str | None:
    """What an ingress rule admits beyond the expected rules of its namespace (None: nothing). A rule is
    within when one expected rule covers all its ports and, for each of its peers, a peer no narrower."""
    rule = _dict(rule)
    peers = rule.get("from")
    if not peers or not isinstance(peers, list):
        return "every peer (no from)"
    ports = _ports(rule.get("ports"))
    if ports is None:
        return "ports it does not list by number (every port, a named port or a wide range)"
    read = [_peer(peer, namespace) for peer in peers]
    if any(peer is None for peer in read):
        return "a peer it cannot judge (an address block, or namespaces chosen by labels other than their name)"
    for allowed in expected:
        allowed_ports = _ports(allowed.get("ports")) or frozenset()
        allowed_peers = [p for p in (_peer(q, namespace) for q in allowed.get("from") or []) if p is not None]
        if ports <= allowed_ports and all(any(_narrower(p, q) for q in allowed_peers) for p in read if p):
            return None
    shown = ", ".join(sorted(f"{protocol}/{number}" for protocol, number in ports))
    callers = sorted({name for peer in read if peer for name in peer[0]})
    return f"{', '.join(callers)} on {shown}, which the serving set's config does not name for those ports"
