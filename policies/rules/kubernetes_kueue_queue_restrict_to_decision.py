"""What Kueue hands out stays inside what the plan's GPU groups run, and inside each team:

- a ResourceFlavor selects one pool of the plan by its node-group label and gives the pods Kueue admits on it
  that pool's tolerations only (Kueue adds a flavor's tolerations to every pod it admits): each names its key,
  none the system nodes' taint, the pool key only as Equal to the flavor's own pool;
- a ClusterQueue takes LocalQueues from one team's namespaces only (a `namespaceSelector` that is exactly
  the tenant label's value: an empty or `Exists` selector lets any namespace's queue in), and names flavors of
  the plan; the teams' nominal GPUs on a pool's flavors together never exceed the pool's GPUs at its group's
  maximum (its Auto Scaling group's maxSize, in instances of its first override type);
- a LocalQueue points at a ClusterQueue that takes its namespace's team."""

from typing import Any

from components.catalog.instance_types import gpu_instance_type
from components.compute.labels import (
    CAPACITY_BLOCK_TAG,
    NODE_GROUP_LABEL,
    NODE_GROUP_TAG,
    POOL_TAINT_KEY,
    SYSTEM_TAINT_KEY,
)
from components.plan.resources import (
    ASG,
    K8S_NAMESPACE,
    KUEUE_CLUSTER_QUEUE,
    KUEUE_FLAVOR,
    KUEUE_LOCAL_QUEUE,
    listed,
    tags_of,
)
from components.plan.unknowns import of_types
from components.tenancy.manifests import TENANT_LABEL
from components.tenancy.queues import GPU_RESOURCE
from policies.framework import Rule

KINDS = (KUEUE_FLAVOR, KUEUE_CLUSTER_QUEUE, KUEUE_LOCAL_QUEUE)


def _pool_gpus(resources) -> dict[str, int]:
    """Each pool's GPUs at its main group's maximum (a Capacity Block's group is no flavor's)."""
    found: dict[str, int] = {}
    for group in of_types(resources, ASG):
        tags = tags_of(group) or {}
        pool = tags.get(NODE_GROUP_TAG)
        overrides = ((group.props.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}).get("overrides")
        if pool is None or CAPACITY_BLOCK_TAG in tags or not overrides:
            continue
        gpus = gpu_instance_type(str(listed(overrides)[0].get("instanceType"))).gpus
        found[pool] = found.get(pool, 0) + int(group.props.get("maxSize") or 0) * gpus
    return found


def _toleration_problem(toleration: Any, pool: str) -> str | None:
    if not isinstance(toleration, dict) or not toleration.get("key"):
        return "a toleration without a key (it tolerates every taint)"
    key = toleration["key"]
    if key == SYSTEM_TAINT_KEY:
        return f"a toleration of {SYSTEM_TAINT_KEY} (the system nodes)"
    if key == POOL_TAINT_KEY and (toleration.get("operator", "Equal") != "Equal" or toleration.get("value") != pool):
        return f"a toleration of {POOL_TAINT_KEY} other than its own pool's ({pool})"
    return None


def _team_of_selector(selector: Any) -> str | None:
    """The team a ClusterQueue's namespaceSelector is exactly, else None."""
    if not isinstance(selector, dict) or set(selector) != {"matchLabels"}:
        return None
    labels = selector["matchLabels"]
    return labels.get(TENANT_LABEL) if isinstance(labels, dict) and set(labels) == {TENANT_LABEL} else None


def check(resources, config):
    if not of_types(resources, *KINDS):
        return
    pools = _pool_gpus(resources)
    flavor_pools: dict[str, str | None] = {}
    for flavor in of_types(resources, KUEUE_FLAVOR):
        spec = flavor.props.get("spec") or {}
        pool = (spec.get("nodeLabels") or {}).get(NODE_GROUP_LABEL)
        name = str((flavor.props.get("metadata") or {}).get("name"))
        flavor_pools[name] = pool if pool in pools else None
        if pool not in pools:
            yield flavor.urn, f"{flavor.name}: selects no GPU pool of the plan ({NODE_GROUP_LABEL}: {pool})"
            continue
        for toleration in listed(spec.get("tolerations") or []):
            problem = _toleration_problem(toleration, pool)
            if problem:
                yield flavor.urn, f"{flavor.name}: gives every pod Kueue admits on it {problem}"
    held: dict[str, int] = {}
    teams: dict[str, str | None] = {}
    for queue in of_types(resources, KUEUE_CLUSTER_QUEUE):
        spec = queue.props.get("spec") or {}
        teams[str((queue.props.get("metadata") or {}).get("name"))] = team = _team_of_selector(
            spec.get("namespaceSelector")
        )
        if team is None:
            yield (
                queue.urn,
                f"{queue.name}: its namespaceSelector is not one team's ({TENANT_LABEL}: <team>): any namespace's "
                "LocalQueue could spend its quota",
            )
        for group in listed(spec.get("resourceGroups") or []):
            for flavor in listed((group or {}).get("flavors") or []):
                name = str((flavor or {}).get("name"))
                if name not in flavor_pools:
                    yield queue.urn, f"{queue.name}: names flavor {name}, which the plan does not make"
                    continue
                for resource in listed(flavor.get("resources") or []):
                    pool = flavor_pools[name]
                    if (resource or {}).get("name") == GPU_RESOURCE and pool:
                        held[pool] = held.get(pool, 0) + int(resource.get("nominalQuota") or 0)
    for pool, gpus in sorted(held.items()):
        if gpus > pools[pool]:
            yield (
                None,
                (
                    f"the teams' nominal GPUs on pool {pool}'s flavors add up to {gpus}, more than the {pools[pool]} "
                    "its group runs at its maximum: Kueue would admit work onto GPUs the decision never buys"
                ),
            )
    namespaces = {
        (n.props.get("metadata") or {}).get("name"): ((n.props.get("metadata") or {}).get("labels") or {}).get(
            TENANT_LABEL
        )
        for n in of_types(resources, K8S_NAMESPACE)
    }
    for local in of_types(resources, KUEUE_LOCAL_QUEUE):
        namespace = (local.props.get("metadata") or {}).get("namespace")
        target = str((local.props.get("spec") or {}).get("clusterQueue"))
        if target not in teams or teams[target] is None or teams[target] != namespaces.get(namespace):
            yield (
                local.urn,
                f"{local.name}: points namespace {namespace} at ClusterQueue {target}, which is not its team's",
            )


RULE = Rule(
    name="kubernetes-kueue-queue-restrict-to-decision",
    description="Kueue's flavors select the plan's pools with their own tolerations only; a ClusterQueue serves "
    "one team's namespaces; the teams' nominal GPUs on a pool never exceed what its group runs at its maximum.",
    severity="critical",
    remediation="Derive the queues from the stack config (components/tenancy/queues.py): one flavor per pool and "
    "capacity type, a ClusterQueue per team and class selecting the team's label, nominal quotas within the pools.",
    topics=("cost", "kubernetes"),
    check_stack=check,
    standards=("Kueue: ClusterQueue namespaceSelector, ResourceFlavor tolerations",),
)
