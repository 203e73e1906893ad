"""A plan's AWS resources as Terraform plan JSON, so scanners that read Terraform plans (checkov
`--framework terraform_plan`, conftest) can read ours. Pure.

Types map by the provider's naming (`aws:ebs/volume:Volume` -> `aws_ebs_volume`; EC2 resources drop
the module: `aws_launch_template`), inputs go to snake_case, and nested objects become one-element
lists as Terraform's blocks are; maps such as tags stay maps.
"""

from __future__ import annotations

import re
from typing import Any

from components.plan.resources import MASK, TERRAFORM_TYPES, PlanResource, is_unknown

PROVIDER = "registry.terraform.io/hashicorp/aws"
# Attributes that are maps in the Terraform schema, not blocks.
MAP_ATTRIBUTES = {"tags", "tags_all", "labels", "parameters", "variables", "environment", "dimensions"}
# Repeated blocks Pulumi names in the plural where Terraform uses the singular block name.
TERRAFORM_BLOCK_NAMES = {
    "rules": "rule",
    "overrides": "override",
    "notifications": "notification",
    "cost_filters": "cost_filter",
}


def _snake(name: str) -> str:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return TERRAFORM_BLOCK_NAMES.get(snake, snake)


def terraform_type(token: str) -> str | None:
    if token in TERRAFORM_TYPES:
        return TERRAFORM_TYPES[token]
    match = re.fullmatch(r"aws:([a-zA-Z0-9]+)/[a-zA-Z0-9]+:([A-Za-z0-9]+)", token)
    if not match:
        return None
    module, resource = match.group(1).lower(), _snake(match.group(2))
    return f"aws_{resource}" if module == "ec2" else f"aws_{module}_{resource}"


def _attributes(value: Any, key: str | None = None) -> Any:
    """Inputs as Terraform attributes: snake_case names, nested objects as one-element block lists at
    every depth, maps (tags...) kept as maps, unknown and masked values as null."""
    if is_unknown(value) or value == MASK:
        return None
    if isinstance(value, dict):
        if key in MAP_ATTRIBUTES:
            return {k: _attributes(v, key) for k, v in value.items()}
        return _block({_snake(k): v for k, v in value.items()})
    if isinstance(value, list):
        if key == "tags":  # an ASG's tag list: a map in the Terraform plan
            return {t.get("key"): t.get("value") for t in value if isinstance(t, dict)}
        return [_attributes(v, key) for v in value]
    return value


def _block(fields: dict[str, Any]) -> dict[str, Any]:
    converted = {}
    for key, value in fields.items():
        attribute = _attributes(value, key)
        converted[key] = [attribute] if isinstance(value, dict) and key not in MAP_ATTRIBUTES else attribute
    return converted


def _after(props: dict[str, Any]) -> dict[str, Any]:
    return _block({_snake(name): value for name, value in props.items()})


def _expressions(after: Any, addresses: dict[str, str], own: str) -> Any:
    """The configuration's expressions for one resource: where a value is another resource's id, a
    reference to it (as Terraform records `aws_vpc.main.id`), so graph checks see the links (a bucket's
    versioning, a VPC's default security group, a group's launch template). None where nothing refers."""
    if isinstance(after, str):
        target = addresses.get(after)
        return {"references": [f"{target}.id", target]} if target and target != own else None
    if isinstance(after, list):
        if after and all(isinstance(v, str) for v in after):
            targets = [addresses[v] for v in after if addresses.get(v) not in (None, own)]
            return {"references": [ref for t in targets for ref in (f"{t}.id", t)]} if targets else None
        blocks = [_expressions(v, addresses, own) for v in after]
        return [b or {} for b in blocks] if any(blocks) else None
    if isinstance(after, dict):
        found = {k: e for k, v in after.items() if (e := _expressions(v, addresses, own)) is not None}
        return found or None
    return None


def terraform_plan(resources: list[PlanResource]) -> dict[str, Any]:
    planned, changes, configured, seen = [], [], [], set()
    entries = []
    for resource in resources:
        kind = terraform_type(resource.type)
        if kind is None:
            continue
        name = re.sub(r"[^A-Za-z0-9_-]", "_", resource.name)
        while f"{kind}.{name}" in seen:
            name += "_"
        address = f"{kind}.{name}"
        seen.add(address)
        entries.append((resource, kind, name, address, _after(resource.props)))
    addresses = {r.id: address for r, _kind, _name, address, _after_ in entries if r.id}
    for _resource, kind, name, address, after in entries:
        common = {"address": address, "mode": "managed", "type": kind, "name": name, "provider_name": PROVIDER}
        planned.append({**common, "schema_version": 0, "values": after, "sensitive_values": {}})
        changes.append(
            {
                **common,
                "change": {
                    "actions": ["create"],
                    "before": None,
                    "after": after,
                    "after_unknown": {},
                    "before_sensitive": False,
                    "after_sensitive": {},
                },
            }
        )
        configured.append(
            {
                "address": address,
                "mode": "managed",
                "type": kind,
                "name": name,
                "provider_config_key": "aws",
                "schema_version": 0,
                "expressions": _expressions(after, addresses, address) or {},
            }
        )
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.8",
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {
            "provider_config": {"aws": {"name": "aws", "full_name": PROVIDER}},
            "root_module": {"resources": configured},
        },
    }
