"""A team's program fits the platform it reads (its StackReference's contract): every object sits in a
namespace a team owns and carries that team's `team` label, its pods name a priority class the platform
has and run on a pool whose workload class the team has GPUs for. `seedance check` fills the config from
the contract of each platform stack the plan references; a platform's own plan references none."""

from components.plan.resources import pod_spec
from components.compute.labels import NODE_GROUP_LABEL
from policies.framework import Rule


def check(resource, config):
    owners = config["tenant_namespaces"]
    if not owners or not resource.type.startswith("kubernetes:"):
        return  # a platform's own plan: it references no contract
    metadata = resource.props.get("metadata") or {}
    namespace = metadata.get("namespace")
    if not namespace:
        return
    owner = owners.get(namespace)
    label = (metadata.get("labels") or {}).get("team")
    if owner is None:
        yield f"{resource.name}: namespace {namespace} belongs to no team of the platform ({', '.join(sorted(set(owners.values())))})"
        return
    if label != owner:
        yield f"{resource.name}: labelled team {label!r} in namespace {namespace}, which is team {owner!r}'s"
    spec = pod_spec(resource)
    if spec is None:
        return
    priority = spec.get("priorityClassName")
    if priority is not None and priority not in config["priority_classes"]:
        yield f"{resource.name}: priority class {priority!r} is not one the platform has ({', '.join(config['priority_classes'])})"
    pool = (spec.get("nodeSelector") or {}).get(NODE_GROUP_LABEL)
    if pool is not None:
        klass = config["pool_classes"].get(pool)
        if klass is None:
            yield f"{resource.name}: selects pool {pool!r}, which the platform does not have"
        elif klass not in config["team_classes"].get(owner, []):
            yield f"{resource.name}: runs on pool {pool!r} ({klass}), where team {owner!r} has no GPUs"


RULE = Rule(
    name="kubernetes-tenant-require-contract-fit",
    description="A team's objects live in its own namespaces with its team label, name the platform's priority "
                "classes and run on pools the team has GPUs in.",
    severity="high",
    remediation="Take namespace, labels, priority class and node selector from the contract (PlatformReference): "
                "the team's namespaces (contract tenants), cost_label_keys, priority_classes, pool(...).",
    topics=("tenancy", "kubernetes"),
    config={"tenant_namespaces": {"type": "object", "default": {}},
            "priority_classes": {"type": "array", "items": {"type": "string"}, "default": []},
            "pool_classes": {"type": "object", "default": {}},
            "team_classes": {"type": "object", "default": {}}},
    check_resource=check,
)
