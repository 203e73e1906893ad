"""The control plane's audit, authenticator and API logs go to CloudWatch: without them nobody can tell
who did what through the API. CIS 2.1.1 asks for all five types; the controller manager's and the
scheduler's are operational, so an environment's config asks for them (prod does)."""

from components.plan.resources import EKS_CLUSTER
from policies.framework import Rule


def check(resource, config):
    if resource.type != EKS_CLUSTER:
        return
    enabled = set(resource.props.get("enabledClusterLogTypes") or [])
    missing = [kind for kind in config["required_log_types"] if kind not in enabled]
    if missing:
        yield f"{resource.name}: control-plane logs {', '.join(missing)} are off"


RULE = Rule(
    name="aws-eks-cluster-require-control-plane-logs",
    description="EKS clusters send the required control-plane log types to CloudWatch Logs.",
    severity="high",
    remediation="Add the missing types to enabled_cluster_log_types.",
    topics=("security", "logging"),
    config={
        "required_log_types": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["api", "audit", "authenticator"],
        }
    },
    check_resource=check,
    resource_types=frozenset({EKS_CLUSTER}),
    standards=("CIS EKS 2.1.1", "CIS EKS 2.1.2"),
)
