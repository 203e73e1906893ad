"""Render a `Plan` as text (a resource tree) or as JSON; secrets are masked unless asked for. An offline
plan holds no real secret (encrypted config and generated keys are stand-ins), but a reader of its file
need not know that."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pulumi
from pulumi.runtime.rpc import UNKNOWN

from components.plan.resources import MASK
from seedance_client.engine import Plan, PlannedResource, Secret


def asset_json(value: Any) -> dict[str, Any] | None:
    """An asset or archive input as plain data: where its contents come from, never the contents."""
    if isinstance(value, (pulumi.FileAsset, pulumi.FileArchive)):
        return {type(value).__name__: str(value.path)}
    if isinstance(value, (pulumi.RemoteAsset, pulumi.RemoteArchive)):
        return {type(value).__name__: value.uri}
    if isinstance(value, pulumi.StringAsset):
        return {"StringAsset": f"{len(value.text.encode())} bytes"}
    if isinstance(value, pulumi.AssetArchive):
        return {"AssetArchive": {name: asset_json(member) for name, member in value.assets.items()}}
    return None


def masked(value: Any, show_secrets: bool = False) -> Any:
    if isinstance(value, Secret):
        return masked(value.value, show_secrets) if show_secrets else MASK
    if isinstance(value, (pulumi.Asset, pulumi.Archive)):
        return asset_json(value)
    if isinstance(value, dict):
        return {k: masked(v, show_secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, show_secrets) for v in value]
    if value == UNKNOWN:
        return "(unknown)"
    return value


def plan_to_json(plan: Plan, show_secrets: bool = False) -> dict[str, Any]:
    """`show_secrets`: the gate renders Helm releases from their values, secret ones too."""
    return {
        "project": plan.project,
        "stack": plan.stack,
        "resources": [
            {
                "urn": r.urn,
                "type": r.type,
                "name": r.name,
                "id": r.id,
                "parent": r.parent,
                "dependencies": list(r.dependencies),
                "inputs": masked(r.inputs, show_secrets),
            }
            for r in plan.resources
        ],
        "outputs": masked(plan.outputs),
    }


def _tree_lines(plan: Plan) -> list[str]:
    urns = {r.urn for r in plan.resources}
    children: dict[str | None, list[PlannedResource]] = {}
    for resource in plan.resources:
        parent = resource.parent if resource.parent in urns else None
        children.setdefault(parent, []).append(resource)

    lines: list[str] = []

    def walk(parent: str | None, prefix: str) -> None:
        nodes = sorted(children.get(parent, []), key=lambda r: (r.custom, r.type, r.name))
        for index, node in enumerate(nodes):
            last = index == len(nodes) - 1
            lines.append(f"{prefix}{'└─ ' if last else '├─ '}{node.type}  {node.name}")
            walk(node.urn, prefix + ("   " if last else "│  "))

    walk(None, "")
    return lines


def plan_to_text(plan: Plan, header: str, omit_outputs: tuple[str, ...] = ()) -> str:
    """The resource tree, counts by type and outputs (less those another section shows)."""
    counts = Counter(r.type for r in plan.resources)
    lines = [header, "", f"Resources ({len(plan.resources)}):", f"{plan.project}-{plan.stack}"]
    lines += ["  " + line for line in _tree_lines(plan)]
    lines += ["", "Counts by type:"]
    lines += [f"  {count:4d}  {token}" for token, count in sorted(counts.items())]
    lines += ["", "Outputs:"]
    for key, value in sorted(plan.outputs.items()):
        if key in omit_outputs:
            lines.append(f"  {key}: (below)")
            continue
        shown = masked(value)
        lines.append(f"  {key}: {shown if isinstance(shown, str) else json.dumps(shown)}")
    return "\n".join(lines)
