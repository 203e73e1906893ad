"""Preview values in plans: the engine's unknown sentinel, put where a preview would put it."""

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def unknown_at(value, depth):
    """Every value `depth` levels into the inputs replaced by the engine's unknown sentinel."""
    if depth == 0:
        return UNKNOWN
    if isinstance(value, dict):
        return {k: unknown_at(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [unknown_at(v, depth - 1) for v in value]
    return value
