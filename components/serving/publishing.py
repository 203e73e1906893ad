"""The layout of a served model set in the bucket, as the platform and the publishing teams share it. Pure.

Triton opens `s3://bucket/<prefix>` only when something exists under it (core s3.h: an empty prefix
"is not a valid directory" and the server exits), so the platform writes one plain file at the
prefix's root in the run that creates the bucket. Triton takes only directories for models, so the
file is never loaded, and it tells whoever lists the prefix how to publish.
"""

from __future__ import annotations

import re

MARKER_NAME = "README.md"
# Writes that change what a server loads: new objects, deletions (of versions too), and their ACLs.
WRITE_ACTIONS = ["s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutObjectAcl",
                 "s3:PutObjectVersionAcl", "s3:RestoreObject", "s3:ReplicateObject", "s3:ReplicateDelete"]


def publisher_role_name(serving_component: str) -> str:
    """The fixed name of a served set's publisher role (its ARN is known before it exists, so the bucket
    policy can name it in the same run)."""
    return f"{serving_component}-publisher"[:64]


def served_writes_guard(bucket_arn: str, publishers: dict[str, list[str]]) -> list[dict]:
    """Bucket-policy statements: under each served prefix, only that prefix's publisher roles may write
    inside a model directory (`<prefix>/*/*`: every model file and config). Files at the prefix's root
    are not models (Triton loads directories only), so the platform's marker stays writable by the deployer."""
    return [{"Sid": f"OnlyPublishersWrite{index}", "Effect": "Deny", "Principal": "*", "Action": WRITE_ACTIONS,
             "Resource": f"{bucket_arn}/{prefix}/*/*",
             "Condition": {"ArnNotLike": {"aws:PrincipalArn": sorted(roles)}}}
            for index, (prefix, roles) in enumerate(sorted(publishers.items()))]


def publisher_policy(bucket_arn: str, prefixes: list[str], key_arn: str, region: str) -> dict:
    """What publishing needs: list the bucket, read and write under the set's prefixes, and encrypt with the
    stack key through S3 only."""
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket_arn},
        # Tagging: an upload with tags (the cost tags) needs it, and Pulumi reads an object's tags back.
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:GetObjectTagging"],
         "Resource": [f"{bucket_arn}/{prefix}/*" for prefix in prefixes]},
        {"Effect": "Allow", "Action": ["kms:GenerateDataKey", "kms:Decrypt"], "Resource": key_arn,
         "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}}},
    ]}


def marker_key(prefix: str) -> str:
    return f"{prefix}/{MARKER_NAME}"


def marker_text(prefix: str) -> str:
    return (f"# Triton model repository: {prefix}\n\n"
            "Written by the platform so Triton can open this prefix before any model exists; Triton ignores "
            "files here.\n\nA model is `<name>/config.pbtxt` with immutable version directories `<name>/<N>/`. "
            "Upload a new version directory completely, then switch to it by rewriting `config.pbtxt` with "
            "`version_policy: { specific: { versions: [N] } }` (`seedance model publish` does both, in that "
            "order). Triton follows within its poll interval; a version that fails to load leaves the "
            "loaded one serving. See docs/publishing-models.md.\n")


class PublishError(Exception):
    """A model cannot be published as given (one line)."""


def split_repository(url: str) -> tuple[str, str]:
    """s3://bucket/prefix -> (bucket, prefix): the served prefix a model goes under."""
    match = re.fullmatch(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/([\w.-]+(?:/[\w.-]+)*)/?", url)
    if match is None:
        raise PublishError(f"{url!r} is not s3://<bucket>/<served prefix> (the contract's model repository)")
    return match.group(1), match.group(2)


def _top_level_fields(text: str) -> list[tuple[str, int, int]]:
    """(field name, start, end) of each top-level field of a text-format protobuf; nested blocks and
    quoted strings are skipped whole, so a brace or a name inside them is never taken for a field."""
    fields, depth, i = [], 0, 0
    start = name = None
    while i < len(text):
        char = text[i]
        if char in "\"'":
            end = text.find(char, i + 1)
            while end != -1 and text[end - 1] == "\\":
                end = text.find(char, end + 1)
            if end == -1:
                raise PublishError("config.pbtxt has an unterminated string")
            i = end + 1
            continue
        if char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline == -1 else newline
            continue
        if depth == 0 and name is None and (char.isalpha() or char == "_"):
            match = re.match(r"[A-Za-z_]\w*", text[i:])
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
                start = name = None
        elif depth == 0 and name is not None and char == "\n" and text[start:i].strip().rstrip(":").strip() != name:
            fields.append((name, start, i))  # a scalar field ends with its line
            start = name = None
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


def pin_version(config_text: str, version: int) -> str:
    """The config serving exactly `version`: any version_policy it had is replaced. Triton loads only the
    listed versions whose directories exist, and keeps the loaded one when the new one fails."""
    kept, last = [], 0
    for field, start, end in _top_level_fields(config_text):
        if field == "version_policy":
            kept.append(config_text[last:start])
            last = end
    body = ("".join(kept) + config_text[last:]).rstrip()
    return f"{body}\nversion_policy: {{ specific: {{ versions: [ {version} ] }} }}\n"
