"""What Kueue hands out stays inside what the plan's GPU groups run, and inside each team. Always:

- a ResourceFlavor selects one pool of the plan by its node-group label and gives the pods Kueue admits on it
  that pool's tolerations only (Kueue adds a flavor's tolerations to every pod it admits);
- a ClusterQueue takes LocalQueues from one team's namespaces only (a `namespaceSelector` that is exactly the
  tenant label's value), names flavors of the plan, and counts whole, non-negative GPUs; the teams' nominal
  GPUs on a pool never exceed the pool's GPUs at its group's maximum;
- a LocalQueue points at a ClusterQueue that takes its namespace's team;
- an AdmissionCheck is Kueue's provisioning check, its parameters a ProvisioningRequestConfig of the plan, which
  asks the autoscaler for nodes in one of its classes and rewrites no pod's node selector.

With the stack config (`seedance check`, the pack under `pulumi preview` of this project) the queues are the
config's, exactly: each flavor is the platform's for its pool (`<pool>-<capacity type>` of the pool's class,
its labels, taints and tolerations as the platform builds them, and a multi-node pool's behind the gang
check, `gang_check`, present exactly when the config has such pools, with its network topology where its
types report one); each ClusterQueue is a team's for a class it
has GPUs in, holds exactly that many nominal GPUs over flavors of the team's own pools of that class, with the
cohort, limits, preemption and order the platform gives (components/tenancy/queues.py); each LocalQueue is in
a namespace the config gives the team; none is missing; the pools' nominal GPUs leave serving its share; and
Kueue's release is the pinned chart at the configured version, in its own namespace, with the platform's
values (its Configuration among them)."""

from typing import Any

from components.catalog.instance_types import gpu_instance_types
from components.cluster.provisioning import BEST_EFFORT_ATOMIC, PROVISIONING_CRD_NAME, PROVISIONING_GROUP
from components.compute.labels import (
    CAPACITY_BLOCK_TAG,
    NODE_GROUP_LABEL,
    NODE_GROUP_TAG,
    POOL_TAINT_KEY,
    SYSTEM_TAINT_KEY,
)
from components.plan.resources import (
    ASG,
    HELM_RELEASE,
    K8S_CRD,
    K8S_NAMESPACE,
    KUEUE_ADMISSION_CHECK,
    KUEUE_CLUSTER_QUEUE,
    KUEUE_FLAVOR,
    KUEUE_KINDS,
    KUEUE_LOCAL_QUEUE,
    KUEUE_PROVISIONING_CONFIG,
    KUEUE_TOPOLOGY,
    listed,
    tags_of,
)
from components.plan.unknowns import of_types
from components.tenancy.config import TenantConfig
from components.tenancy.manifests import TENANT_LABEL
from components.tenancy.queues import (
    FLAVOR_ORDER,
    KUEUE_API,
    KUEUE_CHART,
    KUEUE_NAMESPACE,
    PROVISIONING_CONTROLLER,
    Flavor,
    cluster_queue,
    cluster_queue_name,
    gang_check,
    local_queue_name,
    local_queue_spec,
    resource_flavor,
    topology,
)
from policies.framework import Rule
from seedance_client.contract import GPU_RESOURCE

# The classes a provisioning check may ask for: all nodes at once, or a booking of nodes that exist.
PROVISIONING_CLASSES = (BEST_EFFORT_ATOMIC, f"check-capacity.{PROVISIONING_GROUP}")


def _name(resource) -> str:
    return str((resource.props.get("metadata") or {}).get("name"))


