"""RBAC rules by meaning: which grants let a holder become more than it is (Kubernetes' "RBAC good
practices: privilege escalation risks"). A rule's `*` in API groups, resources or verbs, `*/exec`-style
subresource wildcards and upper-case verbs (the API server matches verbs exactly, so a gate that lowers
them only errs towards refusing) all read as what they cover."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Kubernetes' built-in roles and the subjects its own bindings give them, as the API servers of the stacks'
# minors bootstrap them (generated and checked by tests/engines/test_builtin_rbac.py).
BUILTIN_RBAC_FILE = Path(__file__).resolve().parents[1] / "data" / "builtin_rbac.json"

# Verbs that grant more than they say, on any resource (escalate: edit roles beyond one's own; bind: bind
# any role; impersonate: act as anyone).
ESCALATING_VERBS = frozenset({"escalate", "bind", "impersonate"})
# What creates, rewrites or removes an object (`deletecollection` deletes them all in one call).
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
# (API group, resource, verbs that escalate through it).
SENSITIVE = (
    ("rbac.authorization.k8s.io", "roles", frozenset({"escalate", "bind"})),
    ("rbac.authorization.k8s.io", "clusterroles", frozenset({"escalate", "bind"})),
    ("", "users", frozenset({"impersonate"})),
    ("", "groups", frozenset({"impersonate"})),
    ("", "serviceaccounts", frozenset({"impersonate"})),
    ("authentication.k8s.io", "userextras/scopes", frozenset({"impersonate"})),
    ("authentication.k8s.io", "uids", frozenset({"impersonate"})),
    ("", "secrets", frozenset({"get", "list", "watch"})),
    ("", "pods/exec", frozenset({"create", "get"})),
    ("", "pods/attach", frozenset({"create", "get"})),
    ("", "pods/ephemeralcontainers", frozenset({"patch", "update"})),
    ("", "serviceaccounts/token", frozenset({"create"})),
    ("", "nodes/proxy", frozenset({"get", "create"})),
    ("certificates.k8s.io", "certificatesigningrequests/approval", frozenset({"update", "patch"})),
    # A namespace's labels set its Pod Security level: relabelling one admits privileged pods there.
    ("", "namespaces", frozenset({"update", "patch"})),
    # Admission of either kind: a guard removed, or every new object rewritten.
    ("admissionregistration.k8s.io", "validatingadmissionpolicies", WRITES),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", WRITES),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", WRITES),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", WRITES),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies", WRITES),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings", WRITES),
    # What every workload runs on: a node relabelled or untainted draws other teams' pods, a node's status
    # forged changes what the scheduler places there, a volume rebound hands a team's data to another.
    ("", "nodes", WRITES),
    ("", "nodes/status", frozenset({"update", "patch"})),
    ("", "persistentvolumes", WRITES),
    # A priority class preempts everyone below it.
    ("scheduling.k8s.io", "priorityclasses", WRITES),
    # An APIService routes a whole API group (metrics, custom metrics) to whatever Service it names.
    ("apiregistration.k8s.io", "apiservices", WRITES),
    # A binding places a pod on a node of the writer's choosing, past the scheduler and the pools' taints.
    ("", "pods/binding", frozenset({"create"})),
    ("", "bindings", frozenset({"create"})),
    # The queues hand out the GPUs the capacity decision buys: a queue, flavor, cohort, check or topology
    # rewritten, or a Workload's admission written, admits work past the decision or another team's quota.
    *(
        ("kueue.x-k8s.io", kind, WRITES)
        for kind in (
            "clusterqueues",
            "localqueues",
            "resourceflavors",
            "cohorts",
            "admissionchecks",
            "provisioningrequestconfigs",
            "topologies",
            "workloadpriorityclasses",
            "multikueueclusters",
            "multikueueconfigs",
            "workloads",
            "workloads/status",
        )
    ),
    # A ProvisioningRequest has the autoscaler start nodes that no queue counts; its PodTemplate says which.
    ("autoscaling.x-k8s.io", "provisioningrequests", WRITES),
    ("autoscaling.x-k8s.io", "provisioningrequests/status", frozenset({"update", "patch"})),
    ("", "podtemplates", WRITES),
)
# Pods and what makes them: written in a platform namespace (kube-system runs privileged pods, Triton's
# holds the model role), a pod is any identity and host of that namespace. A namespace's own Role is judged
# by its namespace; a ClusterRole may be bound anywhere, so it is judged as if bound there.
WORKLOAD_WRITES = (
    ("", "pods", WRITES),
    ("", "pods/eviction", frozenset({"create"})),
    ("", "replicationcontrollers", WRITES),
    ("apps", "deployments", WRITES),
    ("apps", "daemonsets", WRITES),
    ("apps", "statefulsets", WRITES),
    ("apps", "replicasets", WRITES),
    ("batch", "jobs", WRITES),
    ("batch", "cronjobs", WRITES),
    # Scaling a platform workload to nothing (CoreDNS, the autoscaler, Triton) is a write to it too.
    ("apps", "deployments/scale", frozenset({"update", "patch"})),
    ("apps", "statefulsets/scale", frozenset({"update", "patch"})),
    ("apps", "replicasets/scale", frozenset({"update", "patch"})),
    ("", "replicationcontrollers/scale", frozenset({"update", "patch"})),
)
# A ClusterRole with one of these labels is merged into the built-in admin, edit or view roles (and so into
# whatever binds them: EKS's access policies among them).
AGGREGATE_LABEL_PREFIX = "rbac.authorization.k8s.io/aggregate-to-"
# Built-in ClusterRoles that carry such grants (cluster-admin everything, admin/edit secrets and exec, the
# aggregation controller escalate), and groups that are everyone or above RBAC.
ESCALATING_ROLES = frozenset(
    {
        "cluster-admin",
        "admin",
        "edit",
        "system:aggregate-to-admin",
        "system:aggregate-to-edit",
        "system:controller:clusterrole-aggregation-controller",
        "system:kube-controller-manager",
        "system:node",
        "system:masters",
        "system:kubelet-api-admin",
    }
)  # the kubelet's whole API: nodes/proxy, exec in any pod
EVERYONE_GROUPS = frozenset(
    {"system:masters", "system:authenticated", "system:unauthenticated", "system:anonymous", "system:serviceaccounts"}
)  # the last: every service account of every namespace
# The controller manager's own roles (`system:controller:<controller>`): each lets its holder do what that
# controller does to every namespace (create pods, delete anything, sign tokens).
CONTROLLER_ROLE_PREFIX = "system:controller:"


@dataclass(frozen=True)
class Grant:
    where: str
    what: str
    resource: str | None  # the sensitive resource, or None for escalating verbs on anything
    verbs: frozenset[str]  # the dangerous verbs granted on it ("*": all of them)
    wildcard: bool = False  # reached through `*` (a group, resource or verb): covers what may exist later


def _set(value: Any) -> frozenset[str]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    return frozenset(str(item) for item in items)


def _covers(patterns: frozenset[str], resource: str) -> bool:
    """Whether a rule's resources cover `resource`: `*`, the name, or `*/<subresource>` (the API's only
    wildcards)."""
    base, _, sub = resource.partition("/")
    return "*" in patterns or resource in patterns or (sub != "" and f"*/{sub}" in patterns)


def _by_group(entries: tuple[tuple[str, str, frozenset[str]], ...]) -> dict[str, tuple]:
    grouped: dict[str, list] = {}
    for entry in entries:
        grouped.setdefault(entry[0], []).append(entry)
    return {group: tuple(found) for group, found in grouped.items()}


# The sensitive entries by API group: a rule is tested against the groups it names only (or all, for `*`).
_SENSITIVE_BY_GROUP = {False: _by_group(SENSITIVE), True: _by_group(SENSITIVE + WORKLOAD_WRITES)}


def escalations(rules: Any, *, workloads: bool = True) -> Iterator[Grant]:
    """The grants of `rules` that make their holder more than it is; with `workloads`, writes to pods and
    what makes them too (a role judged where a platform namespace may hold it)."""
    by_group = _SENSITIVE_BY_GROUP[workloads]
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict):
            continue
        verbs = frozenset(v.lower() for v in _set(rule.get("verbs")))
        groups, resources = _set(rule.get("apiGroups")), _set(rule.get("resources"))
        where = f"rule {index}"
        escalating = sorted(ESCALATING_VERBS & verbs)
        if escalating:  # whatever they name: they have no use but to grant more
            yield Grant(where, f"grants {', '.join(escalating)}", None, frozenset(escalating))
        named = by_group.values() if "*" in groups else (by_group.get(group, ()) for group in groups)
        for _group, resource, dangerous in (entry for entries in named for entry in entries):
            if _covers(resources, resource) and ("*" in verbs or verbs & dangerous - ESCALATING_VERBS):
                shown = sorted(verbs & dangerous) or ["*"]
                yield Grant(
                    where,
                    f"grants {'/'.join(shown)} on {resource}"
                    + (f" (as {', '.join(sorted(resources))})" if resource not in resources else ""),
                    resource,
                    frozenset(shown),
                    "*" in groups or "*" in verbs or resource not in resources,
                )


def aggregates(role: dict) -> bool:
    """A ClusterRole that gathers other roles' rules by label: it grows whenever someone labels a role."""
    return bool((role.get("aggregationRule") or {}).get("clusterRoleSelectors"))


