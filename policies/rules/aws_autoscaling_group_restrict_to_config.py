"""A pool's Auto Scaling group is what the stack config gives it. The budget prices a group at its desired
capacity and the queues hand out GPUs up to its maximum; the types, the bounds and the processes of the
group decide what can actually run:

- always: a group suspends no process but the platform's (`AZRebalance`, components/compute/rollout.py):
  a suspended Terminate or Launch leaves drained nodes billed, or none launched; and no group recycles its
  instances on a lifetime (`maxInstanceLifetime`), which would restart gangs and serving alike;
- with the stack config: each pool's main group (its node-group tag; a Capacity Block's group is judged by
  the spot-share rule) belongs to a pool of the config, launches exactly the config's instance types, and
  holds the config's minimum and maximum in instances (`min_gpus`, `max_gpus` over the GPUs per instance): a
  p5 added to a g6e pool, or a maximum raised, runs what the decision never priced; and its scale-from-zero
  template (the `k8s.io/cluster-autoscaler/node-template/` tags: labels, taints, resources) is exactly what the
  config's nodes have: a template promising 8 GPUs on 4-GPU nodes makes the autoscaler launch nodes a gang
  never fits, another class's label makes it scale the wrong pool (issue 49's review, E14)."""

from typing import Any

from components.compute.asg import NODE_TEMPLATE_PREFIX
from components.compute.labels import CAPACITY_BLOCK_TAG, NODE_GROUP_TAG
from components.compute.rollout import SUSPENDED_PROCESSES
from components.plan.resources import ASG, listed, tags_of
from components.plan.unknowns import of_types
from policies.framework import Rule


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        return None
    return int(value)


def _types(group) -> list[str]:
    launch = ((group.props.get("mixedInstancesPolicy") or {}).get("launchTemplate") or {}) if group.props else {}
    overrides = launch.get("overrides") if isinstance(launch, dict) else None
    return sorted(str(o.get("instanceType")) for o in listed(overrides or []) if isinstance(o, dict))


def check(resources, config):
    pools = config["pools"]
    for group in of_types(resources, ASG):
        suspended = [p for p in listed(group.props.get("suspendedProcesses") or []) if p not in SUSPENDED_PROCESSES]
        if suspended:
            yield group.urn, f"{group.name}: suspends {', '.join(map(str, suspended))}: allowed, AZRebalance only"
        if group.props.get("maxInstanceLifetime"):
            yield group.urn, f"{group.name}: replaces its instances after {group.props['maxInstanceLifetime']} s"
        tags = tags_of(group) or {}
        pool = tags.get(NODE_GROUP_TAG)
        if not config["from_stack_config"] or pool is None or CAPACITY_BLOCK_TAG in tags:
            continue
        if pool not in pools:
            yield group.urn, f"{group.name}: a group of pool {pool}, which the stack config does not have"
            continue
        given = pools[pool]
        if _types(group) != sorted(given["instance_types"]):
            yield (
                group.urn,
                (
                    f"{group.name}: launches {', '.join(_types(group)) or 'no listed type'}; the stack config gives "
                    f"pool {pool} {', '.join(sorted(given['instance_types']))}"
                ),
            )
        template = {k: str(v) for k, v in tags.items() if str(k).startswith(NODE_TEMPLATE_PREFIX)}
        expected = given.get("node_template")
        if expected is not None and template != expected:
            wrong = sorted(k for k in {*template, *expected} if template.get(k) != expected.get(k))
            said = "; ".join(
                f"{k[len(NODE_TEMPLATE_PREFIX) :]} = {template.get(k)!r}, not {expected.get(k)!r}" for k in wrong
            )
            yield group.urn, f"{group.name}: its scale-from-zero template is not its nodes': {said}"
        for key, field in (("minSize", "min_size"), ("maxSize", "max_size")):
            if _count(group.props.get(key)) != _count(given[field]):
                yield (
                    group.urn,
                    (
                        f"{group.name}: {key} {group.props.get(key)}; the stack config gives pool {pool} "
                        f"{_count(given[field])} instances"
                    ),
                )


RULE = Rule(
    name="aws-autoscaling-group-restrict-to-config",
    description="No group suspends a process but AZRebalance or recycles instances on a lifetime; with the "
    "stack config, each pool's group launches the config's types within the config's bounds, and its "
    "scale-from-zero template is its nodes'.",
    severity="critical",
    remediation="Change a pool through the stack config (gpu_node_groups[]) and let the program build its group.",
    topics=("cost",),
    config={
        "from_stack_config": {"type": "boolean", "default": False},
        # pool -> {"instance_types": [...], "min_size": n, "max_size": n (instances), "node_template": {tag: value}}
        "pools": {"type": "object", "default": {}},
    },
    check_stack=check,
    standards=("AWS Well-Architected: Cost Optimization - COST06 (meet, not exceed, needs)",),
)
