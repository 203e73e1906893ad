"""A PodDisruptionBudget leaves room to evict one pod: `maxUnavailable` above zero (a count, or a percentage
above 0 %), or a `minAvailable` below the fewest pods the workloads it selects run together (each one's
`replicas`, or its autoscaler's `minReplicas`: a budget counts every pod it selects). A budget that allows
no eviction makes its pods' nodes undrainable: the cluster autoscaler never removes them (GPU nodes kept
at full price), node refreshes and Capacity Block or spot drains stall until their hooks time out. A
`minAvailable` count over workloads the plan does not hold is not judged (what it selects runs elsewhere);
a percentage of 100 % is refused wherever it is."""

import re

from components.plan.resources import K8S_DEPLOYMENT, K8S_HPA, K8S_PDB, K8S_STATEFUL_SET
from components.plan.unknowns import of_types
from policies.framework import Rule

_PERCENT = re.compile(r"^([0-9]+)%$")


def _no_room(value, at_most: bool) -> bool:
    """Whether a budget value leaves no eviction: `maxUnavailable` 0 or 0 % (`at_most`), `minAvailable` 100 %."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return at_most and value <= 0
    match = _PERCENT.match(str(value).strip())
    if match is None:
        return at_most and str(value).strip().isdigit() and int(value) == 0
    return int(match.group(1)) <= 0 if at_most else int(match.group(1)) >= 100


def _selected(budget, workloads):
    """The workloads of the budget's namespace whose pod template labels its `matchLabels` select."""
    selector = (budget.props.get("spec") or {}).get("selector") or {}
    wanted = selector.get("matchLabels") or {}
    namespace = (budget.props.get("metadata") or {}).get("namespace")
    if not wanted or selector.get("matchExpressions"):
        return []
    found = []
    for workload in workloads:
        if (workload.props.get("metadata") or {}).get("namespace") != namespace:
            continue
        labels = (
            (((workload.props.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
        ) or {}
        if all(labels.get(k) == v for k, v in wanted.items()):
            found.append(workload)
    return found


def _fewest(workload, autoscalers) -> int:
    """The fewest replicas a workload runs: its autoscaler's minimum when one targets it, else its own."""
    name = (workload.props.get("metadata") or {}).get("name")
    for autoscaler in autoscalers:
        spec = autoscaler.props.get("spec") or {}
        target = spec.get("scaleTargetRef") or {}
        if target.get("name") == name and target.get("kind") in ("Deployment", "StatefulSet"):
            return int(spec.get("minReplicas", 1))  # a plan's numbers may arrive as floats
    return int((workload.props.get("spec") or {}).get("replicas", 1))


def check(resources, config):
    workloads = of_types(resources, K8S_DEPLOYMENT, K8S_STATEFUL_SET)
    autoscalers = of_types(resources, K8S_HPA)
    for budget in of_types(resources, K8S_PDB):
        spec = budget.props.get("spec") or {}
        if "maxUnavailable" in spec and _no_room(spec["maxUnavailable"], at_most=True):
            yield budget.urn, f"{budget.name}: maxUnavailable {spec['maxUnavailable']!r} allows no eviction"
        minimum = spec.get("minAvailable")
        if minimum is None:
            continue
        if _no_room(minimum, at_most=False):
            yield budget.urn, f"{budget.name}: minAvailable {minimum!r} allows no eviction"
        elif isinstance(minimum, int | float) and not isinstance(minimum, bool):
            selected = _selected(budget, workloads)
            fewest = sum(_fewest(workload, autoscalers) for workload in selected)
            if selected and minimum >= fewest:
                names = ", ".join(w.name for w in selected)
                yield (
                    budget.urn,
                    f"{budget.name}: minAvailable {minimum:g} of the {fewest} pods its workloads ({names}) run at "
                    "their fewest: no eviction at that size",
                )


RULE = Rule(
    name="kubernetes-pdb-require-eviction-room",
    description="A PodDisruptionBudget allows at least one eviction: nodes stay drainable and scale down.",
    severity="high",
    remediation="Use maxUnavailable: 1 (as Triton's budget does), or a minAvailable below the workload's fewest "
    "replicas.",
    topics=("cost", "kubernetes"),
    check_stack=check,
    standards=("Kubernetes: Specifying a Disruption Budget for your Application", "EKS BPG: Cluster Autoscaler"),
)
