"""Containers declare CPU and memory requests, or the scheduler packs blind and nodes are wasted."""

from components.plan.resources import POD_CARRIERS, pod_spec
from policies.framework import Rule


def check(resource, config):
    for container in (pod_spec(resource) or {}).get("containers", []):
        requests = (container.get("resources") or {}).get("requests") or {}
        missing = [kind for kind in ("cpu", "memory") if kind not in requests]
        if missing:
            yield f"{resource.name}: container {container.get('name')} requests no {' or '.join(missing)}"


RULE = Rule(
    name="kubernetes-container-require-cpu-memory-requests",
    description="Workload containers declare CPU and memory requests.",
    severity="medium",
    remediation="Set resources.requests.cpu and resources.requests.memory on every container.",
    topics=("cost", "kubernetes"),
    check_resource=check,
    resource_types=frozenset(POD_CARRIERS),
)
