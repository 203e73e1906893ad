"""GPU inference autoscalers do not scale on CPU alone (the source: CPU jitters, 23.6 % wrong scalings)."""

from components.plan.resources import K8S_DEPLOYMENT, K8S_HPA, requests_gpu
from components.plan.unknowns import of_types
from policies.framework import Rule


def check(resources, config):
    gpu_deployments = {
        (r.props.get("metadata") or {}).get("name") for r in of_types(resources, K8S_DEPLOYMENT) if requests_gpu(r)
    }
    for hpa in of_types(resources, K8S_HPA):
        spec = hpa.props.get("spec") or {}
        if (spec.get("scaleTargetRef") or {}).get("name") not in gpu_deployments:
            continue
        kinds = {m.get("type") for m in spec.get("metrics") or []}
        if not kinds or kinds == {"Resource"}:
            yield (
                hpa.urn,
                (
                    f"{hpa.name} scales a GPU deployment on CPU/memory alone; scale on a request metric "
                    "(queue time, requests per second)"
                ),
            )


RULE = Rule(
    name="kubernetes-hpa-disallow-cpu-only-for-gpu",
    description="HPAs of GPU inference Deployments scale on a Pods or External metric, not on CPU alone.",
    severity="medium",
    remediation="Add a Pods metric from prometheus-adapter (e.g. triton_queue_time_us_per_request).",
    topics=("cost", "kubernetes", "serving"),
    check_stack=check,
)
