"""Who yields to whom: the platform's add-ons above every class a tenant may use, serving preempts batch,
batch preempts nothing. Pure."""

from __future__ import annotations

from components.common.manifests import Manifest, metadata
from seedance_client.pod_admission import CLUSTER_CRITICAL as CLUSTER_CRITICAL
from seedance_client.pod_admission import NODE_CRITICAL as NODE_CRITICAL
from seedance_client.pod_admission import PLATFORM_CLASSES as PLATFORM_CLASSES
from seedance_client.pod_admission import PLATFORM_PRIORITY_CLASS as PLATFORM_PRIORITY_CLASS

# One class per workload class; pods name theirs (Triton online, training batch), and a team's quota per
# class is scoped by it (components/tenancy/manifests.py).
PRIORITY_CLASS = {"online": "seedance-online", "batch": "seedance-batch"}
# The platform's own add-ons (Prometheus, OpenCost, Grafana, the adapter...) run at PLATFORM_PRIORITY_CLASS,
# above every class a tenant may name, so no team's pod preempts them; the critical ones at Kubernetes'
# built-in classes (CLUSTER_CRITICAL: the autoscaler, the metrics APIs; NODE_CRITICAL: node agents). A team's
# pods may name none of PLATFORM_CLASSES (defined with the teams' pod rules, which the client reads too).
_SETTINGS = {
    "online": (100_000, "PreemptLowerPriority", "Serving: may preempt batch pods for capacity."),
    "batch": (1_000, "Never", "Batch training: runs on what is free and never preempts."),
}
_PLATFORM = (1_000_000, "PreemptLowerPriority", "The platform's add-ons: above every class a tenant may use.")


def priority_classes() -> list[Manifest]:
    settings = {
        **{name: _SETTINGS[klass] for klass, name in PRIORITY_CLASS.items()},
        PLATFORM_PRIORITY_CLASS: _PLATFORM,
    }
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": metadata(name),
            "value": value,
            "preemptionPolicy": preemption,
            "globalDefault": False,
            "description": description,
        }
        for name, (value, preemption, description) in settings.items()
    ]
