"""Who yields to whom on the GPU pools: serving preempts batch, batch preempts nothing. Pure."""

from __future__ import annotations

from components.common.manifests import Manifest, metadata

# One class per workload class; pods name theirs (Triton online, training batch), and a team's quota per
# class is scoped by it (components/tenancy/manifests.py).
PRIORITY_CLASS = {"online": "seedance-online", "batch": "seedance-batch"}
_SETTINGS = {"online": (100_000, "PreemptLowerPriority", "Serving: may preempt batch pods for capacity."),
             "batch": (1_000, "Never", "Batch training: runs on what is free and never preempts.")}


def priority_classes() -> list[Manifest]:
    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": metadata(name),
             "value": _SETTINGS[klass][0], "preemptionPolicy": _SETTINGS[klass][1], "globalDefault": False,
             "description": _SETTINGS[klass][2]}
            for klass, name in PRIORITY_CLASS.items()]
