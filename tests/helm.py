"""Helm releases of an in-process plan rendered as the gate renders them (seedance/charts.py)."""

from __future__ import annotations

from seedance import charts
from seedance.check_command import revealed


def values_of(release) -> dict:
    """A release's values as the chart gets them (the plan keeps each secret in them secret)."""
    return revealed(release.inputs.get("values") or {})


def render_release(release, kubernetes_version: str, values: dict | None = None) -> list[dict]:
    """The objects a `kubernetes:helm.sh/v3:Release` of a plan installs (with `values` instead of its own)."""
    try:
        return charts.render({**release.inputs, "values": values_of(release)}, kubernetes_version, values)
    except charts.ChartMissingError as error:
        raise AssertionError(str(error)) from None