def _pool_gpus(resources) -> dict[str, int]:
    """Each pool's GPUs at its main group's maximum (a Capacity Block's group is no flavor's). A group whose
    first override names no type of the table (types chosen by attributes, say) counts no GPUs: its queues
    are then held to nothing, and the budget's rules judge the group itself."""
    found: dict[str, int] = {}
    for group in of_types(resources, ASG):
        tags = tags_of(group) or {}
        pool = tags.get(NODE_GROUP_TAG)
        overrides = ((group.props.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}).get("overrides")
        if pool is None or CAPACITY_BLOCK_TAG in tags or not overrides:
            continue
        first = listed(overrides)[0]
        known = gpu_instance_types().get(str(first.get("instanceType") if isinstance(first, dict) else None))
        gpus = known.gpus if known else 0
        found[pool] = found.get(pool, 0) + (_whole(group.props.get("maxSize")) or 0) * gpus
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


def _whole(value: Any) -> int | None:
    """A count of GPUs as a plan writes one (a JSON number, whole; or its digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value >= 0 and float(value).is_integer():
        return int(value)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _quotas(queue) -> tuple[dict[str, int], list[str]]:
    """A ClusterQueue's nominal GPUs per flavor, and what in it is not a whole, non-negative number of GPUs
    (or covers GPUs under another name)."""
    quotas: dict[str, int] = {}
    problems = []
    for group in listed((queue.props.get("spec") or {}).get("resourceGroups") or []):
        for flavor in listed((group or {}).get("flavors") or []):
            name = str((flavor or {}).get("name"))
            for resource in listed((flavor or {}).get("resources") or []):
                resource_name = str((resource or {}).get("name"))
                value = (resource or {}).get("nominalQuota")
                if resource_name.lower() == GPU_RESOURCE and resource_name != GPU_RESOURCE:
                    problems.append(f"covers {resource_name}, which Kueue counts apart from {GPU_RESOURCE}")
                elif resource_name == GPU_RESOURCE:
                    gpus = _whole(value)
                    if gpus is None:
                        problems.append(f"gives flavor {name} {value!r} GPUs: allowed, a whole number from 0")
                    else:
                        quotas[name] = quotas.get(name, 0) + gpus
    return quotas, problems


QUANTITIES = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _counted(spec: Any) -> Any:
    """A queue's spec with its GPU quantities as counts: the program writes "8" (as the API server returns it),
    a plan file may read back 8 or 8.0; the same count either way."""
    if not isinstance(spec, dict):
        return spec
    groups = []
    for group in listed(spec.get("resourceGroups") or []):
        flavors = []
        for flavor in listed((group or {}).get("flavors") or []) if isinstance(group, dict) else []:
            resources = [
                {k: (_whole(v) if k in QUANTITIES and _whole(v) is not None else v) for k, v in resource.items()}
                if isinstance(resource, dict)
                else resource
                for resource in listed((flavor or {}).get("resources") or [])
            ]
            flavors.append({**flavor, "resources": resources} if isinstance(flavor, dict) else flavor)
        groups.append({**group, "flavors": flavors} if isinstance(group, dict) else group)
    return {**spec, "resourceGroups": groups}


def _structural(resources, pools, flavor_pools, queues, namespaces):
    for flavor in of_types(resources, KUEUE_FLAVOR):
        spec = flavor.props.get("spec") or {}
        pool = (spec.get("nodeLabels") or {}).get(NODE_GROUP_LABEL)
        if pool not in pools:
            yield flavor.urn, f"{flavor.name}: selects no GPU pool of the plan ({NODE_GROUP_LABEL}: {pool})"
            continue
        for toleration in listed(spec.get("tolerations") or []):
            problem = _toleration_problem(toleration, str(pool))
            if problem:
                yield flavor.urn, f"{flavor.name}: gives every pod Kueue admits on it {problem}"
    held: dict[str, int] = {}
    for queue in queues:
        if _team_of_selector((queue.props.get("spec") or {}).get("namespaceSelector")) is None:
            yield (
                queue.urn,
                f"{queue.name}: its namespaceSelector is not one team's ({TENANT_LABEL}: <team>): any namespace's "
                "LocalQueue could spend its quota",
            )
        quotas, problems = _quotas(queue)
        for problem in problems:
            yield queue.urn, f"{queue.name}: {problem}"
        for name, gpus in quotas.items():
            if name not in flavor_pools:
                yield queue.urn, f"{queue.name}: names flavor {name}, which the plan does not make"
            elif flavor_pools[name]:
                held[flavor_pools[name]] = held.get(flavor_pools[name], 0) + gpus
    for pool, gpus in sorted(held.items()):
        if gpus > pools[pool]:
            yield (
                None,
                (
                    f"the teams' nominal GPUs on pool {pool}'s flavors add up to {gpus}, more than the {pools[pool]} "
                    "its group runs at its maximum: Kueue would admit work onto GPUs the decision never buys"
                ),
            )
    teams = {_name(q): _team_of_selector((q.props.get("spec") or {}).get("namespaceSelector")) for q in queues}
    for local in of_types(resources, KUEUE_LOCAL_QUEUE):
        namespace = (local.props.get("metadata") or {}).get("namespace")
        target = str((local.props.get("spec") or {}).get("clusterQueue"))
        if teams.get(target) is None or teams[target] != namespaces.get(namespace):
            yield (
                local.urn,
                f"{local.name}: points namespace {namespace} at ClusterQueue {target}, which is not its team's",
            )


def _checks(resources):
    """Admission checks hold a workload back until their controller says so; one answered by anything but Kueue's
    provisioning controller, or parameters that rewrite pods' node selectors, would place admitted pods."""
    configs = {_name(c): c for c in of_types(resources, KUEUE_PROVISIONING_CONFIG)}
    for check in of_types(resources, KUEUE_ADMISSION_CHECK):
        spec = check.props.get("spec") or {}
        parameters = spec.get("parameters") if isinstance(spec, dict) else None
        parameters = parameters if isinstance(parameters, dict) else {}
        if (
            spec.get("controllerName") != PROVISIONING_CONTROLLER
            or parameters.get("apiGroup") != KUEUE_API.split("/")[0]
            or parameters.get("kind") != "ProvisioningRequestConfig"
            or parameters.get("name") not in configs
        ):
            yield (
                check.urn,
                f"{check.name}: an admission check other than Kueue's provisioning check ({PROVISIONING_CONTROLLER}) "
                "with a ProvisioningRequestConfig of the plan",
            )
    for config in configs.values():
        spec = config.props.get("spec") or {}
        if not isinstance(spec, dict) or spec.get("provisioningClassName") not in PROVISIONING_CLASSES:
            yield config.urn, f"{config.name}: asks for nodes in a class other than {', '.join(PROVISIONING_CLASSES)}"
        elif spec.get("podSetUpdates"):
            yield config.urn, f"{config.name}: rewrites the node selectors of the pods it admits (podSetUpdates)"


