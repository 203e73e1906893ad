"""What the platform's admission holds a team's pods to, written once. Pure.

The platform declares it as a ValidatingAdmissionPolicy per team (its CEL, `pod_policy`, used by
components/tenancy/manifests.py); a team's `seedance check` judges its plan with the same rules in Python
(`pod_refusals`), from what the platform contract says of the team. Both come from one `PodRules` and say
the same messages; tests run both over the same pods (tests/seedance_client/test_pod_admission.py, with
cel-python, and tests/engines/test_tenants.py, with the real API server).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# System nodes repel every pod but the platform's add-ons: the key EKS's own add-ons (CoreDNS, the EBS CSI
# controller) already tolerate.
SYSTEM_TAINT_KEY = "CriticalAddonsOnly"
# Each GPU pool repels every pod that does not name it (the taint's value is the pool's name).
POOL_TAINT_KEY = "seedance.io/pool"
# The platform's own add-ons run at a class above every class a team may name; the critical ones at
# Kubernetes' built-in classes. No team's pod may name these (a zero-pod quota in every team namespace says
# so too).
PLATFORM_PRIORITY_CLASS = "seedance-platform"
CLUSTER_CRITICAL = "system-cluster-critical"
NODE_CRITICAL = "system-node-critical"
PLATFORM_CLASSES = (PLATFORM_PRIORITY_CLASS, CLUSTER_CRITICAL, NODE_CRITICAL)


def quota_classes(gpus: Mapping[str, int]) -> list[str]:
    """The workload classes whose priority class a team's pods may name: those its quota gives GPUs (a class
    at 0 would let CPU pods preempt other teams' batch pods at serving priority)."""
    return sorted(klass for klass, count in gpus.items() if count > 0)


@dataclass(frozen=True)
class PodRules:
    """One team's pod rules. `priority_classes`: the PriorityClass of each workload class (the platform's);
    `classes`: the workload classes its pods may run at; `pools`: each GPU pool its pods may tolerate, with
    the pool's workload class. An online pod tolerates only online pools, any other only the rest."""

    team: str
    priority_classes: Mapping[str, str]
    classes: tuple[str, ...]
    pools: Mapping[str, str]

    @property
    def class_names(self) -> list[str]:
        return [self.priority_classes[k] for k in self.classes if k in self.priority_classes]

    @property
    def online(self) -> str | None:
        return self.priority_classes.get("online")

    def pools_for(self, priority_class: Any) -> list[str]:
        """The pools a pod of this priority class may tolerate."""
        online = priority_class is not None and priority_class == self.online
        return sorted(p for p, klass in self.pools.items() if (klass == "online") == online)

    def class_message(self) -> str:
        allowed = ", ".join(self.class_names) or "none (no GPU quota)"
        return f"team {self.team}'s pods name a priority class its GPU quota covers: {allowed}"

    def toleration_message(self) -> str:
        pools = {k: ", ".join(sorted(p for p, c in self.pools.items() if c == k)) for k in set(self.pools.values())}
        by_class = "; ".join(f"{self.priority_classes.get(k, k)}: {pools[k]}" for k in sorted(pools))
        return (
            f"team {self.team}'s pods tolerate only its pools of their class ({by_class}): no wildcard toleration, "
            f"no {SYSTEM_TAINT_KEY}, no other {POOL_TAINT_KEY}"
        )


NODE_NAME_MESSAGE = "a team's pod is placed by the scheduler (which keeps the pools' taints), never by spec.nodeName"


