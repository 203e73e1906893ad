"""How the generators in scripts/ hand over a table: JSON, to a file or to standard output."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def write_table(document: dict, out: Path | None, indent: int = 1) -> int:
    text = json.dumps(document, indent=indent) + "\n"
    if out:
        out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0
