"""GPU serving pods drain: a preStop hook and a grace period longer than it (the source: 42 min -> 8 s)."""

from components.plan.resources import K8S_DEPLOYMENT, pod_spec, requests_gpu
from policies.framework import Rule


def check(resource, config):
    if resource.type != K8S_DEPLOYMENT or not requests_gpu(resource):
        return
    spec = pod_spec(resource) or {}
    for container in spec.get("containers", []):
        if not ((container.get("lifecycle") or {}).get("preStop")):
            yield f"{resource.name}: container {container.get('name')} has no preStop hook to stop new traffic first"
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace < config["min_grace_seconds"]:
        yield f"{resource.name} gives pods {grace:g} s to stop; at least {config['min_grace_seconds']} s to drain"


RULE = Rule(
    name="kubernetes-deployment-require-graceful-drain",
    description="GPU serving Deployments have a preStop hook and a sufficient termination grace period.",
    severity="medium",
    remediation="Add lifecycle.preStop (a short sleep) and terminationGracePeriodSeconds above drain + exit time.",
    topics=("reliability", "serving"),
    config={"min_grace_seconds": {"type": "integer", "default": 30}},
    check_resource=check,
    resource_types=frozenset({K8S_DEPLOYMENT}),
)
