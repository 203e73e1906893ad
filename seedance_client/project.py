"""Read a Pulumi project (`Pulumi.yaml`) and a stack's config file the way the Pulumi CLI does."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedance_client.files import InputFileError, load_yaml

# The value an encrypted (`secure:`) config entry gets offline: no secrets provider is reachable.
OFFLINE_SECRET_PLACEHOLDER = "offline-plan-secret"


class StackFileError(Exception):
    """The project or stack file cannot be read (a user error, exit code 2)."""


@dataclass(frozen=True)
class Project:
    name: str
    root: Path
    program_dir: Path
    stack_config_dir: Path

    def stack_file(self, stack: str) -> Path:
        # Pulumi's own rule for stack names; a name is never a path.
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", stack) or stack in (".", ".."):
            raise StackFileError(
                f"--stack = {stack!r}: allowed: letters, digits, '-', '_' and '.' (a stack name, not a path)"
            )
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"


@dataclass(frozen=True)
class StackFileConfig:
    """A stack's config as the language host receives it: namespaced keys, string values."""

    values: dict[str, str]
    secret_keys: tuple[str, ...]
    source: Path

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)


def _read_yaml(path: Path, what: str) -> Any:
    try:
        return load_yaml(path, what)
    except InputFileError as error:
        raise StackFileError(str(error)) from None


def find_project(start: Path) -> Project:
    """The project whose `Pulumi.yaml` is in `start` or the nearest parent directory."""
    start = start.resolve()
    for directory in (start, *start.parents):
        project_file = directory / "Pulumi.yaml"
        if project_file.is_file():
            break
    else:
        raise StackFileError(f"no Pulumi.yaml in {start} or any parent directory")
    document = _read_yaml(project_file, "project file")
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        raise StackFileError(f"{project_file}: 'name' must be the project name")
    main = document.get("main") or "."
    config_dir = document.get("stackConfigDir") or "."
    return Project(
        name=document["name"],
        root=directory,
        program_dir=(directory / main).resolve(),
        stack_config_dir=(directory / config_dir).resolve(),
    )


def _as_config_string(value: Any) -> str:
    # The CLI hands structured values to the program as JSON, scalars as their YAML text.
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str)  # a YAML date inside a structured value stays its text
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load_stack_config(project: Project, stack_file: Path) -> StackFileConfig:
    document = _read_yaml(stack_file, "stack file") or {}
    if not isinstance(document, dict):
        raise StackFileError(f"{stack_file}: expected a mapping with a 'config' key")
    config = document.get("config") or {}
    if not isinstance(config, dict):
        raise StackFileError(f"{stack_file}: 'config' must be a mapping of keys to values")
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in config.items():
        key = str(key)
        # Keys without a namespace belong to the project, as `pulumi config set` stores them.
        full_key = key if ":" in key else f"{project.name}:{key}"
        if isinstance(value, dict) and set(value) == {"secure"}:
            values[full_key] = OFFLINE_SECRET_PLACEHOLDER
            secret_keys.append(full_key)
            continue
        values[full_key] = _as_config_string(value)
    return StackFileConfig(values=values, secret_keys=tuple(secret_keys), source=stack_file)
