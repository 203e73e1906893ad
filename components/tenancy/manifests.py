"""A team's namespaces as plain manifests: Pod Security baseline, default deny with the allows a team
needs, a quota on GPUs per workload class and on CPU and memory, default requests, the team's RBAC, and
the admission policies that keep a team inside them. Pure.

A team's people get no EKS access policy (EKS's edit policy lets them delete their NetworkPolicies,
create LoadBalancer Services and impersonate service accounts): their access entry puts them in a
Kubernetes group of their own, bound in their namespaces only to the `seedance-tenant` ClusterRole below.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from components.common.manifests import (
    NAMESPACE_NAME_LABEL,
    Manifest,
    admission_policy,
    metadata,
    namespace,
    namespace_baseline,
    network_policy,
)
from components.compute.priority import PLATFORM_CLASSES, PRIORITY_CLASS
from components.tenancy.config import TenantConfig
from seedance_client.pod_admission import PodRules, cel_list, cost_label_validation, pod_policy

TENANT_LABEL = "seedance.io/tenant"
GPU = "requests.nvidia.com/gpu"
TENANT_ROLE = "seedance-tenant"
# Kubernetes groups of the teams' people (their access entries' kubernetes_groups): what RBAC binds and
# what the admission policies recognise a team's own request by.
TENANT_GROUP_PREFIX = "seedance-tenant-"
# What a team may see of the Triton sets it publishes to: whether its model loaded, and why not.
OBSERVER_ROLE = "seedance-tenant-observer"
# The one role a team holds cluster-wide: reading the classes its objects name.
CLUSTER_READER_ROLE = "seedance-tenant-cluster-reader"
_CRUD = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
_READ = ["get", "list", "watch"]


def tenant_group(tenant: str) -> str:
    return f"{TENANT_GROUP_PREFIX}{tenant}"


def tenant_role() -> Manifest:
    """What a team may do in its namespaces: run and debug its workloads, keep their config and secrets,
    read everything else there. Not: NetworkPolicies, quotas, limit ranges or RBAC (the platform's
    isolation), Endpoints (a Service pointed anywhere), DaemonSets, impersonation or service account tokens."""

    def rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, list[str]]:
        return {"apiGroups": groups, "resources": resources, "verbs": verbs}

    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(TENANT_ROLE),
        "rules": [
            rule(
                [""], ["pods", "configmaps", "secrets", "persistentvolumeclaims", "services", "serviceaccounts"], _CRUD
            ),
            rule([""], ["pods/exec", "pods/attach", "pods/portforward", "pods/eviction"], ["create", "get"]),
            rule(
                [""],
                [
                    "pods/log",
                    "pods/status",
                    "events",
                    "endpoints",
                    "resourcequotas",
                    "limitranges",
                    "persistentvolumeclaims/status",
                    "services/status",
                ],
                _READ,
            ),
            rule(["apps"], ["deployments", "statefulsets", "replicasets"], _CRUD),
            rule(
                ["apps"], ["deployments/scale", "statefulsets/scale", "replicasets/scale"], ["get", "update", "patch"]
            ),
            rule(["apps"], ["daemonsets", "controllerrevisions"], _READ),
            rule(["batch"], ["jobs", "cronjobs"], _CRUD),
            rule(["autoscaling"], ["horizontalpodautoscalers"], _CRUD),
            rule(["policy"], ["poddisruptionbudgets"], _CRUD),
            rule(["networking.k8s.io"], ["networkpolicies"], _READ),
            rule(["discovery.k8s.io"], ["endpointslices"], _READ),
            rule(["metrics.k8s.io"], ["pods"], _READ),
        ],
    }


def observer_role() -> Manifest:
    """Read-only, in the Triton namespaces of the sets a team publishes to: pods, their logs and events, the
    Deployments (model load state, a failed load's reason). No Secrets, no exec."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(OBSERVER_ROLE),
        "rules": [
            {"apiGroups": [""], "resources": ["pods", "pods/log", "events", "services"], "verbs": _READ},
            {"apiGroups": ["apps"], "resources": ["deployments", "replicasets"], "verbs": _READ},
        ],
    }


