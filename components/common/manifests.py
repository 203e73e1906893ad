"""Helpers for Kubernetes objects written as plain manifests (the components declare them as they are)."""

from __future__ import annotations

from typing import Any

Manifest = dict[str, Any]


def metadata(name: str, namespace: str | None = None, **extra) -> dict:
    labels = {"app.kubernetes.io/part-of": "seedance", "app.kubernetes.io/name": name}
    return {"name": name, **({"namespace": namespace} if namespace else {}), "labels": labels, **extra}


def checkov_skips(**reasons: str) -> dict:
    """checkov skip annotations, each with the reason the object needs what the check forbids."""
    return {f"checkov.io/skip{i}": f"{check}={reason}" for i, (check, reason) in enumerate(reasons.items(), 1)}
