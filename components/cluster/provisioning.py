"""The cluster autoscaler's ProvisioningRequest API (autoscaling.x-k8s.io/v1): Kueue's gang check asks through
it for all of a job's nodes at once (docs/capacity-decision.md, "Gangs"). Pure: the program, the gate and the
tests read the same objects.

Neither pinned autoscaler chart ships the CRD, so the platform applies it itself, vendored from
kubernetes/autoscaler at `cluster-autoscaler-1.36.1` (commit 35e8a280425c76a4040f57ae0fa232a952c02024),
`cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml`, as JSON. The images the
version table pins (v1.33.6, v1.34.5, v1.35.2, v1.36.1) carry the same schema at their tags: only the
descriptions and v1beta1's deprecation markers differ (compared field by field when it was vendored).

The autoscaler talks JSON to this API on its own (`main.go`, or `builder/clients.go` from 1.36: "Use a
static JSON content type config for ProvisioningRequest CRD data exchange"), so `kube-api-content-type`,
which its FAQ asks for, stays at its default for every other call.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

PROVISIONING_GROUP = "autoscaling.x-k8s.io"
PROVISIONING_CRD_NAME = f"provisioningrequests.{PROVISIONING_GROUP}"
# Plans all of a request's nodes in one node group, or none, and raises the group's desired capacity once
# (AWS has no atomic increase: the request is Provisioned before the instances exist).
BEST_EFFORT_ATOMIC = f"best-effort-atomic-scale-up.{PROVISIONING_GROUP}"
CRD_FILE = Path(__file__).parent / "data" / f"{PROVISIONING_CRD_NAME}.json"
# Chart 9.59.0's ClusterRole grants the autoscaler these; 9.53.0's does not (both read at their tags).
FIRST_CHART_GRANTING = (9, 59, 0)
# What the autoscaler does with the API (provreqclient: it lists requests and their PodTemplates, writes
# request status); nothing more.
PROVISIONING_RULES = [
    {
        "apiGroups": [PROVISIONING_GROUP],
        "resources": ["provisioningrequests", "provisioningrequests/status"],
        "verbs": ["get", "list", "watch", "update", "patch"],
    },
    {"apiGroups": [""], "resources": ["podtemplates"], "verbs": ["get", "list", "watch"]},
]


@cache
def _crd_text() -> str:
    return CRD_FILE.read_text()


def provisioning_request_crd() -> dict[str, Any]:
    """The vendored CRD, a fresh copy per call (callers may change theirs)."""
    crd: dict[str, Any] = json.loads(_crd_text())
    return crd


def rbac_rules_for(chart_version: str) -> list[dict[str, Any]]:
    """The ClusterRole rules a chart of this version lacks for the API (none from 9.59.0)."""
    if tuple(int(part) for part in chart_version.split(".")) >= FIRST_CHART_GRANTING:
        return []
    return copy.deepcopy(PROVISIONING_RULES)