def cluster_reader_role() -> Manifest:
    """What a team reads outside its namespaces: the storage and priority classes its claims and pods name.
    The Kubernetes provider reads a claim's class to know whether it binds at once or waits for its first
    pod; without it, a team's `pulumi up` waits out its timeout on every claim of a WaitForFirstConsumer class."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(CLUSTER_READER_ROLE),
        "rules": [
            {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": _READ},
            {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": _READ},
        ],
    }


def cluster_reader_binding(tenant: TenantConfig) -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(f"{tenant.name}-{CLUSTER_READER_ROLE}"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CLUSTER_READER_ROLE},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": tenant_group(tenant.name)}],
    }


def _role_binding(tenant: TenantConfig, name: str, role: str = TENANT_ROLE) -> Manifest:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata(f"{tenant.name}-{role}", name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": tenant_group(tenant.name)}],
    }


def _quotas(tenant: TenantConfig, name: str, gpus: Mapping[str, int]) -> list[Manifest]:
    """The namespace's total, and per workload class by the pods' priority class: a pod naming no class
    falls under the total only, which holds every GPU the team has."""
    total = {
        "requests.cpu": str(tenant.cpu),
        "requests.memory": f"{tenant.memory_gib}Gi",
        GPU: str(sum(gpus.values())),
    }
    quotas = [
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata(f"{tenant.name}-total", name),
            "spec": {"hard": total},
        }
    ]

    def scoped(quota: str, hard: dict[str, str], classes: list[str]) -> Manifest:
        return {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata(f"{tenant.name}-{quota}", name),
            "spec": {
                "hard": hard,
                "scopeSelector": {
                    "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": classes}]
                },
            },
        }

    for klass, count in sorted(gpus.items()):
        quotas.append(scoped(klass, {GPU: str(count)}, [PRIORITY_CLASS[klass]]))
    # The platform's classes outrank every team's: no pod of a team may run at one of them.
    quotas.append(scoped("platform-classes", {"pods": "0"}, list(PLATFORM_CLASSES)))
    return quotas


def _defaults(tenant: TenantConfig, name: str) -> Manifest:
    """Requests for a container that states none (a quota refuses such pods otherwise)."""
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": metadata(f"{tenant.name}-defaults", name),
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
                    "default": {"cpu": "1", "memory": "2Gi"},
                }
            ]
        },
    }


def observer_bindings(tenant: TenantConfig, observed: list[str]) -> list[Manifest]:
    """The team's read-only view of the Triton namespaces of the sets it publishes to."""
    return [_role_binding(tenant, name, OBSERVER_ROLE) for name in observed]


def tenant_manifests(
    tenant: TenantConfig, triton_namespaces: dict[str, list[str]], gpus: Mapping[str, int] | None = None
) -> list[Manifest]:
    """Every namespace of the team. `triton_namespaces`: per team namespace, the serving sets' namespaces
    that list it as a client, which its egress must reach on the inference ports (and only its). `gpus`: each
    namespace's GPU quota per class (default the team's `gpus`; with queues, what Kueue may admit for it)."""
    objects: list[Manifest] = []
    for name in tenant.namespace_names:
        calls = triton_namespaces.get(name, [])
        ns = namespace(name, "baseline")
        ns["metadata"]["labels"][TENANT_LABEL] = tenant.name
        egress = [{"to": [{"podSelector": {}}]}, {"ports": [{"port": 443, "protocol": "TCP"}]}]
        if calls:
            egress.append(
                {
                    "to": [
                        {
                            "namespaceSelector": {
                                "matchExpressions": [
                                    {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(calls)}
                                ]
                            }
                        }
                    ],
                    "ports": [{"port": 8000, "protocol": "TCP"}, {"port": 8001, "protocol": "TCP"}],
                }
            )
        team = network_policy(tenant.name, name, {}, ingress=[{"from": [{"podSelector": {}}]}], egress=egress)
        objects += [
            ns,
            *namespace_baseline(name),
            team,
            *_quotas(tenant, name, tenant.gpus if gpus is None else gpus),
            _defaults(tenant, name),
            _role_binding(tenant, name),
        ]
    return objects


