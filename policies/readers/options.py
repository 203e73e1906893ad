"""A container's command-line options as its program reads them. Go's flag package (the cluster autoscaler,
metrics-server) takes `-name` and `--name`, `=value` or, for a flag that is not a boolean, the next word,
and the last one given wins; kingpin (Prometheus) also takes `--no-name` for false; Triton's getopt_long
takes each restricted-API option as often as it is given. Words come from the command and the arguments,
a shell string split as a shell splits these options. Pure."""

from __future__ import annotations

import re
from typing import Any

TRUE = frozenset({"1", "t", "true"})  # strconv.ParseBool's true spellings, compared in lower case


def words(container: dict[str, Any]) -> list[str]:
    """The words of its command and arguments (quotes around a value are not part of it)."""
    return [
        word.replace('"', "").replace("'", "")
        for part in [*(container.get("command") or []), *(container.get("args") or [])]
        for word in str(part).split()
    ]


def programs(container: dict[str, Any]) -> set[str]:
    """What it runs: its image's repository name and the base name of each word that is not an option."""
    image = str(container.get("image") or "").split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    return {image, *(w.rsplit("/", 1)[-1] for w in words(container) if w and not w.startswith("-"))} - {""}


def values(container_words: list[str], name: str, takes_value: bool = False) -> list[str]:
    """Every value given to option `name`, in order: "true" for a bare boolean, "false" for kingpin's
    `--no-name`."""
    found = []
    for index, word in enumerate(container_words):
        flag, given, value = word.partition("=")
        bare = flag.lstrip("-")
        if not flag.startswith("-"):
            continue
        if bare == name:
            if given:
                found.append(value)
            elif takes_value:
                found.append(container_words[index + 1] if index + 1 < len(container_words) else "")
            else:
                found.append("true")
        elif bare == f"no-{name}" and not given:
            found.append("false")
    return found


def switched_on(container_words: list[str], name: str) -> bool:
    """Whether a boolean option ends up true (the last spelling wins)."""
    given = values(container_words, name)
    return bool(given) and given[-1].lower() in TRUE


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_MINUTES = {"ns": 1 / 6e10, "us": 1 / 6e7, "µs": 1 / 6e7, "ms": 1 / 6e4, "s": 1 / 60, "m": 1.0, "h": 60.0}


def minutes(duration: str) -> float | None:
    """A Go duration (`10m`, `1h30m`, `600s`) in minutes; None when it is not one."""
    parts = _DURATION_PART.findall(duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        return None
    return sum(float(n) * _MINUTES[u] for n, u in parts)