def _depths(config) -> dict[str, int]:
    """The config's multi-node pools' topology depths, as counts: the pack's config reaches the engine's policy
    host as JSON numbers, and a Python policy reads them as floats (3.0)."""
    return {pool: layers for pool, depth in config["gang_topologies"].items() if (layers := _whole(depth))}


def _checks_from_config(resources, config):
    """The gang check is exactly the platform's, there exactly when the config has multi-node pools, and so is
    each topology of theirs."""
    built = {(m["kind"], m["metadata"]["name"]): m for m in gang_check()} if config["gang_pools"] else {}
    for layers in set(_depths(config).values()):
        built[("Topology", topology(layers)["metadata"]["name"])] = topology(layers)
    found = set()
    for found_check in of_types(resources, KUEUE_ADMISSION_CHECK, KUEUE_PROVISIONING_CONFIG, KUEUE_TOPOLOGY):
        key = (found_check.type.rsplit(":", 1)[-1], _name(found_check))
        found.add(key)
        if key not in built or found_check.props.get("spec") != built[key]["spec"]:
            yield (
                found_check.urn,
                (
                    f"{found_check.name}: not the gang check or topology the platform builds for the config's "
                    f"multi-node pools ({', '.join(config['gang_pools']) or 'none'})"
                ),
            )
    if config["gang_pools"]:
        crds = {str((r.props.get("metadata") or {}).get("name")) for r in of_types(resources, K8S_CRD)}
        if PROVISIONING_CRD_NAME not in crds:
            built[("CustomResourceDefinition", PROVISIONING_CRD_NAME)] = {}
    for kind, name in sorted(set(built) - found):
        yield None, f"the config has multi-node pools, but the plan has no {kind} {name}: their jobs would never start"


