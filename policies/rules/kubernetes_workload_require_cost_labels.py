"""Workload pods carry the cost labels (team, cost-center, env and the app's name): OpenCost attributes a
pod's cost by its labels, and a pod without them lands in `__unallocated__`, nobody's bill."""

from components.common.manifests import COST_LABEL_KEYS
from components.plan.resources import POD_CARRIERS, pod_spec
from policies.framework import Rule


def _pod_labels(resource):
    props = resource.props
    if resource.type.endswith(":Pod"):
        return (props.get("metadata") or {}).get("labels") or {}
    if resource.type.endswith(":CronJob"):
        template = (((props.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    else:
        template = (props.get("spec") or {}).get("template") or {}
    return (template.get("metadata") or {}).get("labels") or {}


def check(resource, config):
    if pod_spec(resource) is None:
        return
    labels = _pod_labels(resource)
    missing = [key for key in config["label_keys"] if not labels.get(key)]
    if missing:
        yield f"{resource.name}: its pods carry no {', '.join(missing)} label; their cost is nobody's"


RULE = Rule(
    name="kubernetes-workload-require-cost-labels",
    description="Workload pods carry the cost labels: the cloud cost tags' keys and the app's name.",
    severity="medium",
    remediation="Label the pod template with team, cost-center, env and app.kubernetes.io/name (the platform "
    "contract's cost_label_keys).",
    topics=("cost", "kubernetes"),
    config={"label_keys": {"type": "array", "items": {"type": "string"}, "default": list(COST_LABEL_KEYS)}},
    check_resource=check,
    resource_types=frozenset(POD_CARRIERS),
)