def tenant_pod_policy(tenant: TenantConfig, pools: Mapping[str, str]) -> list[Manifest]:
    """The team's pods name a priority class its quota covers (a pod naming none would escape the class
    quotas) and tolerate only its own pools of that class (`pools`: each with its workload class): no wildcard
    toleration, none of the system nodes' taint, no other pool's, and no pool of another class (an online pod
    on a batch pool would take GPUs no queue or batch quota counts, and outrank the batch work there). A pod
    may not name its node (the scheduler, which enforces taints, must place it). The rules are the client's
    too (seedance_client/pod_admission.py): a team's `seedance check` says what this policy will."""
    variables, validations = pod_policy(tenant_pod_rules(tenant, pools))
    return admission_policy(
        f"{TENANT_ROLE}-{tenant.name}-pods",
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}],
        validations,
        variables=variables,
        namespace_selector=_tenant_namespaces(tenant.name),
    )


def tenant_pod_rules(tenant: TenantConfig, pools: Mapping[str, str]) -> PodRules:
    return PodRules(tenant.name, dict(PRIORITY_CLASS), tuple(tenant.priority_classes), dict(pools))


def _tenant_namespaces(tenant: str | None = None) -> dict[str, Any]:
    if tenant is None:
        return {"matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]}
    return {"matchLabels": {TENANT_LABEL: tenant}}


def tenant_guard_policies(team_namespaces: list[str]) -> list[Manifest]:
    """In every team's namespace: Services stay inside the cluster (EKS's built-in controller would put a
    LoadBalancer in the public subnets the stack tags), and the platform's own objects there (network
    policies, quotas, limit ranges, RBAC) and service account tokens are beyond a team's own requests, even
    if RBAC someday grants them. A team's request is one of its people's (their group) or of a service
    account of any team's namespace (`team_namespaces`: identities a team's pods run as)."""
    accounts = cel_list(sorted(f"system:serviceaccounts:{namespace}" for namespace in team_namespaces))
    from_a_team = [
        {
            "name": "from-a-team",
            "expression": f"has(request.userInfo.groups) && request.userInfo.groups.exists(g, "
            f"g.startsWith({json.dumps(TENANT_GROUP_PREFIX)}) || g in {accounts})",
        }
    ]
    services = admission_policy(
        f"{TENANT_ROLE}-services",
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["services"]}],
        # An update that keeps a Service's type passes (a controller removing a finalizer from one made before).
        [
            {
                "expression": "!has(object.spec.type) || object.spec.type == 'ClusterIP' "
                "|| (request.operation == 'UPDATE' && has(oldObject.spec.type) "
                "&& oldObject.spec.type == object.spec.type)",
                "message": "a team's Services are ClusterIP only (no LoadBalancer, NodePort or ExternalName)",
            },
            {
                "expression": "!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0",
                "message": "a team's Services take no externalIPs",
            },
        ],
        namespace_selector=_tenant_namespaces(),
    )
    platform_objects = admission_policy(
        f"{TENANT_ROLE}-platform-objects",
        [
            {
                "apiGroups": ["networking.k8s.io"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE", "DELETE"],
                "resources": ["networkpolicies"],
            },
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE", "DELETE"],
                "resources": ["resourcequotas", "limitranges"],
            },
            {
                "apiGroups": ["rbac.authorization.k8s.io"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE", "DELETE"],
                "resources": ["roles", "rolebindings"],
            },
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["serviceaccounts/token"],
            },
        ],
        [
            {
                "expression": "false",
                "message": "network policies, quotas, limit ranges, RBAC and service account "
                "tokens in a team's namespace are the platform's to change",
            }
        ],
        conditions=from_a_team,
        namespace_selector=_tenant_namespaces(),
    )
    token_secrets = admission_policy(
        f"{TENANT_ROLE}-token-secrets",
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["secrets"]}],
        [
            {
                "expression": "!has(object.type) || object.type != 'kubernetes.io/service-account-token'",
                "message": "a team may not mint service account tokens as Secrets",
            }
        ],
        conditions=from_a_team,
        namespace_selector=_tenant_namespaces(),
    )
    return [tenant_role(), observer_role(), cluster_reader_role(), *services, *platform_objects, *token_secrets]


COST_LABEL_POLICY = "seedance-tenant-cost-labels"


def tenant_cost_label_policy() -> list[Manifest]:
    """A tenant's pods say whose they are (seedance_client/pod_admission.py, which a team's check reads too)."""
    return admission_policy(
        COST_LABEL_POLICY,
        [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}],
        [cost_label_validation(TENANT_LABEL)],
        namespace_selector=_tenant_namespaces(),
    )
