"""The program's edge: its config as Pulumi's runtime hands it over, and config errors as the one-line
error `pulumi up` (and the offline engine) print without a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pulumi

from components.stack.config import ConfigError, StackConfig, parse_config_values


def load_from_pulumi() -> StackConfig:
    """The running program's config (what `pulumi up` or the offline engine passed in)."""
    from pulumi.runtime.config import CONFIG, get_config_env

    values = {**get_config_env(), **CONFIG.get()}
    return parse_config_values({str(k): str(v) for k, v in values.items()})


@contextmanager
def config_errors_as_run_errors() -> Iterator[None]:
    """Inside, a `ConfigError` (a bad value, lock or placeholder) ends the run as `pulumi.RunError`."""
    try:
        yield
    except ConfigError as error:
        raise pulumi.RunError(str(error)) from None
