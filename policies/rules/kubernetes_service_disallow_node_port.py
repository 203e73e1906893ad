"""No NodePort Services: a node port opens the service on every node's address, past the pods'
NetworkPolicies' intent and any load balancer's rules."""

from components.plan.resources import K8S_SERVICE
from policies.framework import Rule


def check(resource, config):
    if resource.type != K8S_SERVICE:
        return
    if (resource.props.get("spec") or {}).get("type") == "NodePort":
        yield f"{resource.name}: a NodePort Service opens it on every node"


RULE = Rule(
    name="kubernetes-service-disallow-node-port",
    description="Services are ClusterIP (or an internal load balancer); never NodePort.",
    severity="high",
    remediation="Use type ClusterIP, reached through the cluster's network or an internal load balancer.",
    topics=("security", "network", "kubernetes"),
    check_resource=check,
    resource_types=frozenset({K8S_SERVICE}),
    standards=("EKS BPG: Network security - limit exposure of Services",),
)
