"""The stack is derived once, from its config and an injected clock: its reports read the same on any
later day for the same inputs, and a derived value that does not fit is a one-line config error."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from components.stack.capacity import RunMode, table_zones
from components.stack.config import ConfigError
from components.stack.derivation import derive, stack_reports
from tests.stacks import STACKS, stack_config

STACKS_DIR = Path(__file__).resolve().parents[2] / "stacks"


@pytest.mark.parametrize("stack", STACKS)
def test_reports_are_the_same_on_another_day(stack):
    config = stack_config(stack)
    days = [datetime(2026, 12, 5, tzinfo=UTC), datetime(2027, 3, 1, 7, 30, tzinfo=UTC)]
    reports = [
        stack_reports(
            config, stack, derive(config, stack, table_zones(config), STACKS_DIR, day, RunMode.offline_plan()), {}
        )
        for day in days
    ]
    assert reports[0] == reports[1]


def test_a_profile_no_volume_meets_is_a_config_error_at_derivation():
    config = stack_config("prod")
    profile = config.storage.checkpoints.profile.model_copy(update={"checkpoint_gb": 100_000})
    storage = config.storage.model_copy(
        update={"checkpoints": config.storage.checkpoints.model_copy(update={"profile": profile})}
    )
    with pytest.raises(ConfigError, match=r"^invalid config seedance-gpu:storage\.checkpoints\.profile\."):
        derive(
            config.model_copy(update={"storage": storage}),
            "prod",
            table_zones(config),
            STACKS_DIR,
            datetime.now(UTC) + timedelta(days=1),
            RunMode.offline_plan(),
        )
