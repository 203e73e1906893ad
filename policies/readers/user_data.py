"""A launch template's user data, read as an instance reads it at boot: base64, then a MIME multi-part
document or one bare part. nodeadm (AL2023) reads `application/node.eks.aws` parts as NodeConfig; cloud-init
runs `text/x-shellscript` parts and fetches `text/x-include-url` parts. Pure.

`findings(user_data)` answers: what in it turns off a node's protections or runs code fetched at boot, and
which parts are none of what the platform writes (a NodeConfig, its own scripts, Bottlerocket settings):
those are refused whatever they do."""

from __future__ import annotations

import base64
import binascii
import email
import re
import tomllib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import yaml

from components.compute.efa import EFA_HUGEPAGES
from components.compute.node_bootstrap import hugepages_script

NODE_CONFIG = "application/node.eks.aws"
SHELL = "text/x-shellscript"
# Content types cloud-init or nodeadm act on that the gate cannot judge: each fetches or runs something.
UNJUDGED = {
    "text/x-include-url": "fetches and runs what a URL serves",
    "text/x-include-once-url": "fetches and runs what a URL serves",
    "text/cloud-boothook": "runs a script before anything else, on every boot",
    "text/cloud-config": "runs cloud-config commands",
    "text/jinja2": "renders a template into any of the above",
    "text/part-handler": "installs a handler that runs code",
}
# What cloud-init takes a bare (not MIME) document to be, by its first line.
BARE_KINDS = (
    ("#!", SHELL),
    ("#include-once", "text/x-include-once-url"),
    ("#include", "text/x-include-url"),
    ("#cloud-config", "text/cloud-config"),
    ("#cloud-boothook", "text/cloud-boothook"),
    ("## template: jinja", "text/jinja2"),
    ("#part-handler", "text/part-handler"),
)
# A download handed straight to an interpreter: `curl ... | sh`, `sh <(curl ...)`, `bash -c "$(wget ...)"`.
FETCH = r"(?:curl|wget|fetch|aws\s+s3\s+cp)\b"
SHELLS = r"(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby"
PIPED = re.compile(
    rf"{FETCH}[^\n|;&]*\|\s*(?:sudo\s+)?(?:{SHELLS})\b|(?:{SHELLS})\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*{FETCH}"
)
DOWNLOADED = "runs what it downloads at boot"
LOOSENED = "loosens the instance metadata options after boot"
# The scripts the platform writes (components/compute/node_bootstrap.py): a positive model, as the others
# are refused whatever they do.
PLATFORM_SCRIPTS = frozenset({hugepages_script(EFA_HUGEPAGES).strip()})
# IMDS opened after boot, past what the launch template requires.
IMDS_LOOSENED = re.compile(
    r"modify-instance-metadata-options[^\n]*(?:--http-tokens\s+optional|--http-put-response-hop-limit\s+(?:[2-9]|\d{2,}))"
)


def parts(user_data: str) -> Iterator[tuple[str, str]]:
    """(content type, text) of each part; a document that is not base64 or MIME is one part of its own kind."""
    try:
        text = base64.b64decode(user_data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        text = user_data
    message = email.message_from_string(text)
    if message.is_multipart():
        for part in message.walk():
            if not part.is_multipart():
                payload = part.get_payload(decode=True)
                yield part.get_content_type(), payload.decode(errors="replace") if isinstance(payload, bytes) else ""
        return
    kind = next((kind for start, kind in BARE_KINDS if text.startswith(start)), "text/plain")
    yield kind, text


def _kubelet_findings(node_config: dict) -> Iterator[str]:
    kubelet = (node_config.get("spec") or {}).get("kubelet") or {}
    config = kubelet.get("config") or {}
    if ((config.get("authentication") or {}).get("anonymous") or {}).get("enabled") is True:
        yield "the kubelet serves anonymous requests (authentication.anonymous.enabled)"
    if str((config.get("authorization") or {}).get("mode", "")).lower() == "alwaysallow":
        yield "the kubelet authorizes every request (authorization.mode AlwaysAllow)"
    if config.get("readOnlyPort") not in (None, 0, "0"):
        yield f"the kubelet opens its unauthenticated read-only port ({config['readOnlyPort']})"
    for name, value, flag in _flags(kubelet.get("flags") or []):
        if name == "--anonymous-auth" and value.lower() in ("", "1", "t", "true"):  # Go's ParseBool's trues
            yield f"the kubelet serves anonymous requests ({flag})"
        if name == "--authorization-mode" and "alwaysallow" in value.lower():
            yield f"the kubelet authorizes every request ({flag})"
        if name == "--read-only-port" and value not in ("", "0"):
            yield f"the kubelet opens its unauthenticated read-only port ({flag})"


def _flags(flags: list) -> Iterator[tuple[str, str, str]]:
    """(name, value, as written) of each flag, as the kubelet reads them: nodeadm joins the list into one
    command line that systemd splits on spaces, so one entry may hold several flags, or a flag and its value."""
    words = " ".join(str(flag) for flag in flags).split()
    for index, word in enumerate(words):
        if not word.startswith("--"):
            continue
        name, equals, value = word.partition("=")
        if not equals and index + 1 < len(words) and not words[index + 1].startswith("-"):
            value = words[index + 1]
        yield name, value, word if equals else f"{word} {value}".strip()


def findings(user_data: Any) -> tuple[str, ...]:
    """What the user data opens (none for a value that is not text: unknown until apply)."""
    return _findings(user_data) if isinstance(user_data, str) else ()


@lru_cache(maxsize=1024)  # a plan's groups share few documents, and decoding one is most of this rule's time
def _findings(user_data: str) -> tuple[str, ...]:
    return tuple(_read(user_data))


def _read(user_data: str) -> Iterator[str]:
    for content_type, text in parts(user_data):
        if content_type == NODE_CONFIG:
            try:
                documents = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
            except yaml.YAMLError:
                yield "a NodeConfig part that does not parse"
                continue
            for document in documents:
                yield from _kubelet_findings(document)
        elif content_type in UNJUDGED:
            yield f"a {content_type} part, which {UNJUDGED[content_type]}"
        elif content_type == SHELL:
            doors = [
                f"a {content_type} part {door}"
                for pattern, door in ((PIPED, DOWNLOADED), (IMDS_LOOSENED, LOOSENED))
                if pattern.search(text)
            ]
            yield from doors
            if not doors and text.strip() not in PLATFORM_SCRIPTS:
                yield f"a {content_type} part the platform does not write (the gate judges only its own scripts)"
        elif content_type != "text/plain" or not _bottlerocket_settings(text):
            yield (
                f"a {content_type} part that is none of what the platform writes (a NodeConfig, its own script, "
                "Bottlerocket settings), so the gate cannot judge what it does"
            )


def _bottlerocket_settings(text: str) -> bool:
    try:
        return set(tomllib.loads(text)) == {"settings"}
    except tomllib.TOMLDecodeError:
        return False
