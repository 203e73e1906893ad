"""RBAC rules by meaning: which grants let a holder become more than it is (Kubernetes' "RBAC good
practices: privilege escalation risks"). A rule's `*` in API groups, resources or verbs, `*/exec`-style
subresource wildcards and upper-case verbs (the API server matches verbs exactly, so a gate that lowers
them only errs towards refusing) all read as what they cover."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# Verbs that grant more than they say, on any resource (escalate: edit roles beyond one's own; bind: bind
# any role; impersonate: act as anyone).
ESCALATING_VERBS = frozenset({"escalate", "bind", "impersonate"})
# What removes or rewrites an admission guard (`deletecollection` deletes them all in one call).
ADMISSION_WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
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
    ("admissionregistration.k8s.io", "validatingadmissionpolicies", ADMISSION_WRITES),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", ADMISSION_WRITES),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", ADMISSION_WRITES),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", ADMISSION_WRITES),
)
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


def _set(value: Any) -> frozenset[str]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    return frozenset(str(item) for item in items)


def _covers(patterns: frozenset[str], resource: str) -> bool:
    """Whether a rule's resources cover `resource`: `*`, the name, or `*/<subresource>` (the API's only
    wildcards)."""
    base, _, sub = resource.partition("/")
    return "*" in patterns or resource in patterns or (sub != "" and f"*/{sub}" in patterns)


def escalations(rules: Any) -> Iterator[Grant]:
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict):
            continue
        verbs = frozenset(v.lower() for v in _set(rule.get("verbs")))
        groups, resources = _set(rule.get("apiGroups")), _set(rule.get("resources"))
        where = f"rule {index}"
        escalating = sorted(ESCALATING_VERBS & verbs)
        if escalating:  # whatever they name: they have no use but to grant more
            yield Grant(where, f"grants {', '.join(escalating)}")
        for group, resource, dangerous in SENSITIVE:
            if (
                ("*" in groups or group in groups)
                and _covers(resources, resource)
                and ("*" in verbs or verbs & dangerous - ESCALATING_VERBS)
            ):
                shown = sorted(verbs & dangerous) or ["*"]
                yield Grant(
                    where,
                    f"grants {'/'.join(shown)} on {resource}"
                    + (f" (as {', '.join(sorted(resources))})" if resource not in resources else ""),
                )


def aggregates(role: dict) -> bool:
    """A ClusterRole that gathers other roles' rules by label: it grows whenever someone labels a role."""
    return bool((role.get("aggregationRule") or {}).get("clusterRoleSelectors"))
