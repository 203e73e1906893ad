"""Publishing one model version to a served set: the layout rules both sides share. Pure.

A model is `<name>/config.pbtxt` with immutable version directories `<name>/<N>/`. The switch is the
config's `version_policy: { specific: { versions: [N] } }`, written once `<N>/` is complete: Triton in
poll mode loads only the listed versions and keeps the loaded one when a new one fails.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seedance_client.errors import InputError

# The file the platform writes at a served prefix's root (components/serving/publishing.py): a prefix
# without it is no repository a Triton server reads.
MARKER_NAME = "README.md"


class PublishError(InputError):
    """A model cannot be published as given (one line)."""


# Beside a model's config, what publishing writes: a version's completion marker (written last: the version is
# complete, its number taken) and the intent its publish was started with (kept for a resumed run).
def version_marker(version: int) -> str:
    return f"seedance-version-{version}.json"


HISTORY_NAME = "seedance-history.json"
# What switches what serves: each model's config and its history (an operator writes these, never a model file).
SWITCH_FILES = ("config.pbtxt", HISTORY_NAME)


def intent_marker(version: int) -> str:
    return f"seedance-intent-{version}.json"


def ci_run(environment: Mapping[str, str]) -> str | None:
    """The CI run a switch is made from, as a link, from the variables the CI sets (GitHub Actions, GitLab,
    Buildkite); None outside CI."""
    if environment.get("GITHUB_RUN_ID") and environment.get("GITHUB_REPOSITORY"):
        server = environment.get("GITHUB_SERVER_URL") or "https://github.com"
        return f"{server}/{environment['GITHUB_REPOSITORY']}/actions/runs/{environment['GITHUB_RUN_ID']}"
    return environment.get("CI_JOB_URL") or environment.get("BUILDKITE_BUILD_URL") or None


def session_name(caller_arn: str) -> str:
    """A role session name that says who assumed the role (IAM allows [\\w+=,.@-], 2 to 64 characters): the
    caller's own user or session name, so the history's `by` names a person, not the tool."""
    last = caller_arn.rsplit("/", 1)[-1] if "/" in caller_arn else caller_arn.rsplit(":", 1)[-1]  # a root ARN
    name = re.sub(r"[^\w+=,.@-]", "-", last)[:64]
    return name if len(name) >= 2 else "seedance-model"


def sha256(path: Path) -> str:
    """A file's SHA-256, as every version file carries it (object metadata `sha256`) and its marker lists it."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def completion_marker(version: int, files: dict[str, Path], published_by: str, published_at: str) -> dict[str, Any]:
    """Version N's marker: every file of it (key under the model), its size and SHA-256. The CLI and the
    Pulumi example (examples/model-deploy) write the same one, so either's versions serve the other's verbs."""
    return {
        "version": version,
        "files": {key: {"size": path.stat().st_size, "sha256": sha256(path)} for key, path in sorted(files.items())},
        "published_by": published_by,
        "published_at": published_at,
    }


