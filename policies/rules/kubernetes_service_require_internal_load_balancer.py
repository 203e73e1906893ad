"""No Service is an internet-facing load balancer: a LoadBalancer Service is internal only by the annotation
its controller reads. EKS's built-in controller (kubernetes/cloud-provider-aws, pkg/providers/v1/aws.go
EnsureLoadBalancer) reads `aws-load-balancer-internal`, internal for any value but "" and "false", and
never reads `-scheme`: a Service it serves with only `scheme: internal` gets a public load balancer. The
AWS Load Balancer Controller (its class service.k8s.aws/nlb, type nlb-ip, or type external with a target
type; pkg/service/service_utils.go) reads `-scheme` first, then `-internal` as a boolean; without either it
keeps an existing load balancer's scheme or takes its flag's default, so the gate asks for one of them."""

from components.plan.resources import K8S_SERVICE
from policies.framework import Rule

ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-"
CONTROLLER_CLASS = "service.k8s.aws/nlb"


def internal(service_props: dict) -> tuple[bool, str]:
    """Whether the load balancer its controller makes is internal, and which controller and annotation say so."""
    spec = service_props.get("spec") or {}
    annotations = (service_props.get("metadata") or {}).get("annotations") or {}
    kind = annotations.get(ANNOTATION + "type")
    if kind == "external" and not annotations.get(ANNOTATION + "nlb-target-type"):
        return False, "type external without a target type: no controller the gate knows makes it"
    if spec.get("loadBalancerClass") == CONTROLLER_CLASS or kind in ("external", "nlb-ip"):
        scheme, legacy = annotations.get(ANNOTATION + "scheme"), str(annotations.get(ANNOTATION + "internal", ""))
        said = scheme == "internal" or (scheme is None and legacy.lower() in ("true", "1", "t"))
        return said, f"the AWS Load Balancer Controller reads {ANNOTATION}scheme, then {ANNOTATION}internal"
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
    remediation=f'Use ClusterIP; or annotate {ANNOTATION}internal: "true" (EKS\'s built-in controller), or '
    f"{ANNOTATION}scheme: internal with loadBalancerClass {CONTROLLER_CLASS} (the AWS Load Balancer "
    "Controller).",
    topics=("security", "serving", "network"),
    check_resource=check,
    resource_types=frozenset({K8S_SERVICE}),
    standards=("CIS EKS 5.4.5", "EKS BPG: Network security - internal load balancers"),
)
