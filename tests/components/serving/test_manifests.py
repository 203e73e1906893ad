"""Who may call Triton (`triton_ingress`): the program writes its NetworkPolicy from it and the gate judges a
serving namespace's ingress against it (tests/policies/rules/test_kubernetes_networkpolicy_restrict_serving_ingress.py
shows the two agree on the prod plan)."""

from components.serving.manifests import triton_ingress

NAME_LABEL = "kubernetes.io/metadata.name"


def test_the_policy_admits_what_triton_ingress_declares_and_nothing_else():
    ingress = triton_ingress(["video-api", "ads-api"], ("monitoring", {"app": "prometheus"}))
    (clients, scraper) = ingress
    assert clients["from"] == [
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": ["ads-api", "video-api"]}]
            }
        }
    ]
    assert {p["port"] for p in clients["ports"]} == {8000, 8001}
    assert scraper["from"][0]["podSelector"] == {"matchLabels": {"app": "prometheus"}}
    assert [p["port"] for p in scraper["ports"]] == [8002]


def test_no_client_namespaces_leaves_the_metrics_port_only():
    (scraper,) = triton_ingress([], ("monitoring", {"app": "prometheus"}))
    assert [p["port"] for p in scraper["ports"]] == [8002]
