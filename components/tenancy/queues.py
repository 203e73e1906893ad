"""Teams share the decided GPUs through Kueue: what each pool's capacity decision buys becomes ResourceFlavors,
each team's `gpus` its ClusterQueue's nominal quota in its class's cohort, and each team namespace a LocalQueue.
Pure: the program (components/tenancy/tenants.py: `GpuQueues`), the gate and the tests read the same objects.

docs/capacity-decision.md says why the flavors select pools and not capacity types: a pool's Auto Scaling group
mixes spot and on-demand, and the cluster autoscaler templates a new node from the group's tags, one value per
label, so a pod pinned to spot on a mixed group would never get a node. The group's mix realises the split;
the flavors keep every team's quota inside it, cheapest first.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from components.capacity.plan import CapacityPlan
from components.cluster.provisioning import BEST_EFFORT_ATOMIC
from components.common.addon_resources import ADDON_RESOURCES
from components.common.manifests import (
    admission_policy,
    api_server_egress,
    namespace,
    namespace_baseline,
    network_policy,
)
from components.common.validation import FieldError
from components.compute.labels import (
    GPU_TAINT,
    HOSTNAME_LABEL,
    NETWORK_NODE_LAYER,
    NODE_GROUP_LABEL,
    SYSTEM_NODE_SELECTOR,
    SYSTEM_TOLERATIONS,
    pool_taint,
    pool_tolerations,
)
from components.compute.priority import CLUSTER_CRITICAL, PRIORITY_CLASS
from components.pricing.reserved import CAPACITY_RESERVATION, RESERVED_INSTANCE
from components.tenancy.config import QueuesConfig, TenantConfig
from components.tenancy.manifests import TENANT_LABEL
from seedance_client.contract import ELASTIC_JOB_ANNOTATION, GPU_RESOURCE, QUEUE_LABEL, SPOT_NOTICE_SECONDS

KUEUE_API = "kueue.x-k8s.io/v1beta2"
# Its own namespace: the chart gives its controller read and write on every Secret of the release's namespace.
KUEUE_NAMESPACE = "kueue-system"
KUEUE_PODS = {"app.kubernetes.io/name": "kueue", "control-plane": "controller-manager"}
# The ports the API server calls (the control plane's addresses are in the VPC): its webhooks, its visibility API.
KUEUE_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT = 9443, 8082
# Cheapest first: reserved capacity is paid whether used or not, spot is the cheapest bought by the hour, and
# online work never lands on spot (its pools run none: the capacity decision's online class).
FLAVOR_ORDER = {"batch": ("reserved", "spot", "on-demand"), "online": ("reserved", "on-demand")}
# Holdings that are capacity as well as a price (a Savings Plan is a price only: its units are on-demand ones).
CAPACITY_HOLDINGS = (RESERVED_INSTANCE, CAPACITY_RESERVATION)
# The job kinds teams submit (Kueue's integration names), and nothing else is queued.
INTEGRATIONS = ("batch/job", "jobset.x-k8s.io/jobset")
# A multi-node pool's flavors admit a job only once the autoscaler took all its nodes as one request
# (docs/capacity-decision.md, "Gangs"): the AdmissionCheck and its ProvisioningRequestConfig share this name.
GANG_CHECK = "gang-nodes"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# Kueue sets its provisioning controller up only if the CRD is served when it starts (cmd/kueue/main.go): a
# pod annotation that appears with the CRD restarts it on the `up` that adds the first multi-node pool.
PROVISIONING_ANNOTATION = "seedance.io/provisioning-requests"


@dataclass(frozen=True)
class Flavor:
    """One pool's GPUs of one capacity type at the group's maximum, less what serving may hold there."""

    pool: str
    workload_class: str
    capacity_type: str
    gpus: int
    multi_node: bool = False  # an EFA pool's: jobs across nodes, their nodes asked for at once
    topology_layers: int = 0  # a multi-node pool's network depth (its types' instance topology), else 0

    @property
    def name(self) -> str:
        # Kueue freezes a flavor's topology, node labels and tolerations once it has one (its CRD's rules): a
        # pool whose topology changes gets another flavor, which its queues then name, not a refused update.
        base = f"{self.pool}-{self.capacity_type}"
        return f"{base}-topology-{self.topology_layers}" if self.topology_layers else base


def pool_units(plan: CapacityPlan, gpus_per_instance: int) -> dict[str, int]:
    """GPUs of each capacity type the group runs at its maximum, in whole instances: spot rounded down (the
    group's on-demand share is a floor), reserved the Reserved Instances and capacity reservations the plan
    was decided with, up to the on-demand units they cover."""
    mix = plan.mix.in_instances(gpus_per_instance)
    instances = plan.constraints["max_gpus"] // gpus_per_instance
    spot = math.floor(mix.spot_units(instances) + 1e-9)
    on_demand = instances - spot
    held = sum(h.count for h in mix.holdings if h.kind in CAPACITY_HOLDINGS)
    reserved = min(held, on_demand)
    return {
        "reserved": reserved * gpus_per_instance,
        "spot": spot * gpus_per_instance,
        "on-demand": (on_demand - reserved) * gpus_per_instance,
    }


def served_gpus(servings: Sequence[Any]) -> dict[str, int]:
    """The GPUs each pool's serving sets may hold at their most replicas, canaries included."""
    served: dict[str, int] = {}
    for serving in servings:
        replicas = serving.max_replicas + (serving.canary.replicas if serving.canary else 0)
        served[serving.node_group] = served.get(serving.node_group, 0) + replicas * serving.gpus
    return served


def flavors(
    groups: Sequence[tuple[str, str, int]],
    plans: Mapping[str, CapacityPlan],
    served: Mapping[str, int],
    multi_node: Collection[str] = (),
    topologies: Mapping[str, int] | None = None,
) -> list[Flavor]:
    """Each pool's flavors, in the class's order, from (pool, workload class, GPUs per instance) and its plan;
    `served`: the GPUs serving may hold on a pool (its sets' most replicas), taken from the dearest flavors;
    `multi_node`: the EFA pools; `topologies`: the depth of those whose types report their network place."""
    depth = topologies or {}
    found = []
    for pool, klass, gpus_per_instance in groups:
        units = pool_units(plans[pool], gpus_per_instance)
        taken = served.get(pool, 0)
        for capacity_type in reversed(FLAVOR_ORDER[klass]):
            give = min(taken, units[capacity_type])
            units[capacity_type] -= give
            taken -= give
        found += [
            Flavor(pool, klass, t, units[t], pool in multi_node, depth.get(pool, 0))
            for t in FLAVOR_ORDER[klass]
            if units[t] > 0
        ]
    return found


def nominal_quotas(
    tenants: Sequence[TenantConfig], pools_of: Mapping[str, Sequence[str]], offered: Sequence[Flavor]
) -> dict[tuple[str, str], dict[str, int]]:
    """Each (team, class)'s nominal GPUs per flavor: its `gpus` split over the flavors of the pools it may use,
    in proportion to their GPUs, then moved where needed so that no flavor is promised more than it has (a
    maximum flow). A class whose teams were promised more than their pools run is refused, naming the team."""
    quotas: dict[tuple[str, str], dict[str, int]] = {}
    for klass in FLAVOR_ORDER:
        capacity = {f.name: f.gpus for f in offered if f.workload_class == klass}
        wants = {t.name: t.gpus.get(klass, 0) for t in tenants if t.gpus.get(klass, 0) > 0}
        eligible = {
            t.name: [f.name for f in offered if f.workload_class == klass and f.pool in pools_of[t.name]]
            for t in tenants
            if t.name in wants
        }
        given = _proportional(wants, eligible, capacity)
        _fill(wants, eligible, capacity, given)
        for index, tenant in enumerate(tenants):
            if tenant.name in wants:
                held = sum(given[tenant.name].values())
                if held < wants[tenant.name]:
                    room = sum(capacity[f] for f in eligible[tenant.name])
                    raise FieldError(
                        f"tenants[{index}].gpus.{klass}",
                        wants[tenant.name],
                        f"cannot be the team's nominal quota: with the other teams' it exceeds the {klass} GPUs its "
                        f"pools run at their maximum ({room}, less serving's); allowed: at most {held}",
                    )
                quotas[(tenant.name, klass)] = {f: n for f, n in given[tenant.name].items() if n > 0}
    return quotas


def _proportional(
    wants: Mapping[str, int], eligible: Mapping[str, list[str]], capacity: Mapping[str, int]
) -> dict[str, dict[str, int]]:
    """A first split, rounded down and never beyond a flavor's GPUs: each team's quota over its flavors by size."""
    left = dict(capacity)
    given: dict[str, dict[str, int]] = {}
    for team, want in wants.items():
        total = sum(capacity[f] for f in eligible[team])
        given[team] = {}
        for name in eligible[team]:
            share = min(left[name], want * capacity[name] // total) if total else 0
            given[team][name] = share
            left[name] -= share
    return given


def _fill(
    wants: Mapping[str, int],
    eligible: Mapping[str, list[str]],
    capacity: Mapping[str, int],
    given: dict[str, dict[str, int]],
) -> None:
    """Augmenting paths (Ford-Fulkerson) from a feasible split to the largest: a team short of its quota takes
    from a flavor with room, through other teams moving to flavors they may also use."""
    while True:
        load = {f: sum(g.get(f, 0) for g in given.values()) for f in capacity}
        short = [t for t in wants if sum(given[t].values()) < wants[t]]
        path = _augmenting_path(short, eligible, capacity, given, load)
        if path is None:
            return
        amount = min(
            [wants[path[0]] - sum(given[path[0]].values()), capacity[path[-1]] - load[path[-1]]]
            + [given[path[i + 1]][path[i]] for i in range(1, len(path) - 1, 2)]
        )
        for i in range(0, len(path) - 1, 2):  # team -> flavor: the team takes more of it
            given[path[i]][path[i + 1]] = given[path[i]].get(path[i + 1], 0) + amount
        for i in range(1, len(path) - 1, 2):  # flavor -> team: that team gives some of it up
            given[path[i + 1]][path[i]] -= amount


def _augmenting_path(
    short: Sequence[str],
    eligible: Mapping[str, list[str]],
    capacity: Mapping[str, int],
    given: Mapping[str, dict[str, int]],
    load: Mapping[str, int],
) -> list[str] | None:
    """A path team, flavor, team, flavor, ... ending at a flavor with room (breadth first)."""
    queue = [[team] for team in short]
    seen = set(short)
    while queue:
        path = queue.pop(0)
        for name in eligible[path[-1]]:
            if name in seen:
                continue
            seen.add(name)
            if load[name] < capacity[name]:
                return [*path, name]
            for team, held in given.items():
                if held.get(name, 0) > 0 and team not in seen:
                    seen.add(team)
                    queue.append([*path, name, team])
    return None


def cluster_queue_name(team: str, klass: str) -> str:
    return f"{team}-{klass}"


def local_queue_name(klass: str) -> str:
    """The LocalQueue a team's job names (`kueue.x-k8s.io/queue-name`) in each of its namespaces."""
    return klass


def resource_flavor(flavor: Flavor) -> dict[str, Any]:
    """A flavor selects its pool's nodes and gives admitted pods the pool's tolerations (Kueue adds them); on a
    pool with a topology, Kueue places a job's pods by it (its tolerations let TAS use the tainted nodes)."""
    spec: dict[str, Any] = {
        "nodeLabels": {NODE_GROUP_LABEL: flavor.pool},
        "nodeTaints": [GPU_TAINT, pool_taint(flavor.pool)],
        "tolerations": pool_tolerations(flavor.pool),
    }
    if flavor.topology_layers:
        spec["topologyName"] = topology_name(flavor.topology_layers)
    return _kueue_object("ResourceFlavor", flavor.name, spec)


def topology_name(layers: int) -> str:
    return f"aws-network-{layers}-layers"


def topology(layers: int) -> dict[str, Any]:
    """Kueue's Topology of EC2's network at this depth, layer 1 first, the node last (Kueue respects nodes'
    taints only when the host name is the lowest level). A job asks for its pods under one network node with
    `kueue.x-k8s.io/podset-required-topology` (or `-preferred-`) set to a level's label."""
    levels = [{"nodeLabel": f"{NETWORK_NODE_LAYER}{layer}"} for layer in range(1, layers + 1)]
    return _kueue_object("Topology", topology_name(layers), {"levels": [*levels, {"nodeLabel": HOSTNAME_LABEL}]})


def cluster_queue(
    tenant: TenantConfig, klass: str, quota: Mapping[str, int], offered: Sequence[Flavor]
) -> dict[str, Any]:
    """A team's queue in its class's cohort: its nominal GPUs per flavor, in the class's order, with the limits
    its config gives. Batch borrows idle quota and has its own reclaimed by preemption; online neither
    borrows nor is preempted (a serving pod evicted to give GPUs back is an outage)."""
    borrowing = borrowing_limit(tenant, klass)
    lending = tenant.gpu_lending_limits.get(klass)
    order = [f for f in offered if f.workload_class == klass and f.name in quota]
    resources = []
    for flavor in order:
        # Quantities as the API server returns them (strings): a number here differs from the live object, and
        # the real engine then updates every ClusterQueue on every `pulumi up`.
        limits: dict[str, Any] = {"name": GPU_RESOURCE, "nominalQuota": str(quota[flavor.name])}
        if borrowing is not None:
            limits["borrowingLimit"] = str(borrowing)
        if lending is not None:
            limits["lendingLimit"] = str(min(lending, quota[flavor.name]))
        resources.append({"name": flavor.name, "resources": [limits]})
    gangs = [f.name for f in order if f.multi_node]
    checks = {"admissionChecksStrategy": {"admissionChecks": [{"name": GANG_CHECK, "onFlavors": gangs}]}}
    return {
        "apiVersion": KUEUE_API,
        "kind": "ClusterQueue",
        "metadata": {"name": cluster_queue_name(tenant.name, klass), "labels": {TENANT_LABEL: tenant.name}},
        "spec": {
            "cohortName": f"seedance-{klass}",
            # Only the team's own namespaces' LocalQueues may point here.
            "namespaceSelector": {"matchLabels": {TENANT_LABEL: tenant.name}},
            "queueingStrategy": "BestEffortFIFO",
            # Kueue's CRD default, written out: what a preview under the real engine reads back from the live
            # queue, so the gate judges the same queue there as in the plan.
            "stopPolicy": "None",
            "resourceGroups": [{"coveredResources": [GPU_RESOURCE], "flavors": resources}],
            "preemption": (
                {
                    "reclaimWithinCohort": "Any",
                    "withinClusterQueue": "LowerPriority",
                    "borrowWithinCohort": {"policy": "Never"},
                }
                if klass == "batch"
                else {"reclaimWithinCohort": "Never", "withinClusterQueue": "Never"}
            ),
            "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"},
            **(checks if gangs else {}),
        },
    }


def gang_check() -> list[dict[str, Any]]:
    """The AdmissionCheck that multi-node flavors carry, and its parameters: Kueue creates a ProvisioningRequest
    of the job's pods (with the flavor's selector and tolerations) and admits it once the autoscaler marks it
    Provisioned. Only pods asking for GPUs are in the request (a launcher's CPU pod fits the system nodes); the
    retries are Kueue's defaults, written out (the API server fills them in: a plan without them would differ
    from the live object)."""
    retries = {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}
    parameters = {"apiGroup": KUEUE_API.split("/")[0], "kind": "ProvisioningRequestConfig", "name": GANG_CHECK}
    return [
        _kueue_object(
            "ProvisioningRequestConfig",
            GANG_CHECK,
            {"provisioningClassName": BEST_EFFORT_ATOMIC, "managedResources": [GPU_RESOURCE], "retryStrategy": retries},
        ),
        _kueue_object(
            "AdmissionCheck", GANG_CHECK, {"controllerName": PROVISIONING_CONTROLLER, "parameters": parameters}
        ),
    ]


def _kueue_object(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": KUEUE_API, "kind": kind, "metadata": {"name": name}, "spec": spec}


def local_queue(tenant: TenantConfig, namespace: str, klass: str) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": local_queue_name(klass), "namespace": namespace, "labels": {TENANT_LABEL: tenant.name}},
        "spec": local_queue_spec(tenant.name, klass),
    }


def local_queue_spec(team: str, klass: str) -> dict[str, Any]:
    """Its ClusterQueue, and Kueue's CRD default for `stopPolicy` written out: what a preview under the real
    engine reads back from the live queue, so the gate judges the same queue there as in the plan."""
    return {"clusterQueue": cluster_queue_name(team, klass), "stopPolicy": "None"}


def queue_ceilings(
    tenants: Sequence[TenantConfig], pools_of: Mapping[str, Sequence[str]], offered: Sequence[Flavor]
) -> dict[tuple[str, str], int]:
    """The most GPUs Kueue may admit for each (team, class): per flavor its nominal quota and what its borrowing
    limit lets it add (Kueue's limits are per flavor), never beyond the flavor's GPUs. Each of the team's
    namespaces gets this as its GPU quota, so the quota never stops what the cohort lends."""
    quotas = nominal_quotas(tenants, pools_of, offered)
    gpus = {f.name: f.gpus for f in offered}
    ceilings = {}
    for tenant in tenants:
        for klass in FLAVOR_ORDER:
            if (tenant.name, klass) in quotas:
                borrowing = borrowing_limit(tenant, klass)
                ceilings[(tenant.name, klass)] = sum(
                    gpus[name] if borrowing is None else min(gpus[name], nominal + borrowing)
                    for name, nominal in quotas[(tenant.name, klass)].items()
                )
    return ceilings


def borrowing_limit(tenant: TenantConfig, klass: str) -> int | None:
    """GPUs the team's queue may borrow per flavor (None: no limit; online never borrows)."""
    return tenant.gpu_borrowing_limits.get(klass, 0 if klass == "online" else None)


QUEUED_JOBS_POLICY = "seedance-tenant-queued-jobs"
QUEUED_PODS_POLICY = "seedance-tenant-queued-pods"
# The identity kube-controller-manager's Job controller acts as (EKS runs it with service account credentials).
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
# Kueue's controller (the chart's service account, `<release>-controller-manager`): alone it starts a queued Job.
KUEUE_CONTROLLER = "system:serviceaccount:kueue-system:kueue-controller-manager"
# Kueue (enabled by default since 0.18, Beta) gates an elastic Job's pods instead of suspending it: a team that
# lifts the gates runs them unadmitted. The platform turns the feature off and refuses the annotation.
ELASTIC_JOBS = "ElasticJobsViaWorkloadSlices"
# A batch pod's longest grace: its node may be spot, gone two minutes after notice; a longer grace only holds
# GPUs after its Job was stopped (Kueue counts the quota freed while the pods still terminate).
MAX_BATCH_GRACE_SECONDS = SPOT_NOTICE_SECONDS


def queue_admission_policies() -> list[dict[str, Any]]:
    """In the teams' namespaces, with queues: a Job (or a CronJob's jobs) names one of the team's LocalQueues
    (one naming none would sit suspended, Kueue's for ever), and a pod of the batch class asking for GPUs is
    made by the Job controller for a Job Kueue admitted, never directly: Kueue counts jobs, not pods, so a
    team's own GPU pod would hold GPUs outside its queue. Only what a request changes is judged (a Job made
    before queues, updated by its controller, passes)."""
    queues = "[" + ", ".join(f'"{local_queue_name(k)}"' for k in FLAVOR_ORDER) + "]"
    label = f'"{QUEUE_LABEL}"'
    named = "has({0}.metadata.labels) && {1} in {0}.metadata.labels ? {0}.metadata.labels[{1}] : ''"
    template = "(object.kind == 'CronJob' ? object.spec.jobTemplate : object)"
    before = "(oldObject.kind == 'CronJob' ? oldObject.spec.jobTemplate : oldObject)"
    teams = {"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]}
    jobs = admission_policy(
        QUEUED_JOBS_POLICY,
        [
            {
                "apiGroups": ["batch"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["jobs", "cronjobs"],
            }
        ],
        [
            {
                "expression": "(request.operation == 'UPDATE' && variables.queue == variables.before) || "
                f"variables.queue in {queues}",
                "message": f"a team's Job names its queue: label {QUEUE_LABEL} set to one of its LocalQueues "
                f"({', '.join(local_queue_name(k) for k in FLAVOR_ORDER)}); on a CronJob, in its jobTemplate",
            },
            {
                "expression": "object.kind != 'Job' || !has(object.metadata.annotations) || "
                f"!('{ELASTIC_JOB_ANNOTATION}' in object.metadata.annotations)",
                "message": f"a team's Job is not elastic ({ELASTIC_JOB_ANNOTATION}): the platform queues Jobs whole",
            },
            {
                # Kueue suspends a queued Job and unsuspends it on admission; a team that unsuspends it starts
                # pods Kueue then stops, which hold their GPUs while they terminate.
                "expression": "object.kind != 'Job' || request.operation != 'UPDATE' || "
                "!(has(oldObject.spec.suspend) && oldObject.spec.suspend) || "
                "(has(object.spec.suspend) && object.spec.suspend) || "
                f"request.userInfo.username == '{KUEUE_CONTROLLER}'",
                "message": "a team's queued Job is started by Kueue when it admits it, not by unsuspending it",
            },
            {
                # Kueue leaves a Job owned by a kind it manages (a Job, a JobSet) to that owner's workload: a Job
                # made to belong to the team's own small queued Job would run unqueued. A CronJob's Jobs are queued.
                "expression": "object.kind != 'Job' || (request.operation == 'UPDATE' && variables.owners == "
                "(has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])) || "
                "variables.owners.all(o, o.apiVersion == 'batch/v1' && o.kind == 'CronJob')",
                "message": "a team's Job belongs to no other object but a CronJob: Kueue does not queue a Job it "
                "takes to be part of another's workload",
            },
        ],
        variables=[
            {"name": "queue", "expression": named.format(template, label)},
            {
                "name": "owners",
                "expression": "has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []",
            },
            {
                "name": "before",
                "expression": f"request.operation == 'UPDATE' ? ({named.format(before, label)}) : ''",
            },
        ],
        namespace_selector=teams,
    )
    asks = (
        f"has(c.resources) && ((has(c.resources.requests) && '{GPU_RESOURCE}' in c.resources.requests) || "
        f"(has(c.resources.limits) && '{GPU_RESOURCE}' in c.resources.limits))"
    )
    pods = admission_policy(
        QUEUED_PODS_POLICY,
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        [
            {
                "expression": f"!has(object.spec.priorityClassName) || object.spec.priorityClassName != "
                f"'{PRIORITY_CLASS['batch']}' || !variables.gpus || request.userInfo.username == '{JOB_CONTROLLER}'",
                "message": f"a team's batch GPUs are Kueue's to hand out: run GPU work of class "
                f"{PRIORITY_CLASS['batch']} as a Job that names its queue ({QUEUE_LABEL}), not as a pod of "
                "its own or of another controller",
            },
            {
                "expression": f"!has(object.spec.priorityClassName) || object.spec.priorityClassName != "
                f"'{PRIORITY_CLASS['batch']}' || !variables.gpus || !has(object.spec.terminationGracePeriodSeconds) "
                f"|| object.spec.terminationGracePeriodSeconds <= {MAX_BATCH_GRACE_SECONDS}",
                "message": f"a team's batch GPU pod stops within {MAX_BATCH_GRACE_SECONDS} s "
                "(terminationGracePeriodSeconds): a spot node is gone two minutes after notice, and a stopped "
                "pod holds its GPUs until it ends",
            },
        ],
        variables=[
            {
                "name": "gpus",
                "expression": f"object.spec.containers.exists(c, {asks}) || "
                f"(has(object.spec.initContainers) && object.spec.initContainers.exists(c, {asks}))",
            }
        ],
        namespace_selector=teams,
    )
    return [*jobs, *pods]


def queue_manifests(
    tenants: Sequence[TenantConfig], pools_of: Mapping[str, Sequence[str]], offered: Sequence[Flavor]
) -> list[dict[str, Any]]:
    """Every flavor, and each team's ClusterQueue per class and LocalQueue per namespace and class."""
    quotas = nominal_quotas(tenants, pools_of, offered)
    manifests = [
        *(gang_check() if any(f.multi_node for f in offered) else []),
        *(topology(layers) for layers in sorted({f.topology_layers for f in offered} - {0})),
        *(resource_flavor(f) for f in offered),
    ]
    for tenant in tenants:
        for klass in FLAVOR_ORDER:
            if (tenant.name, klass) in quotas:
                manifests.append(cluster_queue(tenant, klass, quotas[(tenant.name, klass)], offered))
                manifests += [local_queue(tenant, ns, klass) for ns in tenant.namespace_names]
    return manifests


KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_IMAGE = "registry.k8s.io/kueue/kueue"


def kueue_namespace(vpc_cidr: str, api_service_ip: str) -> list[dict[str, Any]]:
    """Kueue's namespace (restricted: the chart runs it non-root, read-only, without capabilities), denied
    everything but DNS, the API server's calls to its webhooks and visibility API, and its own calls to the API."""
    tcp = [{"port": port, "protocol": "TCP"} for port in (KUEUE_WEBHOOK_PORT, KUEUE_VISIBILITY_PORT)]
    return [
        namespace(KUEUE_NAMESPACE, "restricted"),
        *namespace_baseline(KUEUE_NAMESPACE),
        network_policy(
            "kueue",
            KUEUE_NAMESPACE,
            KUEUE_PODS,
            ingress=[{"from": [{"ipBlock": {"cidr": vpc_cidr}}], "ports": tcp}],
            egress=[api_server_egress(vpc_cidr, api_service_ip)],
        ),
    ]


def kueue_values(config: QueuesConfig, *, provisioning: bool) -> dict[str, Any]:
    """Helm values (keys checked in the chart's values.yaml at 0.19.2): the released image at the chart's version,
    two replicas on the system nodes at the cluster-critical class (its webhooks fail closed, so one replica
    down must not stop team jobs), and the platform's Configuration. `provisioning`: the stack serves the
    ProvisioningRequest API (it has multi-node pools), which Kueue must find when it starts."""
    return {
        "controllerManager": {
            "manager": {
                **({"podAnnotations": {PROVISIONING_ANNOTATION: "served"}} if provisioning else {}),
                "priorityClassName": CLUSTER_CRITICAL,
                "image": {"repository": KUEUE_IMAGE, "tag": f"v{config.kueue_version}", "pullPolicy": "IfNotPresent"},
                "resources": ADDON_RESOURCES["kueue"],
            },
            "replicas": 2,
            "nodeSelector": dict(SYSTEM_NODE_SELECTOR),
            "tolerations": SYSTEM_TOLERATIONS,
            "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            "featureGates": [{"name": ELASTIC_JOBS, "enabled": False}],
        },
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(kueue_configuration(config), sort_keys=False)},
    }


def kueue_configuration(config: QueuesConfig) -> dict[str, Any]:
    """Kueue's Configuration (config.kueue.x-k8s.io/v1beta2, as the chart's managerConfig): jobs in team
    namespaces are Kueue's even without a queue name (suspended until one is given), gangs are admitted whole,
    only the job kinds teams submit are integrated, and quotas count GPUs only."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "manageJobsWithoutQueueName": True,
        "managedJobsNamespaceSelector": {"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]},
        "waitForPodsReady": {
            "timeout": f"{config.gang_timeout_minutes}m",
            "blockAdmission": False,
            "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": config.gang_requeues},
        },
        "integrations": {"frameworks": list(INTEGRATIONS)},
        # The queues hold GPUs only; CPU and memory stay the namespaces' quotas. Kueue's default
        # (BlockUndeclared) leaves every job that requests CPU unadmitted: the real controller said so.
        "resources": {"quotaCheckStrategy": "IgnoreUndeclared"},
    }
