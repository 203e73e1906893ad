"""The configuration reference, generated from the pydantic models (`seedance config schema|docs`)."""

from __future__ import annotations

import functools
import inspect
import json
import operator
import re
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from components.stack.config import PROJECT, StackConfig

HEADER = f"""# Configuration reference

Generated from the pydantic models by `seedance config docs > docs/configuration.md` (a test keeps
this file in sync). Keys are `{PROJECT}:<key>` in `stacks/Pulumi.<env>.yaml`, except the region,
which is `aws:region`. Every value is validated before any resource is declared; a bad value stops
with one line naming the key, the value and what is allowed. Types are strict: `true` is no count,
`"4"` and `4.0` are no integer, and `yes`/`no`/`on`/`off` are strings (as Pulumi's YAML reads them);
a tenant's name and namespaces are its own. `seedance config schema` prints the same as JSON Schema.
"""


def json_schema() -> str:
    return json.dumps(StackConfig.model_json_schema(), indent=2)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
        for inner in typing.get_args(candidate):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return None


def _plain(annotation: Any) -> Any:
    """The annotation without its validators (`Annotated[T, ...]` is T), inside Optional and lists too."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _plain(typing.get_args(annotation)[0])
    arguments = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and any(
        typing.get_origin(a) is typing.Annotated for a in arguments
    ):
        return functools.reduce(operator.or_, (_plain(a) for a in arguments))
    return annotation


def _type_name(annotation: Any) -> str:
    annotation = _plain(annotation)
    text = getattr(annotation, "__name__", None) if not typing.get_args(annotation) else None
    # Generic types print with their modules' dotted paths; the reader wants the class names.
    return text or re.sub(r"(?<!['\w.])(?:\w+\.)+(?=\w)", "", str(annotation)).replace("NoneType", "None")


def _default(field) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
        return "(see below)" if isinstance(value, BaseModel) else f"`{json.dumps(value)}`"
    return f"`{json.dumps(field.default, default=str)}`"


def _doc(model: type[BaseModel]) -> str:
    """The model's whole docstring as one paragraph (pydantic's own base docstring is not the model's)."""
    own = model.__dict__.get("__doc__")
    return " ".join(inspect.cleandoc(own).split()) if own else ""


def _rows(model: type[BaseModel], prefix: str, nested: list[tuple[str, type[BaseModel]]]) -> list[str]:
    rows = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        inner = _model_of(field.annotation)
        if inner is not None:
            is_list = typing.get_origin(field.annotation) is list
            nested.append((f"{key}[]" if is_list else key, inner))
        description = (field.description or (_doc(inner) if inner is not None else "")).replace("|", "/")
        kind = _type_name(field.annotation).replace("|", "\\|")  # a bare | would split the table cell
        rows.append(f"| `{key}` | {kind} | {_default(field)} | {description} |")
    return rows


def markdown_reference() -> str:
    lines = [HEADER]
    queue: list[tuple[str, type[BaseModel]]] = [("", StackConfig)]
    while queue:
        prefix, model = queue.pop(0)
        nested: list[tuple[str, type[BaseModel]]] = []
        title = f"`{PROJECT}:{prefix}`" if prefix else "Top-level keys"
        doc = _doc(model)
        lines += [f"## {title}", "", doc, "", "| key | type | default | description |", "| --- | --- | --- | --- |"]
        lines += _rows(model, f"{prefix}." if prefix else "", nested)
        lines.append("")
        queue += nested
    return "\n".join(lines).rstrip() + "\n"
