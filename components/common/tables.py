"""The one table helper: reports render their rows with it, in the program's outputs and in the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate


def table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], *, markdown: bool = False, floatfmt: str = ",.2f"
) -> list[str]:
    """Rows under headers, numbers right-aligned; `markdown` for a GitHub table (PR comments, docs)."""
    text = tabulate(
        rows,
        headers=headers,
        tablefmt="github" if markdown else "simple",
        floatfmt=floatfmt,
        intfmt=",",
        disable_numparse=False,
    )
    return text.splitlines()
