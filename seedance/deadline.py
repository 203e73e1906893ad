"""One overall deadline for a command that talks to a network: a per-call timeout does not bound a server
that drips a byte at a time, or an endpoint that accepts and never answers (retries included)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any


def within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work`'s answer, or TimeoutError after `seconds` in all (an endpoint that accepts and never answers
    would hold every call to its own read timeout, retries included)."""
    import threading

    answer: list = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            answer.append(work())
        except BaseException as error:  # handed to the caller's thread, raised there
            failure.append(error)

    worker = threading.Thread(target=run, daemon=True)  # abandoned at the deadline, never joined after it
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if failure:
        raise failure[0]
    return answer[0]


def bounded(low: float, high: float, allowed: str, *, above_low: bool = False) -> Callable[[str], float]:
    """An argparse type: a number from `low` (or above it) to `high`, else one line saying what is allowed."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not ((low < value) if above_low else (low <= value)) or not value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: allowed: {allowed}")
        return value

    return parse


# Every command's --timeout: a number of seconds (not nan, not inf, not 0 or less).
timeout_seconds = bounded(0, 3600, "above 0 up to 3600 seconds", above_low=True)
