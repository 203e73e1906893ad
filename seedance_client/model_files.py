"""The files `seedance model` reads back from the bucket (the history, a version's completion marker, a
publish's intent, the served config), read as untrusted input: bounded, parsed once, validated by a model of
what this client writes, and refused in one line otherwise. Anyone who may write the bucket may write these:
a forged, corrupt or deeply nested file must neither stop a command with a traceback nor steer it. Pure.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, TypeAdapter, ValidationError

from seedance_client.publishing import PublishError

# Far above any history this client keeps (500 entries) or any config Triton reads; a larger object is not ours.
MAX_DOCUMENT_BYTES = 4 << 20
Version = Annotated[StrictInt, Field(ge=1, le=999_999_999)]  # what `--version` takes: Triton's directories


class HistoryEntry(BaseModel):
    """One switch of what serves. Fields a newer client adds are kept (and written back)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    at: str = Field(max_length=64)
    by: str = Field(max_length=2048)
    action: Literal["publish", "canary", "promote", "rollback"]
    from_: list[Version] = Field(alias="from", max_length=1000)
    to: list[Version] = Field(max_length=1000)
    reason: str | None = Field(None, max_length=4000)
    ci_run: str | None = Field(None, max_length=2048)


class FileRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: StrictInt = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class CompletionMarker(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: Version
    files: dict[str, FileRecord] = Field(min_length=1)
    published_by: str = Field(max_length=2048)
    published_at: str = Field(max_length=64)


class Intent(BaseModel):
    """What a publish was asked, recorded before its first file."""

    model_config = ConfigDict(extra="forbid")

    alongside: StrictBool
    config_change: StrictBool


HISTORY = TypeAdapter(list[HistoryEntry])


def _loaded(data: bytes, where: str) -> Any:
    if len(data) > MAX_DOCUMENT_BYTES:
        raise PublishError(f"{where}: larger than {MAX_DOCUMENT_BYTES >> 20} MiB, not a file this client wrote")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:  # RecursionError: nesting deeper than the parser goes
        raise PublishError(f"{where}: not JSON ({str(error) or type(error).__name__}); look at it") from None


def _validated(adapter: Any, value: Any, where: str, what: str) -> Any:
    try:
        return adapter.validate_python(value)
    except ValidationError as error:
        first = error.errors()[0]
        at = ".".join(str(part) for part in first["loc"]) or "the document"
        raise PublishError(f"{where}: not {what} this client writes ({at}: {first['msg']}); look at it") from None


def read_history(data: bytes, where: str) -> list[dict[str, Any]]:
    """A model's history, each entry as written (`from`, not `from_`)."""
    entries = _validated(HISTORY, _loaded(data, where), where, "a history")
    return [entry.model_dump(by_alias=True, exclude_none=True) for entry in entries]


def read_marker(data: bytes, where: str) -> dict[str, Any]:
    marker: CompletionMarker = _validated(
        TypeAdapter(CompletionMarker), _loaded(data, where), where, "a completion marker"
    )
    return marker.model_dump()


def read_intent(data: bytes, where: str) -> dict[str, bool]:
    intent: Intent = _validated(TypeAdapter(Intent), _loaded(data, where), where, "an intent")
    return intent.model_dump()


def read_config(data: bytes, where: str) -> str:
    """A served config.pbtxt as text."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise PublishError(f"{where}: larger than {MAX_DOCUMENT_BYTES >> 20} MiB, not a model config")
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise PublishError(f"{where}: not UTF-8 text, not a model config Triton reads; look at it") from None
