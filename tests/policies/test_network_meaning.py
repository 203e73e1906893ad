"""NetworkPolicies judged by set reasoning: every generated spelling of a rule that admits everyone on every
port fails, every spelling of a narrowed rule passes; every spelling of a missing or partial default deny
fails (kubernetes-networkpolicy-disallow-allow-all, kubernetes-namespace-require-default-deny)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan.resources import K8S_NAMESPACE, K8S_NETWORK_POLICY
from policies.framework import run_rules
from policies.readers.network import public_addresses
from policies.rules.kubernetes_namespace_require_default_deny import RULE as DEFAULT_DENY
from policies.rules.kubernetes_networkpolicy_disallow_allow_all import RULE as ALLOW_ALL
from tests.policies.spellings import resource

EVERY_NAMESPACE = [
    {},
    {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["secret"]}]},
    {"matchExpressions": [{"key": "quarantined", "operator": "DoesNotExist"}]},
]
EVERY_POD = [{}, {"matchExpressions": [{"key": "quarantined", "operator": "DoesNotExist"}]}]
INTERNET = [
    [{"ipBlock": {"cidr": "0.0.0.0/0"}}],
    [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.169.254/32"]}}],
    [{"ipBlock": {"cidr": "0.0.0.0/1"}}, {"ipBlock": {"cidr": "128.0.0.0/1"}}],
    [{"ipBlock": {"cidr": "::/0"}}],
    [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12"]}}],
    [{"ipBlock": {"cidr": "64.0.0.0/2"}}],
]
EVERY_PORT: list[list[dict[str, Any]] | None] = [
    None,
    [],
    [{"protocol": "TCP"}],
    [{}],
    [{"port": 1, "endPort": 65535}],
    [{"port": 443}, {"protocol": "UDP"}],
    [{"port": "metrics"}, {"port": 0, "endPort": 65535}],
    [{"port": 2, "endPort": 65535}],
    [{"port": 1024, "endPort": 65535}],
    [{"port": 1, "endPort": 30000}, {"port": 29000, "endPort": 65535}],
]


@st.composite
def everyone(draw) -> list | None:
    return draw(
        st.one_of(
            st.sampled_from([None, [], [{}]]),
            st.sampled_from(EVERY_NAMESPACE).map(lambda ns: [{"namespaceSelector": ns}]),
            st.tuples(st.sampled_from(EVERY_NAMESPACE), st.sampled_from(EVERY_POD)).map(
                lambda pair: [{"namespaceSelector": pair[0], "podSelector": pair[1]}]
            ),
            st.sampled_from(INTERNET),
        )
    )


def policy(direction: str, peers, ports, name="subject"):
    rule = {}
    if peers is not None:
        rule["from" if direction == "ingress" else "to"] = peers
    if ports is not None:
        rule["ports"] = ports
    return resource(
        K8S_NETWORK_POLICY,
        {"metadata": {"name": name, "namespace": "team"}, "spec": {"podSelector": {}, direction: [rule]}},
        name=name,
    )


def allow_all(resources):
    return run_rules([ALLOW_ALL], resources, {ALLOW_ALL.name: "mandatory"})


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["ingress", "egress"]), everyone(), st.sampled_from(EVERY_PORT))
def test_every_spelling_of_everyone_on_every_port_fails(direction, peers, ports):
    assert allow_all([policy(direction, peers, ports)]), (peers, ports)


NAMED_PEERS = [
    [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "video-api"}}}],
    [
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["video-api"]}]
            }
        }
    ],
    [{"podSelector": {}}],
    [{"podSelector": {"matchLabels": {"app": "api"}}}],
    [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"app": "prometheus"}}}],
    [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
    [{"ipBlock": {"cidr": "172.20.0.1/32"}}],
    [{"ipBlock": {"cidr": "52.216.0.0/15"}}],
    [{"ipBlock": {"cidr": "52.0.0.0/8", "except": ["52.0.0.0/9"]}}],
]  # half a /8: under the limit


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["ingress", "egress"]),
    st.one_of(
        st.tuples(st.sampled_from(NAMED_PEERS), st.sampled_from(EVERY_PORT)),
        st.tuples(
            everyone(),
            st.sampled_from(
                [
                    [{"port": 443}],
                    [{"port": 53, "protocol": "UDP"}, {"port": 53}],
                    [{"port": 8000, "endPort": 8002}],
                    [{"port": "metrics"}],
                    [{"port": 1025, "endPort": 65535}],
                ]
            ),
        ),
    ),
)
def test_every_spelling_of_named_peers_or_named_ports_passes(direction, case):
    peers, ports = case
    assert allow_all([policy(direction, peers, ports)]) == []


def test_each_way_of_admitting_everyone_is_named():
    """The finding says how: the API server refuses an empty peer, but a plan that holds one is read as
    admitting everyone, as its selectors' absence would."""
    from policies.readers.network import admits_everyone

    assert admits_everyone(None) == admits_everyone([]) == "every peer (no from/to)"
    assert (
        admits_everyone([{}])
        == admits_everyone([{"podSelector": {"matchLabels": {"a": "b"}}}, {}])
        == "every peer (an empty peer)"
    )
    assert admits_everyone([{"namespaceSelector": {}}]) == "every pod of every namespace"
    assert admits_everyone([{"ipBlock": {"cidr": "0.0.0.0/0"}}]) == "the internet (its ipBlocks together)"


