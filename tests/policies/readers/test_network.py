"""The network reader's judgements against a declared intent: ranges inside the allowed networks, and an
ingress rule within the platform's declared rules whatever its spelling."""

import pytest

from components.serving.manifests import triton_ingress
from policies.readers.network import NAMESPACE_NAME_LABEL, beyond_ingress, outside_ranges

EXPECTED = triton_ingress(["video-api"], ("monitoring", {"app": "prometheus"}))


def test_ranges_outside_the_allowed_networks_are_named():
    allowed = ["10.60.0.0/16", "10.100.0.0/24"]
    assert outside_ranges(["10.60.4.0/24", "10.100.0.0/24"], allowed) == []
    assert outside_ranges(["10.0.0.0/8", "10.60.0.0/15", "fd00::/8", "not-a-range"], allowed) == [
        "10.0.0.0/8",
        "10.60.0.0/15",
        "fd00::/8",
        "not-a-range",
    ]


@pytest.mark.parametrize(
    "rule",
    [
        {
            "from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "video-api"}}}],
            "ports": [{"port": 8000}],
        },
        {
            "from": [
                {
                    "namespaceSelector": {
                        "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": ["video-api"]}],
                        "matchLabels": {"tier": "narrower"},
                    },
                    "podSelector": {"matchLabels": {"app": "caller"}},
                }
            ],
            "ports": [{"port": "8001", "protocol": "tcp"}, {"port": 8000, "endPort": 8000}],
        },
    ],
    ids=["by-label", "by-in-narrowed"],
)
def test_a_respelled_or_narrower_rule_is_within(rule):
    assert beyond_ingress(rule, EXPECTED, "triton-video") is None


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        (
            {
                "from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "video-api"}}}],
                "ports": [{"port": 8002}],
            },
            "TCP/8002",
        ),
        ({"from": [{"podSelector": {}}], "ports": [{"port": 8000}]}, "triton-video on TCP/8000"),
        (
            {
                "from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "video-api"}}}],
                "ports": [{"port": "http"}],
            },
            "named port",
        ),
        (
            {
                "from": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "video-api"}}}],
                "ports": [{"port": 1, "endPort": 65535}],
            },
            "wide range",
        ),
        ({"from": [], "ports": [{"port": 8000}]}, "no from"),
    ],
    ids=["client-on-metrics-port", "own-namespace", "named-port", "every-port-range", "empty-from"],
)
def test_what_the_intent_does_not_hold_is_beyond(rule, said):
    beyond = beyond_ingress(rule, EXPECTED, "triton-video")
    assert beyond is not None and said in beyond
