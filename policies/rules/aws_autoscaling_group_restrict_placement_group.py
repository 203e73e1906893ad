"""A group launches into a cluster placement group only where the platform puts one: an EFA pool's own group,
outside any capacity reservation, in a placement group of the plan whose strategy is `cluster`. A serving
pool put there would leave its zones for one rack's worth of capacity; a group that launches into On-Demand
Capacity Reservations or a Capacity Block would have EC2 refuse launches the reservation would serve
(AWS ParallelCluster's placement-group validator; terraform-aws-eks PR #3730). A launch template places
nothing itself (`placement`): the platform sets none, a placement group named there escapes the group's
checks, and a dedicated tenancy is billed at a premium the estimate does not price."""

from components.compute.labels import CAPACITY_BLOCK_TAG, EFA_LABEL
from components.plan.resources import ASG, LAUNCH_TEMPLATE, PLACEMENT_GROUP, tags_of
from components.plan.unknowns import of_types
from policies.framework import Rule

EFA_TAG = f"k8s.io/cluster-autoscaler/node-template/label/{EFA_LABEL}"


def _problem(group, placements: dict) -> str | None:
    name = group.props.get("placementGroup")
    tags = tags_of(group) or {}
    if name not in placements:
        return f"launches into placement group {name!r}, which the plan does not declare"
    if placements[name] != "cluster":
        return f"launches into placement group {name}, whose strategy is {placements[name]!r}, not cluster"
    if tags.get(EFA_TAG) != "true":
        return f"launches into placement group {name}, but it is no EFA pool's group (only those need one)"
    if CAPACITY_BLOCK_TAG in tags or group.props.get("capacityReservationSpecification"):
        return f"launches into placement group {name} and into reserved capacity, which EC2 then cannot use"
    return None


def check(resources, _config):
    for template in of_types(resources, LAUNCH_TEMPLATE):
        placement = template.props.get("placement")
        if placement:
            fields = ", ".join(sorted(placement)) if isinstance(placement, dict) else str(placement)
            yield (
                template.urn,
                f"{template.name}: places its instances itself ({fields}); the platform's templates do not",
            )
    placements = {p.props.get("name"): p.props.get("strategy") for p in of_types(resources, PLACEMENT_GROUP) if p.props}
    for group in of_types(resources, ASG):
        if group.props.get("placementGroup") is None:
            continue
        problem = _problem(group, placements)
        if problem:
            yield group.urn, f"{group.name}: {problem}"


RULE = Rule(
    name="aws-autoscaling-group-restrict-placement-group",
    description="Only an EFA pool's own group, outside reserved capacity, launches into a placement group, and "
    "only into a cluster placement group of the plan.",
    severity="high",
    remediation="Set placement_group on the EFA pool in the stack config (components/compute/config.py); never "
    "on a pool with capacity reservations or on its Capacity Blocks' groups.",
    topics=("cost", "reliability"),
    check_stack=check,
)
