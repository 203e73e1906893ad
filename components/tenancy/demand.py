"""A history of the teams' GPU demand, read from a CSV a user brings (`seedance quotas plan --demand FILE`):
untrusted input, bounded before it is parsed, each problem one error naming the line, the column, the value
and what is allowed.

A row is `time,tenant,class,gpus[,quota]`: at `time`, the GPUs the team's running and queued work of that
class asked for, and optionally the team's quota then. Times are ISO 8601 (UTC when no zone is given) or
seconds from any origin, one form per file, at any step. A team's value holds until its next row (zero
before its first); the history ends one step after its last time, the step being the smallest gap between
two of its times, so an hourly history's last hour counts as an hour.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from components.tenancy.config import NAME_PATTERN
from components.tenancy.queues import FLAVOR_ORDER
from seedance_client.errors import InputError

MAX_DEMAND_BYTES = 32 << 20
MAX_ROWS = 1_000_000
MAX_GPUS = 100_000  # per team and class: more than any cluster's GPUs
COLUMNS = ("time", "tenant", "class", "gpus")
OPTIONAL = ("quota",)
SECONDS_PER_HOUR = 3600.0
CLASSES = tuple(FLAVOR_ORDER)  # the classes teams queue work in


class DemandError(InputError):
    """A demand history that cannot be read as one (one line; exit code 2)."""


@dataclass(frozen=True)
class DemandHistory:
    """Per (team, class), its demand over the intervals between `times` (ascending; the last is the end)."""

    times: tuple[float, ...]  # seconds
    demand: Mapping[tuple[str, str], tuple[int, ...]]  # one value per interval
    quotas: Mapping[tuple[str, str], tuple[int | None, ...]]  # the row's quota, held like the demand

    @property
    def intervals(self) -> int:
        return len(self.times) - 1

    def hours(self, interval: int) -> float:
        return (self.times[interval + 1] - self.times[interval]) / SECONDS_PER_HOUR

    @property
    def total_hours(self) -> float:
        return (self.times[-1] - self.times[0]) / SECONDS_PER_HOUR

    def classes(self) -> list[str]:
        return [k for k in CLASSES if any(klass == k for _team, klass in self.demand)]

    def teams(self, klass: str) -> list[str]:
        return sorted(team for team, k in self.demand if k == klass)


def read_demand(text: str, source: str) -> DemandHistory:
    """The history in `text` (the file's contents; `source` names it in errors)."""
    if len(text) > MAX_DEMAND_BYTES:
        raise DemandError(f"{source}: larger than {MAX_DEMAND_BYTES:,} bytes")
    rows = list(_rows(text, source))
    if not rows:
        raise DemandError(f"{source}: no rows after the header; allowed: at least one `time,tenant,class,gpus` row")
    distinct = sorted({time for time, *_rest in rows})
    gaps = [b - a for a, b in zip(distinct, distinct[1:])]
    step = min(gaps) if gaps else SECONDS_PER_HOUR  # a single time: one hour of it
    times = (*distinct, distinct[-1] + step)
    index = {time: i for i, time in enumerate(distinct)}
    changes: dict[tuple[str, str], dict[int, tuple[int, int | None]]] = {}
    for line, (time, team, klass, gpus, quota) in enumerate(rows, start=2):
        at = changes.setdefault((team, klass), {})
        if index[time] in at:
            raise DemandError(f"{source}: line {line}: a second row for {team} {klass} at the same time")
        at[index[time]] = (gpus, quota)
    demand, quotas = {}, {}
    for key, at in changes.items():
        level: tuple[int, int | None] = (0, None)
        held = []
        for interval in range(len(distinct)):
            level = at.get(interval, level)
            held.append(level)
        demand[key] = tuple(g for g, _q in held)
        quotas[key] = tuple(q for _g, q in held)
    return DemandHistory(times, demand, quotas)


def _rows(text: str, source: str) -> Iterator[tuple[float, str, str, int, int | None]]:
    reader = csv.reader(io.StringIO(text))
    try:
        yield from _parsed(reader, source)
    except csv.Error as error:  # a field past the reader's limit, a NUL, a broken quote
        raise DemandError(f"{source}: line {reader.line_num}: not CSV ({error})") from None


def _parsed(reader: Iterator[list[str]], source: str) -> Iterator[tuple[float, str, str, int, int | None]]:
    header = [name.strip() for name in next(reader, [])]
    if header[: len(COLUMNS)] != list(COLUMNS) or header[len(COLUMNS) :] not in ([], list(OPTIONAL)):
        raise DemandError(
            f"{source}: line 1: header {','.join(header)[:200]!r}; allowed: {','.join(COLUMNS)}"
            f" or {','.join(COLUMNS + OPTIONAL)}"
        )
    numeric: bool | None = None  # the file's form of time, from its first row
    for line, row in enumerate(reader, start=2):
        if line - 1 > MAX_ROWS:
            raise DemandError(f"{source}: more than {MAX_ROWS:,} rows")
        if not row:
            continue
        if len(row) != len(header):
            raise DemandError(f"{source}: line {line}: {len(row)} columns; allowed: {len(header)}, as the header")
        time_text, team, klass, gpus_text, *rest = (cell.strip() for cell in row)
        numeric = _is_number(time_text) if numeric is None else numeric
        time = _time(time_text, numeric, f"{source}: line {line}: time")
        if not re.fullmatch(NAME_PATTERN, team):
            raise DemandError(
                f"{source}: line {line}: tenant {team[:80]!r}; allowed: a team's name (lowercase letters, digits "
                "and '-', at most 40)"
            )
        if klass not in CLASSES:
            raise DemandError(f"{source}: line {line}: class {klass[:80]!r}; allowed: {', '.join(CLASSES)}")
        gpus = _count(gpus_text, f"{source}: line {line}: gpus")
        quota = _count(rest[0], f"{source}: line {line}: quota") if rest and rest[0] else None
        yield time, team, klass, gpus, quota


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _time(text: str, numeric: bool, where: str) -> float:
    try:
        if numeric:
            value = float(text)
        else:
            moment = datetime.fromisoformat(text)
            value = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError):
        form = "seconds, as the first row's" if numeric else "an ISO 8601 time, as the first row's"
        raise DemandError(f"{where} {text[:80]!r}; allowed: {form}") from None
    if not math.isfinite(value):
        raise DemandError(f"{where} {text[:80]!r}; allowed: a finite time")
    return value


def _count(text: str, where: str) -> int:
    if not (text.isdigit() and text.isascii() and int(text) <= MAX_GPUS):
        raise DemandError(f"{where} {text[:80]!r}; allowed: a whole number of GPUs from 0 to {MAX_GPUS:,}")
    return int(text)