def split_repository(url: str) -> tuple[str, str]:
    """s3://bucket/prefix -> (bucket, prefix): the served prefix a model goes under (no `.` or `..` part:
    S3 keeps them literally, so a server reading the prefix never sees what went there)."""
    match = re.fullmatch(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/([\w.-]+(?:/[\w.-]+)*)/?", url)
    if match is None or any(part in (".", "..") for part in match.group(2).split("/")):
        raise PublishError(f"{url!r} is not s3://<bucket>/<served prefix> (the contract's model repository)")
    return match.group(1), match.group(2)


def without_version_policy(config_text: str) -> str:
    """The config as it configures the model: its version policy (which versions serve) left out, and
    blank space at the ends (what publishing compares to tell a configuration change)."""
    kept, last = [], 0
    for field, start, end in _top_level_fields(config_text):
        if field == "version_policy":
            kept.append(config_text[last:start])
            last = end
    return ("".join(kept) + config_text[last:]).strip()


def canonical_config(config_text: str) -> str:
    """The config as Triton reads it, to tell a configuration change: no version policy, no comments, and
    blank space only where it separates two words (quoted strings kept whole)."""
    text = without_version_policy(config_text)
    tokens: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in "\"'":
            end = _string_end(text, i)
            tokens.append(text[i : end + 1])
            i = end + 1
        elif char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline == -1 else newline
        elif char.isspace():
            i += 1
        elif char in "{}[]:,;<>":
            tokens.append(char)
            i += 1
        else:
            match = re.match(r"[^\s{}\[\]:,;<>\"'#]+", text[i:])
            assert match is not None  # not a space, a separator, a quote or a comment
            # Two words in a row keep one space between them (a separator or a string needs none).
            if tokens and re.fullmatch(r"[^\s{}\[\]:,;<>\"'#]+", tokens[-1]):
                tokens.append(" ")
            tokens.append(match.group(0))
            i += len(match.group(0))
    return "".join(tokens)


def config_diff(served_text: str, new_text: str) -> list[str]:
    """A unified diff of two configs as they configure the model (their version policies left out)."""
    return list(
        difflib.unified_diff(
            without_version_policy(served_text).splitlines(),
            without_version_policy(new_text).splitlines(),
            "served config.pbtxt",
            "new config.pbtxt",
            lineterm="",
        )
    )


def _string_end(text: str, start: int) -> int:
    end = text.find(text[start], start + 1)
    while end != -1 and text[end - 1] == "\\":
        end = text.find(text[start], end + 1)
    if end == -1:
        raise PublishError("config.pbtxt has an unterminated string")
    return end


def _top_level_fields(text: str) -> list[tuple[str, int, int]]:
    """(field name, start, end) of each top-level field of a text-format protobuf; nested blocks and
    quoted strings are skipped whole, so a brace or a name inside them is never taken for a field."""
    fields: list[tuple[str, int, int]] = []
    depth, i, start = 0, 0, 0
    name: str | None = None  # the field being read, from `start`
    while i < len(text):
        char = text[i]
        if char in "\"'":
            i = _string_end(text, i) + 1
            continue
        if char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline == -1 else newline
            continue
        if depth == 0 and name is None and (char.isalpha() or char == "_"):
            match = re.match(r"[A-Za-z_]\w*", text[i:])
            assert match is not None  # it starts with a letter or _
            start, name = i, match.group(0)
            i += len(name)
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth < 0:
                raise PublishError("config.pbtxt has an unbalanced closing bracket")
            if depth == 0 and name is not None:
                fields.append((name, start, i + 1))
                name = None
        elif depth == 0 and name is not None and char == "\n" and text[start:i].strip().rstrip(":").strip() != name:
            fields.append((name, start, i))  # a scalar field ends with its line
            name = None
        i += 1
    if depth != 0:
        raise PublishError("config.pbtxt has an unclosed block")
    if name is not None:
        fields.append((name, start, len(text)))
    return fields


def model_name(config_text: str) -> str | None:
    """The config's top-level `name`, when it sets one."""
    for field, start, end in _top_level_fields(config_text):
        if field == "name":
            match = re.search(r":\s*\"([^\"]*)\"", config_text[start:end])
            return match.group(1) if match else None
    return None


def pin_version(config_text: str, *versions: int) -> str:
    """The config serving exactly `versions`: any version_policy it had is replaced. Triton loads only the
    listed versions whose directories exist, and keeps the loaded ones when a new one fails."""
    body = without_version_policy(config_text)
    listed = ", ".join(str(v) for v in sorted(set(versions)))
    return f"{body}\nversion_policy: {{ specific: {{ versions: [ {listed} ] }} }}\n"


def pinned_versions(config_text: str) -> list[int]:
    """The versions a config's `specific` policy serves ([] for any other policy, or none)."""
    for field, start, end in _top_level_fields(config_text):
        if field == "version_policy":
            match = re.search(r"specific\s*:?\s*\{\s*versions\s*:\s*\[([^\]]*)\]", config_text[start:end])
            return [int(v) for v in re.findall(r"\d+", match.group(1))] if match else []
    return []


def rollback_target(history: list[dict[str, Any]], served: list[int]) -> int | None:
    """The version served alone before the current state: the newest history entry's `from` that was one
    version other than what serves now (a canary's pair is skipped: it was a step, not a state)."""
    for entry in reversed(history):
        before = entry.get("from") or []
        if len(before) == 1 and before != served:
            return int(before[0])
    return None
