"""Unknown values, the way the Pulumi policy SDK treats them: a reader of a plan (a policy rule, the
cost estimator) that reads a value not known until apply stops with the SDK's `UnknownValueError`;
a rule's finding becomes the SDK's advisory "can't run policy ... during preview", an estimate's line
becomes unknown. A reader that never reads an unknown judges as usual, so a gp2 volume whose key ARN
is still unknown is still a gp2 volume.

The SDK's own proxies are Mappings and Sequences, not dicts and lists; these containers are a dict and
a list, so rules written against plain plan data read them unchanged.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy.proxy import UnknownValueError

from components.plan.resources import UNKNOWN_VALUES


def _checked(value: Any, path: list[str], key: Any) -> Any:
    here = [*path, str(key)]
    if isinstance(value, str) and value in UNKNOWN_VALUES:
        raise UnknownValueError(value, here)
    return checking(value, here)


class CheckingDict(dict):
    def __init__(self, target: dict, path: list[str]):
        super().__init__(target)
        self._path = path

    def __getitem__(self, key):
        return _checked(super().__getitem__(key), self._path, key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]


class CheckingList(list):
    def __init__(self, target: list, path: list[str]):
        super().__init__(target)
        self._path = path

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return _checked(super().__getitem__(index), self._path, index)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def checking(value: Any, path: list[str] | None = None) -> Any:
    """`value` with every dict and list inside raising `UnknownValueError` when an unknown is read."""
    path = path or []
    # dict.items / list.__iter__ read the raw values, so an already checking container re-wraps safely.
    if isinstance(value, dict):
        return CheckingDict(dict(dict.items(value)), path)
    if isinstance(value, list):
        return CheckingList(list(list.__iter__(value)), path)
    return value


def preview_message(policy: str, pack: str, version: str, error: UnknownValueError) -> str:
    """The SDK's wording for a policy that read an unknown (pulumi_policy/policy.py, Analyze)."""
    return f"can't run policy '{policy}' from policy pack '{pack}@v{version}' during preview: {error.message}"
