"""Helpers for Kubernetes objects written as plain manifests (the components declare them as they are)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Manifest = dict[str, Any]
# A value a manifest holds as it is given: the program passes its Outputs, which Pulumi resolves in place.
Passed = object
PodSecurityLevel = Literal["restricted", "baseline", "privileged"]
# The API server sets this label on every namespace from its name; nobody can give it another value.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def metadata(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    labels = {"app.kubernetes.io/part-of": "seedance", "app.kubernetes.io/name": name}
    return {"name": name, **({"namespace": namespace} if namespace else {}), "labels": labels, **extra}


def checkov_skips(**reasons: str) -> dict[str, Any]:
    """checkov skip annotations, each with the reason the object needs what the check forbids."""
    return {f"checkov.io/skip{i}": f"{check}={reason}" for i, (check, reason) in enumerate(reasons.items(), 1)}


def namespace(name: str, pod_security: PodSecurityLevel) -> Manifest:
    """A namespace whose pods Pod Security Admission holds to `pod_security` (enforced, audited, warned)."""
    labels = {f"pod-security.kubernetes.io/{mode}": pod_security for mode in ("enforce", "audit", "warn")}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def network_policy(
    name: str,
    namespace_name: str,
    pods: dict[str, str],
    *,
    ingress: list[Any] | None = None,
    egress: list[Any] | None = None,
) -> Manifest:
    """A NetworkPolicy for the pods labelled `pods` (every pod when empty): each direction given is limited
    to its rules (an empty list admits nothing); a direction not given is left alone."""
    directions = {"ingress": ingress, "egress": egress}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata(name, namespace_name),
        "spec": {
            "podSelector": {"matchLabels": pods} if pods else {},
            "policyTypes": [d.capitalize() for d, rules in directions.items() if rules is not None],
            **{d: rules for d, rules in directions.items() if rules},
        },
    }


def api_server_egress(vpc_cidr: str, api_service_ip: str) -> dict[str, Any]:
    """Pods dial the API at the `kubernetes` Service address, which the network policy agent judges before it
    is translated: that address, and the control plane's own in the VPC."""
    return {
        "to": [{"ipBlock": {"cidr": f"{api_service_ip}/32"}}, {"ipBlock": {"cidr": vpc_cidr}}],
        "ports": [{"port": 443, "protocol": "TCP"}],
    }


def namespace_baseline(namespace_name: str) -> list[Manifest]:
    """Default deny in both directions for every pod of the namespace, and name resolution through the
    cluster DNS (each workload's own policy adds what it needs; policies add up)."""
    dns = {
        "to": [
            {
                "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
            }
        ],
        "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
    }
    return [
        network_policy("default-deny", namespace_name, {}, ingress=[], egress=[]),
        network_policy("allow-dns", namespace_name, {}, egress=[dns]),
    ]


# What every workload's pods carry for cost allocation: the cloud cost tags' keys (the stack's tags and
# its env) and the app's name. OpenCost aggregates by them (`aggregate=label:team`), as Cost Explorer
# does by the tags; the platform contract tells application teams (`cost_label_keys`).
APP_LABEL = "app.kubernetes.io/name"
COST_TAG_LABELS = ("team", "cost-center", "env")
COST_LABEL_KEYS = (*COST_TAG_LABELS, APP_LABEL)


def cost_labels(tags: Mapping[str, str], app: str) -> dict[str, str]:
    """The cost labels of one app's pods, from the stack's resource tags."""
    return {**{key: tags[key] for key in COST_TAG_LABELS if key in tags}, APP_LABEL: app}


def admission_policy(
    name: str,
    resource_rules: list[dict[str, Any]],
    validations: list[dict[str, Any]],
    *,
    variables: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    namespace_selector: dict[str, Any] | None = None,
) -> list[Manifest]:
    """A ValidatingAdmissionPolicy that denies what fails its validations (failing closed), and its binding."""
    constraints = {
        "resourceRules": resource_rules,
        **({"namespaceSelector": namespace_selector} if namespace_selector else {}),
    }
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": metadata(name),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": constraints,
            **({"matchConditions": conditions} if conditions else {}),
            **({"variables": variables} if variables else {}),
            "validations": validations,
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": metadata(name),
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [policy, binding]


_QUANTITY_UNITS = {
    "m": 1e-3,
    "Ki": 2**-20,
    "Mi": 2**-10,
    "Gi": 1,
    "Ti": 2**10,
    "k": 1e3 / 2**30,
    "M": 1e6 / 2**30,
    "G": 1e9 / 2**30,
}


def quantity(value: Any) -> float | None:
    """A Kubernetes CPU or memory quantity in cores or GiB ("50m", "128Mi"); None when absent or unreadable."""
    if value is None:
        return None
    text = str(value)
    for suffix in sorted(_QUANTITY_UNITS, key=len, reverse=True):
        if text.endswith(suffix):
            try:
                return float(text[: -len(suffix)]) * _QUANTITY_UNITS[suffix]
            except ValueError:
                return None
    try:
        return float(text)
    except ValueError:
        return None
