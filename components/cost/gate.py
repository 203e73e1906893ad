"""The CI cost gate's arithmetic: a serving set's cost per 1,000 successful requests over a window, from
OpenCost's allocation API and Prometheus's query API answers, against the stack's threshold. Pure:
the command fetches, this reads and judges (documents of the APIs' documented shapes)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from seedance_client.errors import InputError

WINDOW = re.compile(r"^(\d{1,3})([hd])$")
MAX_WINDOW_HOURS = 30 * 24


class GateInputError(InputError):
    """An answer or an argument the gate cannot judge from (exit code 2), named."""


def window_hours(text: str) -> int:
    match = WINDOW.fullmatch(text)  # not .match: "7d\n" is no window
    hours = int(match.group(1)) * (24 if match.group(2) == "d" else 1) if match else 0
    if not 1 <= hours <= MAX_WINDOW_HOURS:
        raise GateInputError(f"--window = {text!r}: allowed: 1h to 30d, such as 7d or 36h")
    return hours


# A window OpenCost holds less than this share of is not judged: its history is Prometheus's, which a
# restart (an emptyDir) or a short retention cuts.
MIN_COVERAGE = 0.9
# Steps that add up to more than the window (beyond a step's rounding) are not an allocation of it.
MAX_COVERAGE = 1.05


def allocation_cost(document: Any, namespace: str, hours: int) -> float:
    """The namespace's totalCost summed over every step of a `GET /allocation?aggregate=namespace` answer
    (`{"code": 200, "data": [{"<namespace>": {"totalCost": ..., "minutes": ...}, ...}, ...]}`), refused
    when the entries cover less of the window than MIN_COVERAGE."""
    if not isinstance(document, dict) or document.get("code") != 200 or not isinstance(document.get("data"), list):
        raise GateInputError(f"OpenCost answered {str(document)[:120]!r}, not an allocation result (code 200, data)")
    found, total, minutes = False, 0.0, 0.0
    for step in document["data"]:
        entry = (step or {}).get(namespace) if isinstance(step, dict) else None
        if entry is None:
            continue
        cost = entry.get("totalCost") if isinstance(entry, dict) else None
        if not isinstance(cost, (int, float)) or isinstance(cost, bool) or not math.isfinite(cost) or cost < 0:
            raise GateInputError(f"OpenCost's totalCost for {namespace} is {cost!r}, not a cost")
        covered = entry.get("minutes")
        if isinstance(covered, (int, float)) and not isinstance(covered, bool) and math.isfinite(covered):
            minutes += float(covered)
        found, total = True, total + float(cost)
    if not found:
        raise GateInputError(
            f"OpenCost holds no cost for namespace {namespace} in the window (is the set deployed, "
            "and OpenCost running as long as the window?)"
        )
    if minutes > MAX_COVERAGE * hours * 60:
        raise GateInputError(
            f"OpenCost says {namespace} ran {minutes / 60:,.0f} h in the {hours} h window: more than "
            "the window holds, not an allocation of it"
        )
    if total == 0:
        # A deployed set's pods hold nodes; no cost means OpenCost priced nothing (its custom prices missing).
        raise GateInputError(
            f"OpenCost prices {namespace} at $0 over {minutes / 60:,.0f} h: it holds no prices "
            "for the set's nodes (is its custom pricing loaded?)"
        )
    if minutes < MIN_COVERAGE * hours * 60:
        raise GateInputError(
            f"OpenCost holds {minutes / 60:.0f} h of the {hours} h window for {namespace} (its "
            "history is Prometheus's: monitoring.retention_hours, and none before its last "
            "restart); judge a shorter --window"
        )
    return total


def instant_value(document: Any, query: str) -> float:
    """The one value of an instant vector answer of `GET /api/v1/query` (an empty result: no series)."""
    data = document.get("data") if isinstance(document, dict) and document.get("status") == "success" else None
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise GateInputError(f"Prometheus answered {str(document)[:120]!r} to {query}, not a vector")
    result = data.get("result") or []
    if len(result) != 1:
        raise GateInputError(
            f"Prometheus has {'no' if not result else len(result)} series for {query} (the set's "
            "requests are counted by Triton's nv_inference_request_success)"
        )
    try:
        value = float(result[0]["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        raise GateInputError(f"Prometheus's value for {query} is not a number: {result[0]!r}"[:200]) from None
    if not math.isfinite(value) or value < 0:
        raise GateInputError(f"Prometheus's value for {query} is {value}")
    return value


def requests_query(namespace: str, hours: int) -> str:
    return f'sum(increase(nv_inference_request_success{{namespace="{namespace}"}}[{hours}h]))'


@dataclass(frozen=True)
class GateResult:
    cost_usd: float
    requests: float
    usd_per_1000: float
    threshold: float

    @property
    def passed(self) -> bool:
        return self.usd_per_1000 <= self.threshold

    def line(self, name: str, window: str) -> str:
        per_dollar = f"{self.requests / self.cost_usd:,.0f}" if self.cost_usd else "unbounded"
        return (
            f"{name}: ${self.cost_usd:,.2f} over {window} for {self.requests:,.0f} successful requests: "
            f"${self.usd_per_1000:.4f} per 1,000 requests ({per_dollar} requests per dollar); threshold "
            f"${self.threshold:.4f}: {'passes' if self.passed else 'FAILS'}"
        )


def judge(cost_usd: float, requests: float, threshold: float) -> GateResult:
    if requests <= 0:
        raise GateInputError("no successful requests in the window: the cost per request cannot be judged")
    return GateResult(cost_usd, requests, 1000 * cost_usd / requests, threshold)
