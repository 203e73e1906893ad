"""Helpers shared by the config models: field-named errors and CIDR parsing."""

from __future__ import annotations

import ipaddress
from typing import Any


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
