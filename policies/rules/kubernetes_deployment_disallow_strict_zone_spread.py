"""No zone spread of maxSkew 1 with DoNotSchedule: on mixed GPU nodes it leaves pods Pending (the source)."""

from components.plan.resources import POD_CARRIERS, pod_spec
from policies.framework import Rule


def check(resource, config):
    for constraint in (pod_spec(resource) or {}).get("topologySpreadConstraints", []):
        if (
            constraint.get("topologyKey") == "topology.kubernetes.io/zone"
            and constraint.get("maxSkew") == 1
            and constraint.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
        ):
            yield f"{resource.name} spreads over zones with maxSkew 1 and DoNotSchedule; use maxSkew 2, ScheduleAnyway"


RULE = Rule(
    name="kubernetes-deployment-disallow-strict-zone-spread",
    description="Zone spread constraints are not maxSkew 1 with DoNotSchedule.",
    severity="medium",
    remediation="Use maxSkew: 2 and whenUnsatisfiable: ScheduleAnyway, with the Descheduler to rebalance.",
    topics=("kubernetes", "reliability"),
    check_resource=check,
    resource_types=frozenset(POD_CARRIERS),
)
