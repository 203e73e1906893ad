"""No Service is an internet-facing load balancer: a LoadBalancer Service is internal only by the annotation
its controller reads. The AWS Load Balancer Controller (loadBalancerClass service.k8s.aws/nlb, or type
external/nlb-ip) reads `aws-load-balancer-scheme` (internal unless it says internet-facing); EKS's built-in
controller reads `aws-load-balancer-internal` (internal for any value but "false") and ignores `-scheme`,
so a Service it serves with only `scheme: internal` gets a public load balancer."""

from components.plan.resources import K8S_SERVICE
from policies.framework import Rule

ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"
CONTROLLER_CLASS = "service.k8s.aws/nlb"
CONTROLLER_TYPES = ("external", "nlb-ip")


def internal(service_props: dict) -> tuple[bool, str]:
    """Whether the load balancer its controller makes is internal, and which controller and annotation say so."""
    spec = service_props.get("spec") or {}
    annotations = (service_props.get("metadata") or {}).get("annotations") or {}
    if spec.get("loadBalancerClass") == CONTROLLER_CLASS or annotations.get(ANNOTATION + "type") in CONTROLLER_TYPES:
        return annotations.get(ANNOTATION + "scheme", "internal") == "internal", \
            f"the AWS Load Balancer Controller reads {ANNOTATION}scheme"
    if spec.get("loadBalancerClass"):
        return False, f"the controller of class {spec['loadBalancerClass']} is not one the gate knows"
    value = str(annotations.get(ANNOTATION + "internal", ""))
    return value not in ("", "false"), f"EKS's built-in controller reads {ANNOTATION}internal"


def check(resource, config):
    if resource.type != K8S_SERVICE or (resource.props.get("spec") or {}).get("type") != "LoadBalancer":
        return
    is_internal, reader = internal(resource.props)
    if not is_internal:
        yield f"{resource.name}: an internet-facing load balancer ({reader})"


RULE = Rule(
    name="kubernetes-service-require-internal-load-balancer",
    description="LoadBalancer Services are internal, by the annotation their controller reads.",
    severity="critical",
    remediation=f"Use ClusterIP; or annotate {ANNOTATION}internal: \"true\" (EKS's built-in controller), or "
                f"{ANNOTATION}scheme: internal with loadBalancerClass {CONTROLLER_CLASS} (the AWS Load Balancer "
                "Controller).",
    topics=("security", "serving", "network"),
    check_resource=check,
    resource_types=frozenset({K8S_SERVICE}),
    standards=("CIS EKS 5.4.5", "EKS BPG: Network security - internal load balancers"),
)