def _from_config(resources, config, pools, flavor_pools, queues):
    """The queues as the stack config derives them (the flavors' sizes aside: they come from the decision)."""
    classes, teams = config["group_classes"], config["teams"]
    gangs, depths = set(config["gang_pools"]), _depths(config)
    offered = [
        Flavor(pool, klass, kind, 0, pool in gangs, depths.get(pool, 0))
        for pool, klass in classes.items()
        for kind in FLAVOR_ORDER[klass]
    ]
    by_name = {f.name: f for f in offered}
    for flavor in of_types(resources, KUEUE_FLAVOR):
        platforms = by_name.get(_name(flavor))
        if platforms is None or flavor.props.get("spec") != resource_flavor(platforms)["spec"]:
            yield flavor.urn, f"{flavor.name}: not a flavor the platform builds for a pool of the stack config"
    expected_queues = {
        cluster_queue_name(team, klass): (team, klass) for team, held in teams.items() for klass in held["gpus"]
    }
    found = set()
    used: dict[str, int] = {}
    for queue in queues:
        name = _name(queue)
        if name not in expected_queues:
            yield queue.urn, f"{queue.name}: {name} is no team's queue for a class the config gives it GPUs in"
            continue
        found.add(name)
        team, klass = expected_queues[name]
        held = teams[team]
        quotas, _ = _quotas(queue)
        own = {f.name for f in offered if f.workload_class == klass and f.pool in held["pools"]}
        if set(quotas) - own:
            yield (
                queue.urn,
                f"{queue.name}: holds flavors {', '.join(sorted(set(quotas) - own))}, not of team {team}'s "
                f"{klass} pools",
            )
        if sum(quotas.values()) != held["gpus"][klass]:
            yield (
                queue.urn,
                (
                    f"{queue.name}: holds {sum(quotas.values())} nominal GPUs; the config gives team {team} "
                    f"{held['gpus'][klass]} {klass} GPUs"
                ),
            )
        tenant = TenantConfig.model_construct(
            name=team, principal_arns=[], gpu_borrowing_limits=held["borrowing"], gpu_lending_limits=held["lending"]
        )
        built = cluster_queue(tenant, klass, quotas, [f for f in offered if f.name in own])
        if _counted(queue.props.get("spec")) != _counted(built["spec"]):
            yield (
                queue.urn,
                (
                    f"{queue.name}: not the queue the platform builds for team {team}'s {klass} GPUs (its cohort, "
                    "selector, limits, preemption or flavor order differ)"
                ),
            )
        for flavor_name, gpus in quotas.items():
            if flavor_pools.get(flavor_name):
                pool = flavor_pools[flavor_name]
                used[pool] = used.get(pool, 0) + gpus
    if config["queues_enabled"]:
        for name in sorted(set(expected_queues) - found):
            yield (
                None,
                f"the config gives team {expected_queues[name][0]} {expected_queues[name][1]} GPUs, but the plan "
                f"has no queue {name}",
            )
    for pool, gpus in sorted(used.items()):
        room = pools.get(pool, 0) - config["served"].get(pool, 0)
        if gpus > room:
            yield (
                None,
                f"the teams' nominal GPUs on pool {pool} ({gpus}) leave serving less than its share: at most {room}",
            )
    yield from _checks_from_config(resources, config)
    namespaces_of = {ns: team for team, held in teams.items() for ns in held["namespaces"]}
    for local in of_types(resources, KUEUE_LOCAL_QUEUE):
        namespace = (local.props.get("metadata") or {}).get("namespace")
        owner = namespaces_of.get(namespace)
        klass = _name(local)
        exact = owner is not None and local.props.get("spec") == local_queue_spec(owner, klass)
        if not exact or klass != local_queue_name(klass):  # its spec whole: a stopPolicy drains the team's jobs
            yield local.urn, f"{local.name}: not a LocalQueue the config gives namespace {namespace}"
    for release in _kueue_releases(resources):
        if str(release.props.get("chart")) != KUEUE_CHART or release.props.get("repositoryOpts"):
            yield (
                release.urn,
                f"{release.name}: Kueue comes from {KUEUE_CHART} as written, with no repository options (another "
                "spelling of its source is judged by its pin, not by the platform's values)",
            )
        if (
            release.props.get("namespace") != KUEUE_NAMESPACE
            or str(release.props.get("version")) != config["kueue_version"]
        ):
            yield (
                release.urn,
                f"{release.name}: Kueue belongs in {KUEUE_NAMESPACE} at version {config['kueue_version']}",
            )
        if release.props.get("values") != config["kueue_values"]:
            yield (
                release.urn,
                f"{release.name}: Kueue's values are not the platform's (its image, placement or Configuration)",
            )


