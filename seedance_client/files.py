"""Files a user can edit (stack files, locks, plan JSON) read as untrusted input, and output files
written with one clear error. Pure.

Every read is bounded before it is parsed: by size (a stack file or lock is kilobytes, a plan a few
megabytes), by nesting, by what YAML aliases expand to (a "billion laughs" file is a few hundred bytes
that expand to gigabytes in whatever walks it), and duplicate keys are refused rather than the last
one silently winning. A problem is an `InputFileError` naming the file and what is wrong.
"""

from __future__ import annotations

import json
import math
import re
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from seedance_client.errors import InputError

MAX_CONFIG_BYTES = 1 << 20  # stack files, locks, Pulumi.yaml
MAX_PLAN_BYTES = 64 << 20  # plan JSON of a large program
MAX_DEPTH = 64  # stack configs nest a few levels; plans a dozen
MAX_EXPANDED_NODES = 200_000  # what a document's aliases expand to, counted once per use
_BRACKETS = re.compile(r"[\[\]{}]")


class InputFileError(InputError):
    """An input file cannot be read as what it should be (one line; exit code 2)."""


class OutputFileError(InputError):
    """An output file cannot be written (one line; exit code 2)."""


def read_text(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """The file's UTF-8 text, at most `limit` bytes; a directory, a device, a missing or unreadable file,
    a larger file or one that is not UTF-8 text is an `InputFileError`."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputFileError(f"{path}: {what} not found") from None
    except OSError as error:
        raise InputFileError(f"{path}: {what} cannot be read ({error.strerror})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputFileError(f"{path}: is a directory; give the {what} file")
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)  # bounded even for devices and pipes, whose size stat cannot tell
    except OSError as error:
        raise InputFileError(f"{path}: {what} cannot be read ({error.strerror})") from None
    if len(data) > limit:
        raise InputFileError(f"{path}: {what} is larger than {limit:,} bytes")
    if b"\0" in data:
        raise InputFileError(f"{path}: {what} is binary or not UTF-8 text (a NUL byte)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputFileError(f"{path}: {what} is not UTF-8 text (byte {error.start})") from None


class _BoundedLoader(yaml.SafeLoader):
    """Safe YAML that refuses duplicate keys (the last would silently win) and reads booleans as Pulumi's
    go-yaml v3 does: true and false only; YAML 1.1's yes/no/on/off stay strings, as `pulumi up` reads them."""

    yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        # The mapping's own keys, before merge keys (<<) bring theirs in: a merged key yields to an own key
        # of the same name (YAML's merge), two own keys of one name are a mistake.
        own = (
            [(k, v) for k, v in node.value if k.tag != "tag:yaml.org,2002:merge"]
            if isinstance(node, yaml.MappingNode)
            else []
        )
        seen = set()
        for key_node, _value in own:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "found an unhashable key", key_node.start_mark
                ) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)  # as SafeLoader does: merged keys first, so own keys win
        return super().construct_mapping(node, deep)


_BoundedLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _expanded_size(node: yaml.Node, depth: int, sizes: dict[int, int], path: Path, what: str) -> int:
    """Nodes the document holds once every alias is expanded (aliases share their anchor's node)."""
    if depth > MAX_DEPTH:
        raise InputFileError(f"{path}: {what} nests deeper than {MAX_DEPTH} levels")
    known = sizes.get(id(node))
    if known is not None:
        return known
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, depth + 1, sizes, path, what) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(
            _expanded_size(k, depth + 1, sizes, path, what) + _expanded_size(v, depth + 1, sizes, path, what)
            for k, v in node.value
        )
    if size > MAX_EXPANDED_NODES:
        raise InputFileError(
            f"{path}: {what} expands to more than {MAX_EXPANDED_NODES:,} values "
            "(YAML aliases repeat what they point at)"
        )
    sizes[id(node)] = size
    return size


def _flow_depth(text: str) -> int:
    """How deep `[` and `{` nest (quotes aside: a bound, not a parse); the parser would take its time
    over a document nested thousands deep before its recursion gave up."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def load_yaml(path: Path, what: str) -> Any:
    text = read_text(path, what)
    if _flow_depth(text) > MAX_DEPTH:
        raise InputFileError(f"{path}: {what} nests deeper than {MAX_DEPTH} levels")
    try:
        loader = _BoundedLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _expanded_size(node, 0, {}, path, what)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        raise InputFileError(f"{path}: {what} is not valid YAML ({error})".replace("\n", " ")) from None
    except RecursionError:
        raise InputFileError(f"{path}: {what} nests deeper than {MAX_DEPTH} levels") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(value: Any, limit: int) -> int:
    pending = [(value, 1)]
    deepest = 0
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        if depth > limit:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        pending += [(child, depth + 1) for child in children if isinstance(child, (dict, list))]
    return deepest


def load_json(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> Any:
    """The file's JSON, refusing NaN and Infinity (not JSON) and nesting deeper than MAX_DEPTH."""
    text = read_text(path, what, limit)
    try:
        document = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, ValueError) as error:
        raise InputFileError(f"{path}: {what} is not valid JSON ({error})") from None
    except RecursionError:
        raise InputFileError(f"{path}: {what} nests deeper than {MAX_DEPTH} levels") from None
    if _depth(document, MAX_DEPTH) > MAX_DEPTH:
        raise InputFileError(f"{path}: {what} nests deeper than {MAX_DEPTH} levels")
    return document


def finite(value: Any) -> bool:
    return not (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))


def write_text(path: Path, text: str, what: str) -> None:
    """Write `text` to `path`, or one `OutputFileError` line: a directory, a missing folder, a full disk,
    a read-only place."""
    if path.is_dir():
        raise OutputFileError(f"{path}: is a directory; give a file name for the {what}")
    if not path.parent.is_dir():
        raise OutputFileError(
            f"{path}: the folder {path.parent} does not exist; create it or give another path for the {what}"
        )
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise OutputFileError(f"{path}: the {what} cannot be written ({error.strerror})") from None
