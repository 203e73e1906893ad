"""Memory per requested vCPU stays within [2, 8] GiB (the source: 1:4 is right; 1:833 and 1:512 were not)."""

from components.plan.resources import POD_CARRIERS, pod_spec
from policies.framework import Rule
from policies.rules._helpers import memory_gib, quantity


def check(resource, config):
    low, high = config["min_gib_per_vcpu"], config["max_gib_per_vcpu"]
    for container in (pod_spec(resource) or {}).get("containers", []):
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu, memory = quantity(requests.get("cpu")), memory_gib(requests.get("memory"))
        if not cpu or memory is None:
            continue
        ratio = memory / cpu
        if not low <= ratio <= high:
            yield (
                f"{resource.name}: container {container.get('name')} asks {ratio:.1f} GiB per vCPU "
                f"({requests['cpu']} CPU, {requests['memory']}); allowed {low:g} to {high:g} (about 4 is right)"
            )


RULE = Rule(
    name="kubernetes-container-limit-memory-per-vcpu",
    description="Containers request between 2 and 8 GiB of memory per vCPU.",
    severity="low",
    remediation="Rebalance CPU and memory requests towards 1 vCPU : 4 GiB.",
    topics=("cost", "kubernetes"),
    config={"min_gib_per_vcpu": {"type": "number", "default": 2}, "max_gib_per_vcpu": {"type": "number", "default": 8}},
    check_resource=check,
    resource_types=frozenset(POD_CARRIERS),
)
