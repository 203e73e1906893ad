"""Helpers shared by the config models: field-named errors, CIDR parsing, patterns over lists."""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import AwareDatetime, BeforeValidator

# Patterns several config slices check against (with all_match, or anchored in a Field).
IAM_ROLE_ARN = r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+"
S3_BUCKET_NAME = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"


class FieldError(ValueError):
    """A rule over several fields, reported against the one (relative to the model) the user should change."""

    def __init__(self, field: str, value: Any, allowed: str):
        super().__init__(allowed)
        self.field, self.value, self.allowed = field, value, allowed


def parse_cidr(value: str, example: str) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(value)
    except ValueError:
        raise ValueError(f"must be an IPv4 network in CIDR form such as {example}") from None


def all_match(values: list[str], pattern: str, what: str) -> list[str]:
    """`values` when every one matches `pattern` in full; else a ValueError naming the first that does not."""
    for value in values:
        if not re.fullmatch(pattern, value):
            raise ValueError(f"{value!r} is not {what}")
    return values


def clipped(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters; else its head and tail around a count of what was cut
    (an error line stays readable when the value it quotes is a thousand tenants long)."""
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail - 40
    return f"{text[:head]} ... ({len(text) - head - tail:,} characters cut) ... {text[-tail:]}"


def _iso_time(value: Any) -> Any:
    # Config values are validated strictly (no coercion), but a time is written as text in YAML and JSON.
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 time such as 2027-06-01T00:00:00Z") from None
    return value


IsoTime = Annotated[AwareDatetime, BeforeValidator(_iso_time)]
