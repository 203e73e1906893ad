"""Who yields to whom: the platform's add-ons above every class a tenant may use, serving preempts batch,
batch preempts nothing. Pure."""

from __future__ import annotations

from components.common.manifests import Manifest, metadata

# One class per workload class; pods name theirs (Triton online, training batch), and a team's quota per
# class is scoped by it (components/tenancy/manifests.py).
PRIORITY_CLASS = {"online": "seedance-online", "batch": "seedance-batch"}
# The platform's own add-ons (Prometheus, OpenCost, Grafana, the adapter...): above every class a tenant may
# name, so no team's pod preempts them. The critical ones run at Kubernetes' built-in classes instead.
PLATFORM_PRIORITY_CLASS = "seedance-platform"
CLUSTER_CRITICAL = "system-cluster-critical"  # built in: the autoscaler, the resource and custom metrics APIs
NODE_CRITICAL = "system-node-critical"  # built in: node agents (device plugin, local volumes, drains)
# Classes a tenant's pods may never name (a zero-pod quota in every tenant namespace says so too).
PLATFORM_CLASSES = (PLATFORM_PRIORITY_CLASS, CLUSTER_CRITICAL, NODE_CRITICAL)
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
