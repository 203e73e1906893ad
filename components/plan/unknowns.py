"""Unknown values, the way the Pulumi policy SDK treats them: a reader of a plan (a policy rule, the
cost estimator) that reads a value not known until apply stops with `UnknownValueError` (the SDK's
wording; the policy pack raises the SDK's own error in its place); a rule's finding becomes the SDK's
advisory "can't run policy ... during preview", an estimate's line becomes unknown. A reader that never
reads an unknown judges as usual, so a gp2 volume whose key ARN is still unknown is still a gp2 volume.

The SDK's own proxies are Mappings and Sequences, not dicts and lists; these containers are a dict and
a list, so rules written against plain plan data read them unchanged. They are built once per plan and
only around values with an unknown inside: a check reads every resource with every rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, SupportsIndex

from components.plan.resources import UNKNOWN_KINDS, UNKNOWN_VALUES, PlanResource

# The lengths of the engine's sentinels (UUIDs, and the CLI's "(unknown)").
SENTINEL_LENGTHS = frozenset(len(sentinel) for sentinel in UNKNOWN_VALUES)


class UnknownValueError(Exception):
    """A reader read a value not known until apply; `message` is the policy SDK's."""

    def __init__(self, sentinel: str, path: list[str]):
        super().__init__()
        self.sentinel = sentinel
        self.path = path
        self.message = f"{UNKNOWN_KINDS[sentinel]} value at .{'.'.join(path)} can't be known during preview"

    def __str__(self) -> str:
        return self.message


def _has_unknown(value: dict[Any, Any] | list[Any]) -> bool:
    """Whether an unknown is anywhere inside (raw values: a checking container inside is not read). A loop,
    not recursion, with its names bound locally: every resource of a plan is scanned once per check. A string
    is compared by its length first: hashing a long one (a chart's values, a policy) costs its length."""
    unknown, text, mapping, sequence, lengths = UNKNOWN_VALUES, str, dict, list, SENTINEL_LENGTHS
    pending = [value]
    pop, push = pending.pop, pending.append
    while pending:
        container = pop()
        for item in mapping.values(container) if isinstance(container, mapping) else sequence.__iter__(container):
            kind = type(item)
            if kind is text:
                if len(item) in lengths and item in unknown:
                    return True
            elif kind is mapping or kind is sequence or isinstance(item, (mapping, sequence)):
                push(item)
    return False


def _raise_if_unknown(value: Any, path: list[str], key: Any) -> Any:
    if isinstance(value, str) and value in UNKNOWN_VALUES:
        raise UnknownValueError(value, [*path, str(key)])
    return value


_MISSING = object()


def _read_entry(container: CheckingDict | CheckingList, key: Any, value: Any) -> Any:
    """One entry of a checking dict or list, as read: a dict or list through `checking`, once (kept for
    the next read), anything else raising if it is unknown."""
    if isinstance(value, (dict, list)):
        opened = container._opened.get(key, _MISSING)
        if opened is _MISSING:
            opened = container._opened[key] = checking(value, [*container._path, str(key)])
        return opened
    return _raise_if_unknown(value, container._path, key)


class CheckingDict(dict[Any, Any]):
    """Built by `checking` around a dict with an unknown inside: reading an unknown raises, and a dict or
    list read from it is itself read through `checking` (when first read: rules read a few fields of
    each resource, so the containers they never open are never copied)."""

    __slots__ = ("_opened", "_path")

    def __init__(self, target: dict[Any, Any], path: list[str]):
        super().__init__(target)
        self._path = path
        self._opened: dict[Any, Any] = {}

    _read = _read_entry

    def __getitem__(self, key: Any) -> Any:
        return self._read(key, dict.__getitem__(self, key))

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        return default if value is _MISSING else self._read(key, value)

    # Lists, not views: a view would hand out the raw values.
    def values(self) -> list[Any]:  # type: ignore[override]
        return [self._read(k, v) for k, v in dict.items(self)]

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(k, self._read(k, v)) for k, v in dict.items(self)]

    # dict's own copies take the raw values: `dict(d)`, `{**d}`, `f(**d)` and `update` skip `__getitem__` only
    # while `__iter__` is dict's, so it is overridden (keys read as they are); `copy`, `|` and `==` read each
    # value, as the SDK's proxies do.
    def __iter__(self) -> Iterator[Any]:
        return dict.__iter__(self)

    def copy(self) -> dict[Any, Any]:
        return dict(self.items())

    def __or__(self, other: Any) -> dict[Any, Any]:
        return {**self, **other}

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other

    def __ne__(self, other: object) -> bool:
        return not self == other


