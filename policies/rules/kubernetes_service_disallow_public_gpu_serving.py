"""Services in front of GPU serving are never internet-facing."""

from components.plan.resources import K8S_DEPLOYMENT, K8S_SERVICE, requests_gpu
from policies.framework import Rule

SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"


def check(resources, config):
    gpu_pod_labels = [((r.props.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
                      for r in resources if r.type == K8S_DEPLOYMENT and requests_gpu(r)]
    for service in (r for r in resources if r.type == K8S_SERVICE):
        spec = service.props.get("spec") or {}
        selector = spec.get("selector") or {}
        serves_gpu = selector and any(all(labels.get(k) == v for k, v in selector.items()) for labels in gpu_pod_labels)
        annotations = (service.props.get("metadata") or {}).get("annotations") or {}
        if serves_gpu and spec.get("type") == "LoadBalancer" and annotations.get(SCHEME) != "internal":
            yield service.urn, f"{service.name} exposes GPU serving through an internet-facing load balancer"


RULE = Rule(
    name="kubernetes-service-disallow-public-gpu-serving",
    description="Services selecting GPU serving pods are ClusterIP or internal load balancers.",
    severity="critical",
    remediation=f"Use ClusterIP, or annotate {SCHEME}: internal.",
    topics=("security", "serving"),
    check_stack=check,
    standards=("CIS EKS 5.4.5", "EKS BPG: Network security - internal load balancers"),
)