def _kueue_releases(resources) -> list:
    """Every release that installs Kueue, however its chart is spelled: by the chart's last part, its release
    name or its namespace."""
    return [
        r
        for r in of_types(resources, HELM_RELEASE)
        if str(r.props.get("chart")).rstrip("/").rsplit("/", 1)[-1] == "kueue"
        or r.props.get("name") == "kueue"
        or r.props.get("namespace") == KUEUE_NAMESPACE
    ]


def check(resources, config):
    if not of_types(resources, *KUEUE_KINDS) and not _kueue_releases(resources):
        return
    pools = _pool_gpus(resources)
    flavor_pools: dict[str, str | None] = {}
    for flavor in of_types(resources, KUEUE_FLAVOR):
        pool = ((flavor.props.get("spec") or {}).get("nodeLabels") or {}).get(NODE_GROUP_LABEL)
        flavor_pools[_name(flavor)] = pool if pool in pools else None
    queues = of_types(resources, KUEUE_CLUSTER_QUEUE)
    namespaces = {
        (n.props.get("metadata") or {}).get("name"): ((n.props.get("metadata") or {}).get("labels") or {}).get(
            TENANT_LABEL
        )
        for n in of_types(resources, K8S_NAMESPACE)
    }
    yield from _structural(resources, pools, flavor_pools, queues, namespaces)
    yield from _checks(resources)
    if config["from_stack_config"]:
        yield from _from_config(resources, config, pools, flavor_pools, queues)


RULE = Rule(
    name="kubernetes-kueue-queue-restrict-to-decision",
    description="Kueue's flavors select the plan's pools with their own tolerations only; a ClusterQueue serves "
    "one team's namespaces; the teams' nominal GPUs on a pool never exceed what its group runs at its maximum; "
    "with the stack config, the queues and Kueue's release are exactly the config's.",
    severity="critical",
    remediation="Derive the queues from the stack config (components/tenancy/queues.py): one flavor per pool and "
    "capacity type, a ClusterQueue per team and class selecting the team's label, nominal quotas within the pools.",
    topics=("cost", "kubernetes"),
    config={
        "from_stack_config": {"type": "boolean", "default": False},
        "queues_enabled": {"type": "boolean", "default": False},
        "teams": {"type": "object", "default": {}},
        "group_classes": {"type": "object", "default": {}},
        "gang_pools": {"type": "array", "items": {"type": "string"}, "default": []},
        "gang_topologies": {"type": "object", "default": {}},
        "served": {"type": "object", "default": {}},
        "kueue_version": {"type": "string", "default": ""},
        "kueue_values": {"type": "object", "default": {}},
    },
    check_stack=check,
    standards=("Kueue: ClusterQueue namespaceSelector, ResourceFlavor tolerations",),
)