def cel_list(values: list[str]) -> str:
    """A CEL list literal of strings."""
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def pod_policy(rules: PodRules) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The policy's variables and validations (CEL, as the API server evaluates them on a pod's CREATE and
    UPDATE). On an update only what changes is judged: a controller removing a finalizer from a pod made
    before this policy must pass (a pod's tolerations may only grow, and its class never changes)."""
    pool_values = (
        f"((has(object.spec.priorityClassName) && object.spec.priorityClassName == {json.dumps(rules.online)}) "
        f"? {cel_list(rules.pools_for(rules.online))} : {cel_list(rules.pools_for(None))})"
    )
    variables = [
        {"name": "tolerations", "expression": "has(object.spec.tolerations) ? object.spec.tolerations : []"},
        {
            "name": "before",
            "expression": "request.operation == 'UPDATE' && "
            "has(oldObject.spec.tolerations) ? oldObject.spec.tolerations : []",
        },
    ]
    tolerations = (
        "variables.tolerations.all(t, variables.before.exists(o, o == t) || ("
        f"has(t.key) && t.key != '' && t.key != {json.dumps(SYSTEM_TAINT_KEY)} && "
        f"(t.key != {json.dumps(POOL_TAINT_KEY)} || ((!has(t.operator) || t.operator == 'Equal') && "
        f"has(t.value) && t.value in {pool_values}))))"
    )
    validations = [
        {
            "expression": f"request.operation != 'CREATE' || (has(object.spec.priorityClassName) && "
            f"object.spec.priorityClassName in {cel_list(rules.class_names)})",
            "message": rules.class_message(),
        },
        {"expression": tolerations, "message": rules.toleration_message()},
        {
            "expression": "request.operation != 'CREATE' || !has(object.spec.nodeName) || object.spec.nodeName == ''",
            "message": NODE_NAME_MESSAGE,
        },
    ]
    return variables, validations


# A team's pods carry `team: <their tenant>`, the label the platform attributes cost by (OpenCost and the cost
# dashboards group by it), so no team can move its cost to another's.
COST_LABEL = "team"
COST_LABEL_MESSAGE = f"a tenant's pods carry {COST_LABEL}=<their tenant> (the cost label the platform attributes by)"


def cost_label_validation(tenant_label: str) -> dict[str, str]:
    """The cost label policy's validation: the pod's label equals its namespace's tenant label."""
    label, tenant = json.dumps(COST_LABEL), json.dumps(tenant_label)
    return {
        "expression": f"has(object.metadata.labels) && {label} in object.metadata.labels && "
        f"object.metadata.labels[{label}] == namespaceObject.metadata.labels[{tenant}]",
        "message": COST_LABEL_MESSAGE,
    }


def cost_label_refusals(team: str, pod_labels: Any) -> list[str]:
    """What the cost label policy says of a pod of `team`'s namespace carrying `pod_labels`."""
    return [] if isinstance(pod_labels, Mapping) and pod_labels.get(COST_LABEL) == team else [COST_LABEL_MESSAGE]


def _has(mapping: Mapping[str, Any], key: str) -> bool:
    """CEL's `has()` on a field as the API server stores it: a null field, or an empty string (the pod's
    string fields are `omitempty`: `operator: ""` is stored as no operator), is not there."""
    return mapping.get(key) not in (None, "")


def _toleration_allowed(rules: PodRules, toleration: Any, priority_class: Any) -> bool:
    if not isinstance(toleration, Mapping):
        return False
    key = toleration.get("key")
    if not _has(toleration, "key") or key == "" or key == SYSTEM_TAINT_KEY:
        return False
    if key != POOL_TAINT_KEY:
        return True
    operator_ok = not _has(toleration, "operator") or toleration.get("operator") == "Equal"
    return operator_ok and _has(toleration, "value") and toleration.get("value") in rules.pools_for(priority_class)


def pod_refusals(rules: PodRules, spec: Mapping[str, Any]) -> list[str]:
    """The messages the team's pod policy denies a pod's creation with (`spec`: the pod's spec), in the
    policy's order; none when the API server would admit it."""
    priority = spec.get("priorityClassName")
    refusals = []
    if not _has(spec, "priorityClassName") or priority not in rules.class_names:
        refusals.append(rules.class_message())
    tolerations = spec.get("tolerations") or []
    if not isinstance(tolerations, list) or not all(_toleration_allowed(rules, t, priority) for t in tolerations):
        refusals.append(rules.toleration_message())
    if spec.get("nodeName"):
        refusals.append(NODE_NAME_MESSAGE)
    return refusals
