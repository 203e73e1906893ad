"""The committed stacks as tests read them: validated configs, changed copies of stack files."""

from __future__ import annotations

from pathlib import Path

import yaml

from components.stack.config import parse_config_values
from seedance_client.project import find_project, load_stack_config

REPO = Path(__file__).resolve().parent.parent
STACKS = ("dev", "staging", "prod")


def stack_config(stack, **changes):
    """A committed stack's validated config, with top-level fields replaced by `changes`."""
    project = find_project(REPO)
    values = dict(load_stack_config(project, project.stack_file(stack)).values)
    config = parse_config_values(values)
    return config.model_copy(update=changes) if changes else config


def bad_stack(tmp_path, path, value, stack="dev"):
    """A copy of a committed stack file with the value at `path` (keys down the YAML) replaced."""
    document = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    node = document["config"]
    *parents, last = path
    for part in parents:
        node = node[part]
    node[last] = value
    stack_file = tmp_path / "Pulumi.bad.yaml"
    stack_file.write_text(yaml.safe_dump(document))
    return stack_file