def test_a_named_port_does_not_hide_a_full_range_after_it_and_every_port_is_all_but_the_privileged():
    from policies.readers.network import all_ports

    assert all_ports([{"port": "metrics"}, {"port": 0, "endPort": 65535}])
    assert all_ports([{"port": "metrics"}, {"port": 1024, "endPort": 65535}])  # leaves out 1023 ports
    assert not all_ports([{"port": "metrics"}, {"port": 1025, "endPort": 65535}])  # leaves out 1024
    assert not all_ports([{"port": 1, "endPort": 40000, "protocol": "UDP"}, {"port": 40001, "endPort": 65535}])
    assert not all_ports([{"port": 1, "endPort": 30000}, {"port": 31025, "endPort": 65535}])  # a gap of 1024


def test_ports_in_a_shape_the_api_refuses_are_judged_as_every_port():
    """A gate reads a spelling it cannot place as the widest one (fail closed), never as no port at all."""
    from policies.readers.network import all_ports

    assert all_ports({"port": 443}) and all_ports("443") and not all_ports([{"port": 443}])


def test_a_whole_slash_8_of_public_ipv4_or_slash_16_of_ipv6_is_the_internet_and_less_is_not():
    from policies.readers.network import reaches_internet

    assert reaches_internet([{"cidr": "52.0.0.0/8"}]) and reaches_internet([{"cidr": "2600::/16"}])
    assert not reaches_internet([{"cidr": "52.0.0.0/8", "except": ["52.0.0.0/32"]}])
    assert not reaches_internet([{"cidr": "2600::/16", "except": ["2600::/128"]}])


def test_a_block_the_api_server_refuses_hides_neither_the_internet_beside_it_nor_counts_as_it():
    from policies.readers.network import reaches_internet

    assert reaches_internet([{"cidr": "not-a-cidr"}, {"cidr": "0.0.0.0/0"}])
    assert not reaches_internet([{"cidr": "0.0.0.0/x"}]) and not reaches_internet([{}])


def test_an_except_with_host_bits_is_its_network_as_the_api_server_reads_it():
    from policies.readers.network import reaches_internet

    assert reaches_internet([{"cidr": "0.0.0.0/0", "except": ["10.0.0.1/8"]}])


def test_public_addresses_add_up_across_blocks_and_excepts():
    assert (
        public_addresses([{"cidr": "0.0.0.0/1"}, {"cidr": "128.0.0.0/1"}])[4]
        == public_addresses([{"cidr": "0.0.0.0/0"}])[4]
    )
    assert public_addresses([{"cidr": "10.0.0.0/8"}]) == {4: 0, 6: 0}


def namespace(name="team"):
    return resource(K8S_NAMESPACE, {"metadata": {"name": name}}, name=name)


def deny(spec, name="deny"):
    return resource(K8S_NETWORK_POLICY, {"metadata": {"name": name, "namespace": "team"}, "spec": spec}, name=name)


@st.composite
def default_deny(draw) -> list:
    """Every way to deny both directions over all pods: one policy, or one per direction, with
    policyTypes in any order (and Ingress implied when policyTypes is absent)."""
    if draw(st.booleans()):
        return [deny({"podSelector": {}, "policyTypes": draw(st.permutations(["Ingress", "Egress"]))})]
    ingress = draw(
        st.sampled_from(
            [{"podSelector": {}}, {"podSelector": {}, "policyTypes": ["Ingress"]}, {"podSelector": {}, "ingress": []}]
        )
    )
    return [deny(ingress, "in"), deny({"podSelector": {}, "policyTypes": ["Egress"]}, "out")]


def default_denies(resources):
    return run_rules([DEFAULT_DENY], resources, {DEFAULT_DENY.name: "mandatory"})


@settings(max_examples=50, deadline=None)
@given(default_deny())
def test_every_spelling_of_a_default_deny_passes(policies):
    assert default_denies([namespace(), *policies]) == []


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(
        [
            [],
            [deny({"podSelector": {}, "policyTypes": ["Ingress"]})],
            [deny({"podSelector": {}})],
            [deny({"podSelector": {"matchLabels": {"app": "none"}}, "policyTypes": ["Ingress", "Egress"]})],
            [
                deny(
                    {
                        "podSelector": {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]},
                        "policyTypes": ["Ingress", "Egress"],
                    }
                )
            ],
            [deny({"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [{}]})],
        ]
    )
)
def test_every_spelling_of_a_missing_or_partial_default_deny_fails(policies):
    assert default_denies([namespace(), *policies])


def test_the_prefix_bound_counts_each_block_by_its_length():
    """The quick bound that spares parsing small blocks: a /8 holds 2^24 IPv4 addresses, a /32 2^96 IPv6."""
    from policies.readers.network import _upper_bound

    assert _upper_bound([{"cidr": "10.0.0.0/8"}, {"cidr": "2001:db8::/32"}, {"cidr": "192.0.2.0/24"}]) == {
        4: 2**24 + 2**8,
        6: 2**96,
    }
    assert _upper_bound([{"cidr": "10.0.0.0/8"}, {"cidr": "10.0.0.1"}]) is None  # no length: parsed instead
