"""Reading a seedance stack's validated config for the commands that act on a stack without planning it."""

from __future__ import annotations

from pathlib import Path

from components.stack.config import ConfigError, StackConfig, check_stack_env, parse_config_values
from seedance_client.errors import InputError
from seedance_client.project import Project, StackFileError, find_project, load_stack_config


class StackInputError(InputError):
    """The project, stack file or config is unreadable or invalid (one line, exit code 2)."""


def load_stack(program: Path | None, stack: str, stack_file: Path | None) -> tuple[Project, StackConfig]:
    try:
        project = find_project(program or Path.cwd())
        values = load_stack_config(project, stack_file or project.stack_file(stack)).values
        config = parse_config_values(values)
        check_stack_env(config, stack)
        return project, config
    except (StackFileError, ConfigError) as error:
        raise StackInputError(str(error)) from None
