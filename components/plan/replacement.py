"""Which input changes make the provider replace a resource (delete and create) instead of updating it
in place, and which it cannot make at all. Pure.

A bridged AWS resource is replaced when an attribute its Terraform schema marks `ForceNew` (SDKv2) or
`RequiresReplace` (framework) changes: that table is generated from terraform-provider-aws's source
(data/force_new.aws.json, stamped with the pulumi-aws pin and the upstream version it was read at). A
Kubernetes object is replaced when its name or namespace changes or a field in pulumi-kubernetes's
force-new table does (generated from provider/pkg/provider/diff.go: data/force_new.kubernetes.json; a
Helm release per helm_release.go); a tls key, request or certificate
on any input but its renewal window (terraform-provider-tls `internal/provider/resource_*.go`); a random
value on any input (terraform-provider-random: every argument forces a new value). The offline machine
has no provider plugin to ask, so the tables hold the types this project declares; `replaced_by` returns
None for any other, and `seedance diff` says it cannot tell.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

# Generated from the provider's Go source by scripts/generate_force_new.py (its docstring says what the
# parser reads and what it does not); regenerate it when the pulumi-aws pin moves:
#   python scripts/generate_force_new.py --source <terraform-provider-aws checkout at the bridged tag> \
#     --tf-version <tag> --pulumi-aws-version <pin> --types scripts/force_new_types.json \
#     --pulumi-sdk .venv/lib/python3.11/site-packages/pulumi_aws --out components/plan/data/force_new.aws.json
# The committed table was read at v6.58.0, the newest source this project could read; pulumi-aws 7.51.1
# bridges a later 6.x (its wheel has resources v6.58.0 lacks), so read it again at the bridged tag. Conditional
# replacements (`RequiresReplaceIf`, `ForceNewIfChange`) count as replacements: a diff that says "replaced"
# for a change that ends up in place is a surprise in the safe direction.
FORCE_NEW_TABLE = Path(__file__).parent / "data" / "force_new.aws.json"


@cache
def aws_force_new() -> dict[str, tuple[str, ...]]:
    document = json.loads(FORCE_NEW_TABLE.read_text())
    conditional = document.get("conditional", {})
    return {token: tuple(sorted({*paths, *conditional.get(token, ())})) for token, paths in document["types"].items()}


# Generated from pulumi-kubernetes's provider/pkg/provider/diff.go by scripts/generate_force_new_kubernetes.py
# (stamped with the pin and the commit it was read at); regenerate it when the pulumi-kubernetes pin moves:
#   python scripts/generate_force_new_kubernetes.py \
#     --diff-go <checkout at the pinned tag>/provider/pkg/provider/diff.go \
#     --source "pulumi/pulumi-kubernetes@<commit> (<tag>)" --pulumi-kubernetes-version <pin> \
#     --out components/plan/data/force_new.kubernetes.json
# Every kind is replaced when its name or namespace changes; a Secret's and a ConfigMap's data too, as the
# provider's defaults (enableSecretMutable / enableConfigMapMutable off, provider.go) have it. A Helm
# release (helm_release.go) is replaced on its name or namespace only.
K8S_FORCE_NEW_TABLE = Path(__file__).parent / "data" / "force_new.kubernetes.json"


@cache
def kubernetes_force_new() -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """(what replaces every kind, what replaces each kind besides)."""
    document = json.loads(K8S_FORCE_NEW_TABLE.read_text())
    kinds = {kind: tuple(paths) for kind, paths in document["kinds"].items()}
    kinds.update({kind: tuple(paths) for kind, paths in document["unless_mutable"].items()})
    return tuple(document["every_kind"]), kinds


# Fields the API server refuses to change that the provider does not replace on: such an update fails at
# `pulumi up` (the resource needs `replace_on_changes`, or a new name).
_K8S_IMMUTABLE: dict[str, tuple[str, ...]] = {
    "storage.k8s.io/v1:StorageClass": ("reclaimPolicy", "volumeBindingMode"),
    "scheduling.k8s.io/v1:PriorityClass": ("value",),
}
# terraform-provider-tls: every input but the renewal window replaces a key, request or certificate.
_TLS_IN_PLACE = ("earlyRenewalHours",)


def _matching(changed: list[str], paths: tuple[str, ...]) -> list[str]:
    """The changed paths at, under or above a listed one (`[*]` in a listed path is any index)."""

    def at_or_under(path: str, listed: str) -> bool:
        return path == listed or path.startswith(listed + ".") or path.startswith(listed + "[")

    found = []
    for change in changed:
        general = re.sub(r"\[\d+\]", "[*]", change)
        if any(at_or_under(general, p) or at_or_under(p, general) for p in paths):
            found.append(change)
    return found


def replaced_by(type_token: str, changed: list[str]) -> list[str] | None:
    """The changed input paths that make the provider replace the resource (empty: an update in place);
    None when the table does not know the type."""
    if type_token.startswith("tls:"):
        return [c for c in changed if c not in _TLS_IN_PLACE]
    if type_token.startswith("random:"):
        return list(changed)
    if type_token.startswith("kubernetes:"):
        kind = type_token.split(":", 1)[1]
        if kind == "helm.sh/v3:Release":
            return _matching(changed, ("name", "namespace"))
        every_kind, kinds = kubernetes_force_new()
        return _matching(changed, every_kind + kinds.get(kind, ()))
    paths = aws_force_new().get(type_token)
    return None if paths is None else _matching(changed, paths)


def refused_changes(type_token: str, changed: list[str]) -> list[str]:
    """Changed paths the API server refuses to update and the provider does not replace on."""
    if not type_token.startswith("kubernetes:"):
        return []
    return _matching(changed, _K8S_IMMUTABLE.get(type_token.split(":", 1)[1], ()))
