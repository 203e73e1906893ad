"""GPU serving keeps a warm pool: the source's cold start (3-8 s, 17.3 wrong scalings a minute)."""

from components.plan.resources import K8S_DEPLOYMENT, K8S_HPA, requests_gpu
from components.plan.unknowns import of_types
from policies.framework import Rule


def check(resources, config):
    minimums = {
        ((r.props.get("spec") or {}).get("scaleTargetRef") or {}).get("name"): (r.props.get("spec") or {}).get(
            "minReplicas", 1
        )
        for r in of_types(resources, K8S_HPA)
    }
    for deployment in (r for r in of_types(resources, K8S_DEPLOYMENT) if requests_gpu(r)):
        name = (deployment.props.get("metadata") or {}).get("name")
        spec = deployment.props.get("spec") or {}
        if name not in minimums and "replicas" in spec:
            continue  # a fixed-size Deployment (e.g. a canary) is not autoscaled
        warm = minimums.get(name, 1)  # no autoscaler and no replicas: the API server's default of one
        if warm < config["min_warm_pool"]:
            yield (
                deployment.urn,
                (
                    f"{deployment.name} keeps {warm:g} warm replica(s); at least "
                    f"{config['min_warm_pool']} stay loaded so a cold start never serves traffic"
                ),
            )


RULE = Rule(
    name="kubernetes-deployment-require-warm-pool",
    description="GPU serving Deployments keep a warm pool (HPA minReplicas; 2 in prod).",
    severity="medium",
    remediation="Raise the HPA's minReplicas (serving warm_pool).",
    topics=("reliability", "serving"),
    config={"min_warm_pool": {"type": "integer", "default": 2}},
    check_stack=check,
)
