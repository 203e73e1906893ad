"""The capacity slice of the stack config (components/capacity/config.py): what reaches the planner."""

from datetime import timedelta

import pytest


def test_the_configured_settings_reach_the_planner_field_by_field():
    from components.capacity.config import CapacityConfig

    settings = CapacityConfig.model_validate(
        {
            "spot_price_ratio": 0.55,
            "horizon_hours": 72,
            "price_noise": 0.1,
            "max_price_age_hours": 3,
            "min_spot_types": 2,
        }
    ).settings()
    assert (
        settings.spot_price_ratio,
        settings.horizon_hours,
        settings.max_price_age,
        settings.price_noise,
        settings.min_spot_types,
    ) == (0.55, 72, timedelta(hours=3), 0.1, 2)


def test_an_unknown_gpu_type_is_refused_with_the_known_ones():
    from components.capacity.config import known_gpu_type
    from components.catalog.instance_types import gpu_instance_types

    assert known_gpu_type("g6.xlarge") == "g6.xlarge"
    with pytest.raises(ValueError) as error:
        known_gpu_type("g9.xlarge")
    assert str(error.value) == f"not in the GPU instance table; known: {', '.join(sorted(gpu_instance_types()))}"