def subject_key(subject: dict, binding_namespace: str | None = None) -> str:
    """`Kind:namespace:name` of a binding's subject (a service account without a namespace is the binding's)."""
    kind = str(subject.get("kind"))
    namespace = str(subject.get("namespace") or binding_namespace or "") if kind == "ServiceAccount" else ""
    return f"{kind}:{namespace}:{subject.get('name')}"


def role_key(kind: Any, name: Any, namespace: Any = None) -> str:
    """A role as bindings name it: `ClusterRole/<name>`, or `Role/<namespace>/<name>`."""
    return f"ClusterRole/{name}" if kind == "ClusterRole" else f"Role/{namespace or 'default'}/{name}"


@functools.cache
def _builtin_table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(BUILTIN_RBAC_FILE.read_text())
    return table


@functools.cache
def builtin_role_names() -> frozenset[str]:
    """Every role the API server builds in: its ClusterRoles and the kube-system Roles its bindings name."""
    table = _builtin_table()
    return frozenset(table["cluster_roles"]) | frozenset(table["subjects"])


def aggregated_into_builtins(role: dict) -> bool:
    labels = (role.get("metadata") or {}).get("labels") or {}
    return isinstance(labels, dict) and any(str(key).startswith(AGGREGATE_LABEL_PREFIX) for key in labels)


