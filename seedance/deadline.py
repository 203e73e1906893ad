"""One overall deadline for a command that talks to a network: a per-call timeout does not bound a server
that drips a byte at a time, or an endpoint that accepts and never answers (retries included)."""

from __future__ import annotations

from typing import Any, Callable


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
