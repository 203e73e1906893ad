"""A team's namespaces as plain manifests: Pod Security baseline, default deny with the allows a team
needs, a quota on GPUs per workload class and on CPU and memory, and default requests. Pure."""

from __future__ import annotations

from components.common.manifests import (NAMESPACE_NAME_LABEL, Manifest, admission_policy, metadata, namespace,
                                         namespace_baseline, network_policy)
from components.compute.priority import PRIORITY_CLASS
from components.tenancy.config import TenantConfig

TENANT_LABEL = "seedance.io/tenant"
GPU = "requests.nvidia.com/gpu"


def _quotas(tenant: TenantConfig, name: str) -> list[Manifest]:
    """The namespace's total, and per workload class by the pods' priority class: a pod naming no class
    falls under the total only, which holds every GPU the team has."""
    total = {"requests.cpu": str(tenant.cpu), "requests.memory": f"{tenant.memory_gib}Gi",
             GPU: str(sum(tenant.gpus.values()))}
    quotas = [{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": metadata(f"{tenant.name}-total", name),
               "spec": {"hard": total}}]
    for klass, count in sorted(tenant.gpus.items()):
        quotas.append({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": metadata(f"{tenant.name}-{klass}", name),
                       "spec": {"hard": {GPU: str(count)}, "scopeSelector": {"matchExpressions": [
                           {"scopeName": "PriorityClass", "operator": "In", "values": [PRIORITY_CLASS[klass]]}]}}})
    return quotas


def _defaults(tenant: TenantConfig, name: str) -> Manifest:
    """Requests for a container that states none (a quota refuses such pods otherwise)."""
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": metadata(f"{tenant.name}-defaults", name),
            "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
                                 "default": {"cpu": "1", "memory": "2Gi"}}]}}


def tenant_manifests(tenant: TenantConfig, triton_namespaces: dict[str, list[str]]) -> list[Manifest]:
    """Every namespace of the team. `triton_namespaces`: per team namespace, the serving sets' namespaces
    that list it as a client, which its egress must reach on the inference ports (and only its)."""
    objects: list[Manifest] = []
    for name in tenant.namespace_names:
        calls = triton_namespaces.get(name, [])
        ns = namespace(name, "baseline")
        ns["metadata"]["labels"][TENANT_LABEL] = tenant.name
        egress = [{"to": [{"podSelector": {}}]}, {"ports": [{"port": 443, "protocol": "TCP"}]}]
        if calls:
            egress.append({"to": [{"namespaceSelector": {"matchExpressions": [
                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(calls)}]}}],
                "ports": [{"port": 8000, "protocol": "TCP"}, {"port": 8001, "protocol": "TCP"}]})
        team = network_policy(tenant.name, name, {}, ingress=[{"from": [{"podSelector": {}}]}], egress=egress)
        objects += [ns, *namespace_baseline(name), team, *_quotas(tenant, name), _defaults(tenant, name)]
    return objects


COST_LABEL_POLICY = "seedance-tenant-cost-labels"


def tenant_cost_label_policy() -> list[Manifest]:
    """A tenant's pods say whose they are: `team` equals the tenant of their namespace, so no team can
    move its cost to another's by labelling its pods (OpenCost and the cost dashboards group by it)."""
    return admission_policy(
        COST_LABEL_POLICY,
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}],
        [{"expression": f"has(object.metadata.labels) && 'team' in object.metadata.labels && "
                        f"object.metadata.labels['team'] == namespaceObject.metadata.labels['{TENANT_LABEL}']",
          "message": "a tenant's pods carry team=<their tenant> (the cost label the platform attributes by)"}],
        namespace_selector={"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]})