@functools.cache
def builtin_role_subjects() -> dict[str, frozenset[str]]:
    """Each built-in `system:` ClusterRole, and the only subjects the API server itself binds it to (none:
    it is for add-ons, or the server grants it another way)."""
    table = _builtin_table()
    held = table["subjects"]
    return {role: frozenset(held.get(role, ())) for role in table["cluster_roles"] if role.startswith("system:")}


# What each pinned chart's own roles may grant of the above, and which built-in roles its own bindings use:
# the platform's controllers doing their job (the autoscaler marks nodes for scale-down and evicts, and
# patches jobs it provisions for; the termination handler cordons, labels and drains; the descheduler
# evicts and deletes; an aggregated API server checks callers' tokens through system:auth-delegator). Read
# from the charts at their pins with the stacks' values; tests/policies/readers/test_rbac.py holds each table
# equal to what the charts render, so no entry outlives its chart.
CHART_GRANTS: dict[str, dict[str | None, frozenset[str]]] = {
    # The autoscaler answers ProvisioningRequests (their status) from their PodTemplates; chart 9.59.0 also
    # lets it write PodTemplates for its capacity buffers.
    "cluster-autoscaler": {
        "nodes": frozenset({"update"}),
        "pods/eviction": frozenset({"create"}),
        "jobs": frozenset({"patch"}),
        "provisioningrequests": frozenset({"patch", "update"}),
        "provisioningrequests/status": frozenset({"patch", "update"}),
        "podtemplates": frozenset({"create", "patch", "update"}),
    },
    "aws-node-termination-handler": {"nodes": frozenset({"patch", "update"}), "pods/eviction": frozenset({"create"})},
    "descheduler": {"pods": frozenset({"delete"}), "pods/eviction": frozenset({"create"})},
    # Kueue suspends and resumes jobs, gates and evicts pods, writes its webhooks' CA bundle and reads its own
    # certificate (a Secret of its namespace, kueue-system, which holds nothing else); its job editor role
    # is for people (aggregated into the built-in edit and admin roles, which hold job writes already).
    "kueue": {
        "jobs": frozenset({"create", "delete", "patch", "update"}),
        "pods": frozenset({"delete", "patch", "update"}),
        "secrets": frozenset({"get", "list", "watch"}),
        "mutatingwebhookconfigurations": frozenset({"update"}),
        "validatingwebhookconfigurations": frozenset({"update"}),
        # Its controller admits Workloads and asks for a gang's nodes (a ProvisioningRequest and its
        # PodTemplates); its per-kind editor roles are gathered into its batch admin role, bound to nobody.
        **dict.fromkeys(
            ("clusterqueues", "localqueues", "resourceflavors", "cohorts", "topologies", "workloads"),
            frozenset({"create", "delete", "patch", "update"}),
        ),
        "admissionchecks": frozenset({"update"}),
        "workloads/status": frozenset({"patch", "update"}),
        "podtemplates": frozenset({"create", "delete", "update"}),
        "provisioningrequests": frozenset({"create", "delete", "patch", "update"}),
    },
}
# What each pinned chart extends the API with: the kinds of extension its rendering holds (new kinds, webhooks
# of either kind), and the API groups of the kinds it defines. Another pinned chart's values (Grafana's
# `extraObjects`) may render any object under that chart: only the chart that brings an extension may. Held
# equal to what the charts render (tests/policies/readers/test_rbac.py).
EXTENSION_KINDS = frozenset(
    {"CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
)
CHART_EXTENSIONS: dict[str, frozenset[str]] = {"kueue": EXTENSION_KINDS}
CHART_API_GROUPS: dict[str, frozenset[str]] = {"kueue": frozenset({"kueue.x-k8s.io"})}


def chart_extends(chart: str | None, kind: str, group: str | None = None) -> bool:
    """Whether a pinned chart brings this kind of extension (a CRD: of one of its own API groups)."""
    if chart is None or kind not in CHART_EXTENSIONS.get(chart, ()):
        return False
    return group is None or group in CHART_API_GROUPS.get(chart, ())


# A pinned chart's ClusterRoles that gather others by label: Kueue's batch roles gather its per-kind viewer
# and editor roles, for people the platform binds to nothing (a binding to one is judged as any other).
CHART_AGGREGATES: dict[str, frozenset[str]] = {"kueue": frozenset({"kueue-batch-admin-role", "kueue-batch-user-role"})}
CHART_BUILTIN_ROLES: dict[str, frozenset[str]] = {
    "metrics-server": frozenset({"system:auth-delegator"}),
    "prometheus-adapter": frozenset({"system:auth-delegator"}),
}


def chart_name(chart: Any) -> str:
    """A release's chart as the tables above name it (an OCI reference by its last path segment)."""
    return str(chart).rstrip("/").rsplit("/", 1)[-1]


_EXPECTED: dict[tuple[str, bool], tuple[Any, dict[str | None, frozenset[str]]]] = {}


def expected_grants(name: str, rules: Any, workloads: bool) -> dict[str | None, frozenset[str]]:
    """`granted(escalations(rules))` of an expected role, read once per rules object (the cache holds the
    object, so a later one is never mistaken for it)."""
    cached = _EXPECTED.get((name, workloads))
    if cached is None or cached[0] is not rules:
        cached = _EXPECTED[(name, workloads)] = (rules, granted(escalations(rules, workloads=workloads)))
    return cached[1]


def granted(grants: Iterable[Grant]) -> dict[str | None, frozenset[str]]:
    """What grants hold, by resource (None: escalating verbs on anything)."""
    held: dict[str | None, frozenset[str]] = {}
    for grant in grants:
        held[grant.resource] = held.get(grant.resource, frozenset()) | grant.verbs
    return held


def within(grant: Grant, allowed: Mapping[str | None, frozenset[str]]) -> bool:
    """Whether an allowance covers the grant: named resources and verbs only (a wildcard also covers what a
    later API adds, which no allowance was read for)."""
    return not grant.wildcard and grant.verbs <= allowed.get(grant.resource, frozenset())


def chart_allows(chart: str | None, grant: Grant) -> bool:
    return within(grant, CHART_GRANTS.get(chart or "", {}))
