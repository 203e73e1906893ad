"""CloudWatch Logs retention periods: it accepts only these (days)."""

LOG_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)


def valid_retention(value: int) -> int:
    """For pydantic validators of retention fields."""
    if value not in LOG_RETENTION_DAYS:
        raise ValueError(f"CloudWatch accepts one of {', '.join(map(str, LOG_RETENTION_DAYS))}")
    return value
