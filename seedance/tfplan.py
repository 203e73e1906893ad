"""A plan's AWS resources as Terraform plan JSON, so scanners that read Terraform plans (checkov
`--framework terraform_plan`, conftest) can read ours. Pure.

Types map by the provider's naming (`aws:ebs/volume:Volume` -> `aws_ebs_volume`; EC2 resources drop
the module: `aws_launch_template`), inputs go to snake_case, and nested objects become one-element
lists as Terraform's blocks are; maps such as tags stay maps.
"""

from __future__ import annotations

import re
from typing import Any

from components.resource_types import TERRAFORM_TYPES, PlanResource, is_unknown

PROVIDER = "registry.terraform.io/hashicorp/aws"
# Attributes that are maps in the Terraform schema, not blocks.
MAP_ATTRIBUTES = {"tags", "tags_all", "labels", "parameters", "variables", "environment", "dimensions"}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def terraform_type(token: str) -> str | None:
    if token in TERRAFORM_TYPES:
        return TERRAFORM_TYPES[token]
    match = re.fullmatch(r"aws:([a-zA-Z0-9]+)/[a-zA-Z0-9]+:([A-Za-z0-9]+)", token)
    if not match:
        return None
    module, resource = match.group(1).lower(), _snake(match.group(2))
    return f"aws_{resource}" if module == "ec2" else f"aws_{module}_{resource}"


def _attributes(value: Any, key: str | None = None) -> Any:
    if is_unknown(value) or value == "[secret]":
        return None
    if isinstance(value, dict):
        converted = {(k if key in MAP_ATTRIBUTES else _snake(k)): _attributes(v, None if key in MAP_ATTRIBUTES else _snake(k))
                     for k, v in value.items()}
        return converted
    if isinstance(value, list):
        return [_attributes(v, key) for v in value]
    return value


def _after(props: dict[str, Any]) -> dict[str, Any]:
    after = {}
    for name, value in props.items():
        key = _snake(name)
        converted = _attributes(value, key)
        if isinstance(converted, dict) and key not in MAP_ATTRIBUTES:
            converted = [converted]  # a nested block
        elif isinstance(converted, list) and key in ("tags",):
            converted = {t.get("key"): t.get("value") for t in converted if isinstance(t, dict)}  # ASG tag list
        after[key] = converted
    return after


def terraform_plan(resources: list[PlanResource]) -> dict[str, Any]:
    planned, changes, seen = [], [], set()
    for resource in resources:
        kind = terraform_type(resource.type)
        if kind is None:
            continue
        name = re.sub(r"[^A-Za-z0-9_-]", "_", resource.name)
        while f"{kind}.{name}" in seen:
            name += "_"
        address = f"{kind}.{name}"
        seen.add(address)
        after = _after(resource.props)
        common = {"address": address, "mode": "managed", "type": kind, "name": name, "provider_name": PROVIDER}
        planned.append({**common, "schema_version": 0, "values": after, "sensitive_values": {}})
        changes.append({**common, "change": {"actions": ["create"], "before": None, "after": after,
                                             "after_unknown": {}, "before_sensitive": False, "after_sensitive": {}}})
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.8",
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {"provider_config": {"aws": {"name": "aws", "full_name": PROVIDER}},
                          "root_module": {"resources": []}},
    }