class CheckingList(list[Any]):
    __slots__ = ("_opened", "_path")

    def __init__(self, target: list[Any], path: list[str]):
        super().__init__(target)
        self._path = path
        self._opened: dict[Any, Any] = {}

    _read = _read_entry

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        return self._read(index, list.__getitem__(self, index))

    def __iter__(self) -> Iterator[Any]:
        return (self._read(i, v) for i, v in enumerate(list.__iter__(self)))

    # list's own `in`, copies, concatenation and comparison take the raw values: each reads them one by one.
    def __contains__(self, item: object) -> bool:
        return any(value == item for value in self)

    def __reversed__(self) -> Iterator[Any]:
        return list(self).__reversed__()  # what reversed() calls; typeshed types reversed(list[Any]) as Any

    def copy(self) -> list[Any]:
        return list(self)

    def __add__(self, other: Any) -> Any:
        return list(self) + other

    def __radd__(self, other: Any) -> Any:
        return other + list(self)

    def __mul__(self, times: SupportsIndex) -> list[Any]:
        return list(self) * times

    __rmul__ = __mul__

    def count(self, item: Any) -> int:
        return list(self).count(item)

    def index(self, item: Any, *bounds: SupportsIndex) -> int:
        return list(self).index(item, *bounds)

    def __eq__(self, other: object) -> bool:
        return list(self) == other

    def __ne__(self, other: object) -> bool:
        return not self == other


def checking(value: Any, path: list[str] | None = None) -> Any:
    """`value` read the SDK's way: reading an unknown anywhere inside raises `UnknownValueError` with its
    path. A dict or list with an unknown inside becomes a checking container; one without is returned as
    it is, since nothing in it can raise."""
    if isinstance(value, (CheckingDict, CheckingList)) or not isinstance(value, (dict, list)):
        return value
    if not _has_unknown(value):
        return value
    path = path or []
    return CheckingDict(value, path) if isinstance(value, dict) else CheckingList(value, path)


def as_read(resource: PlanResource) -> PlanResource:
    """The resource as the rules and the cost estimate read it: its inputs through `checking` (the
    resource itself when nothing in them is unknown; `dataclasses.replace` would cost more per resource)."""
    props = checking(resource.props)
    if props is resource.props:
        return resource
    return PlanResource(
        resource.urn, resource.type, resource.name, props, resource.parent, resource.dependencies, resource.id
    )


class ReadPlan(list[PlanResource]):
    """A plan's resources as read (`as_read` applied to each). A reader handed one reads it as it is, so
    that a check's rules and its cost estimate scan each resource for unknowns once, not once each. It is
    read, never changed, so it keeps an index of where each type's resources are (built when first asked)."""

    _positions: dict[str, list[int]]

    def positions(self) -> dict[str, list[int]]:
        """Each type's resources by their places in the plan, in plan order."""
        index: dict[str, list[int]] | None = self.__dict__.get("_positions")
        if index is None:
            index = self._positions = {}
            for position, resource in enumerate(self):
                index.setdefault(resource.type, []).append(position)
        return index


def of_types(resources: Sequence[PlanResource], *types: str) -> list[PlanResource]:
    """The resources of these types, in plan order: a read plan answers from its index, any other sequence
    (the policy engine's) by one pass. A check's stack rules ask it instead of each passing over the plan."""
    if not isinstance(resources, ReadPlan):
        return [r for r in resources if r.type in types]
    index = resources.positions()
    places = [index[t] for t in dict.fromkeys(types) if t in index]  # each type once: lists may share one
    if len(places) == 1:
        return [resources[i] for i in places[0]]
    return [resources[i] for i in sorted(i for found in places for i in found)]


def read_plan(resources: Iterable[PlanResource]) -> ReadPlan:
    return resources if isinstance(resources, ReadPlan) else ReadPlan(as_read(r) for r in resources)


def preview_message(policy: str, pack: str, version: str, error: UnknownValueError) -> str:
    """The SDK's wording for a policy that read an unknown (pulumi_policy/policy.py, Analyze)."""
    return f"can't run policy '{policy}' from policy pack '{pack}@v{version}' during preview: {error.message}"
