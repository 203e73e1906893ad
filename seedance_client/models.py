"""`seedance model`: publish, canary, promote and roll back a model in a served prefix, from a team's own
virtualenv (the client's `seedance` command) or the platform's (the same code).

In the bucket, under `<prefix>/<model>/`:
- `<N>/...`, one immutable directory per version, and the model-level files beside `config.pbtxt` (a
  labels file its `label_filename` names);
- `seedance-version-<N>.json`, written last with `If-None-Match: *`: version N is complete (its files,
  sizes and SHA-256) and its number taken. A version without it is incomplete: `--resume` completes it;
- `config.pbtxt`, the switch: pinned to the served versions, written with `If-Match` on what was read
  (two runs cannot both switch);
- `seedance-history.json`, every switch (who, when, from, to), written the same way.

Triton loads directories only and reads only `config.pbtxt` and the files it names, so the two JSON files
are never loaded. Writes are conditional: a race loses with one line, never with a mixed state.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedance_client.errors import Interrupted
from seedance_client.model_files import MAX_DOCUMENT_BYTES, read_config, read_history, read_intent, read_marker
from seedance_client.publishing import (
    HISTORY_NAME,
    MARKER_NAME,
    PublishError,
    canonical_config,
    ci_run,
    completion_marker,
    config_diff,
    intent_marker,
    model_name,
    pin_version,
    pinned_versions,
    rollback_target,
    session_name,
    sha256,
    split_repository,
    version_marker,
)

MAX_FILES = 10_000  # a model version is a handful of files; a directory of millions is a mistake
MAX_FILE_BYTES = 5 << 30  # one conditional PUT; larger weights: split them (Triton backends read shards)
MAX_CONFIG_BYTES = 1 << 20
HISTORY = HISTORY_NAME
HISTORY_KEPT = 500
HISTORY_ATTEMPTS = 5  # appends to the history tried, each over what it holds then


@dataclass(frozen=True)
class LocalModel:
    name: str
    config: str
    model_files: dict[str, Path]  # key under the model -> file (beside config.pbtxt)
    version_files: dict[str, Path]  # key under the model ("<N>/...") -> file


def _refuse_links(path: Path, root: Path) -> None:
    if path.is_symlink():
        raise PublishError(f"{path}: a symbolic link; publish the files themselves")
    if ".." in path.relative_to(root).parts:
        raise PublishError(f"{path}: outside the model directory")


def read_model(model_dir: Path, version: int) -> LocalModel:
    """Every file the version serves with: the config, the model-level files, the version directory.
    Links are refused everywhere (a link can point anywhere on the machine that publishes)."""
    if model_dir.is_symlink():
        raise PublishError(f"{model_dir}: a symbolic link; publish the model directory itself")
    if not model_dir.is_dir():
        raise PublishError(f"{model_dir}: not a model directory (config.pbtxt and <N>/)")
    root = model_dir.resolve()
    name = root.name
    config_path = model_dir / "config.pbtxt"
    if not config_path.is_file() and not config_path.is_symlink():
        raise PublishError(f"{config_path}: model config not found")
    _refuse_links(config_path, model_dir)
    if config_path.stat().st_size > MAX_CONFIG_BYTES:
        raise PublishError(f"{config_path}: larger than {MAX_CONFIG_BYTES >> 20} MiB")
    config = config_path.read_text()
    if model_name(config) not in (None, name):
        raise PublishError(f"{config_path} names {model_name(config)!r}; Triton needs the directory's name ({name!r})")
    version_dir = model_dir / str(version)
    if version_dir.is_symlink():
        raise PublishError(f"{version_dir}: a symbolic link; publish the version directory itself")
    if not version_dir.is_dir():
        raise PublishError(f"{version_dir}: no such version directory (a model is <name>/config.pbtxt and <name>/<N>/)")
    model_files, version_files = {}, {}
    for entry in sorted(model_dir.iterdir()):
        _refuse_links(entry, model_dir)
        if entry.is_file() and entry.name != "config.pbtxt":
            model_files[entry.name] = entry
        elif entry.is_dir() and not entry.name.isdigit():
            raise PublishError(
                f"{entry}: a directory Triton ignores (a model holds config.pbtxt, its files and numbered versions)"
            )
    for path in sorted(version_dir.rglob("*")):
        _refuse_links(path, model_dir)
        if path.is_file():
            if path.stat().st_size > MAX_FILE_BYTES:
                raise PublishError(f"{path}: larger than {MAX_FILE_BYTES >> 30} GiB; split it")
            version_files[path.relative_to(model_dir).as_posix()] = path
            if len(version_files) > MAX_FILES:
                raise PublishError(f"{version_dir}: more than {MAX_FILES:,} files")
    if not version_files:
        raise PublishError(f"{version_dir}: empty")
    return LocalModel(name, config, model_files, version_files)


def _code(error: Exception) -> str | None:
    return getattr(error, "response", {}).get("Error", {}).get("Code")


def _get(s3: Any, bucket: str, key: str) -> tuple[bytes, str] | None:
    """(body, ETag) of an object, None when it does not exist; the body read up to one byte past what any
    file this client reads may hold (the readers refuse it), never the whole of an object of any size."""
    try:
        found = s3.get_object(Bucket=bucket, Key=key)
    except Exception as error:  # botocore's ClientError, without importing botocore here
        if _code(error) in ("NoSuchKey", "404"):
            return None
        raise
    return found["Body"].read(MAX_DOCUMENT_BYTES + 1), found["ETag"]


class RaceLost(PublishError):
    """A conditional write found the object changed since it was read: another run wrote it first."""


def _put(s3: Any, bucket: str, key: str, body: bytes, etag: str | None, what: str, **extra: Any) -> None:
    """A conditional write: a new object only if none exists (etag None), else only over the one read."""
    condition = {"IfNoneMatch": "*"} if etag is None else {"IfMatch": etag}
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=body, **condition, **extra)
    except Exception as error:
        if _code(error) in ("PreconditionFailed", "ConditionalRequestConflict", "412"):
            raise RaceLost(
                f"s3://{bucket}/{key}: {what} changed while this ran (another publish?); "
                "nothing of it was overwritten: look, then run again"
            ) from None
        raise


class Repository:
    """A served prefix of the model bucket, written by one model at a time."""

    def __init__(
        self,
        s3: Any,
        url: str,
        who: str,
        say: Callable[[str], None] = print,
        context: dict[str, str] | None = None,
    ):
        """`context`: what each history entry records beside who and when (the reason, the CI run)."""
        self.s3, self.who, self.say, self.context = s3, who, say, context or {}
        self.bucket, self.prefix = split_repository(url)
        if _get_head(s3, self.bucket, f"{self.prefix}/{MARKER_NAME}") is None:
            raise PublishError(
                f"s3://{self.bucket}/{self.prefix}/ has no platform marker ({MARKER_NAME}): no Triton "
                "reads this prefix (a typo? the contract's serving sets name the served prefixes)"
            )

    def key(self, model: str, name: str) -> str:
        return f"{self.prefix}/{model}/{name}"

    def served(self, model: str) -> tuple[str | None, str | None, list[int]]:
        """(config text, its ETag, the versions it pins) of what serves now."""
        key = self.key(model, "config.pbtxt")
        found = _get(self.s3, self.bucket, key)
        if found is None:
            return None, None, []
        text = read_config(found[0], f"s3://{self.bucket}/{key}")
        return text, found[1], pinned_versions(text)

    def complete(self, model: str, version: int) -> dict | None:
        key = self.key(model, version_marker(version))
        found = _get(self.s3, self.bucket, key)
        return read_marker(found[0], f"s3://{self.bucket}/{key}") if found else None

    def switch(self, model: str, versions: list[int], action: str, config: str | None = None) -> None:
        """Serve `versions` (with `config`, else the served config), then record the switch. The config is
        written only over the one read (a race loses before anything changed); the history is appended to
        whatever it holds by then, read again while other runs append theirs, so a switch made is recorded."""
        text, etag, before = self.served(model)
        body = pin_version(config if config is not None else text or "", *versions)
        _put(
            self.s3,
            self.bucket,
            self.key(model, "config.pbtxt"),
            body.encode(),
            etag,
            "the served config",
            ContentType="text/plain",
        )
        entry = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "by": self.who,
            "action": action,
            "from": before,
            "to": sorted(set(versions)),
            **self.context,
        }
        for _attempt in range(HISTORY_ATTEMPTS):
            found = _get(self.s3, self.bucket, self.key(model, HISTORY))
            history = [*(self._read_history(model, found[0]) if found else []), entry]
            try:
                _put(
                    self.s3,
                    self.bucket,
                    self.key(model, HISTORY),
                    json.dumps(history[-HISTORY_KEPT:], indent=1).encode(),
                    found[1] if found else None,
                    "the promotion history",
                    ContentType="application/json",
                )
                return
            except RaceLost:
                continue
        raise PublishError(
            f"s3://{self.bucket}/{self.key(model, 'config.pbtxt')} now serves {entry['to']} (switched), but its "
            f"history entry lost {HISTORY_ATTEMPTS} races with other runs writing the history: the switch stands, "
            "and `seedance model history` does not show it"
        )

    def history(self, model: str) -> list[dict]:
        found = _get(self.s3, self.bucket, self.key(model, HISTORY))
        return self._read_history(model, found[0]) if found else []

    def _read_history(self, model: str, data: bytes) -> list[dict]:
        return read_history(data, f"s3://{self.bucket}/{self.key(model, HISTORY)}")


def _get_head(s3: Any, bucket: str, key: str) -> dict | None:
    try:
        return s3.head_object(Bucket=bucket, Key=key)
    except Exception as error:
        if _code(error) in ("NoSuchKey", "404", "NotFound"):
            return None
        raise


def _model_file_heads(repository: Repository, model: LocalModel) -> dict[str, tuple[dict | None, str]]:
    """Each model-level file's bucket copy (None when absent) and the local file's SHA-256, read once."""
    return {
        name: (_get_head(repository.s3, repository.bucket, repository.key(model.name, name)), sha256(path))
        for name, path in model.model_files.items()
    }


def publish(
    repository: Repository,
    model_dir: Path,
    version: int,
    alongside: bool = False,
    config_change: bool = False,
    resume: bool = False,
) -> None:
    """Record the intent, upload version N whole (every file conditional), mark it complete, then switch."""
    model = read_model(model_dir, version)
    if repository.complete(model.name, version) is not None:
        raise PublishError(
            f"{model.name} version {version} is published and immutable (servers may hold it); "
            f"publish {version + 1}, or `promote`/`rollback` to serve a published one"
        )
    base = f"{repository.prefix}/{model.name}"
    intent, recorded = _intent(repository, model.name, version, alongside, config_change, resume)
    alongside, config_change = intent["alongside"], intent["config_change"]
    served_text, _etag, served = repository.served(model.name)
    heads = _model_file_heads(repository, model)
    # Model-level files serve with every version: one that differs from the bucket's changes the served ones.
    changes = [
        name
        for name, (head, digest) in heads.items()
        if head is not None and head.get("Metadata", {}).get("sha256") != digest
    ]
    if served_text is not None and canonical_config(served_text) != canonical_config(model.config):
        changes.insert(0, "config.pbtxt")
        for line in config_diff(served_text, model.config):
            repository.say(line)
    if changes and served and alongside:
        raise PublishError(
            f"{', '.join(changes)} differ from what serves version(s) {served}, and a canary cannot carry its own: "
            "Triton serves every version of a model with the model's one config.pbtxt and files, so the served "
            "versions would change too; publish it without --alongside (with --config-change), or try it as a "
            "model of another name"
        )
    if changes and served and not config_change:
        raise PublishError(
            f"{', '.join(changes)} differ from what serves version(s) {served}: publishing would "
            "change the served versions' configuration too; pass --config-change if that is meant"
        )
    if not recorded:
        _put(
            repository.s3,
            repository.bucket,
            repository.key(model.name, intent_marker(version)),
            json.dumps(intent).encode(),
            None,
            f"version {version}'s intent",
            ContentType="application/json",
        )
    for key, path in model.version_files.items():
        digest = sha256(path)
        head = _get_head(repository.s3, repository.bucket, repository.key(model.name, key)) if resume else None
        if head is not None:
            if head.get("Metadata", {}).get("sha256") != digest:
                raise PublishError(
                    f"s3://{repository.bucket}/{base}/{key} differs from {path}: a version's files "
                    "never change; publish the next version"
                )
            continue
        _put(
            repository.s3,
            repository.bucket,
            repository.key(model.name, key),
            path.read_bytes(),
            None,
            "a version file",
            Metadata={"sha256": digest},
        )
        repository.say(f"uploaded s3://{repository.bucket}/{base}/{key}")
    for name, path in model.model_files.items():
        head, digest = heads[name]
        if head is None or head.get("Metadata", {}).get("sha256") != digest:
            _put(
                repository.s3,
                repository.bucket,
                repository.key(model.name, name),
                path.read_bytes(),
                head["ETag"] if head else None,
                "a model file",
                Metadata={"sha256": digest},
            )
            repository.say(f"uploaded s3://{repository.bucket}/{base}/{name}")
    marker = completion_marker(
        version, model.version_files, repository.who, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    )
    _put(
        repository.s3,
        repository.bucket,
        repository.key(model.name, version_marker(version)),
        json.dumps(marker, indent=1).encode(),
        None,
        f"version {version}'s completion marker",
        ContentType="application/json",
    )
    versions = sorted({version, *served}) if alongside else [version]
    repository.switch(model.name, versions, "canary" if alongside else "publish", model.config)
    repository.say(
        f"switched s3://{repository.bucket}/{base}/config.pbtxt to version(s) "
        f"{', '.join(map(str, versions))}: servers load {version} within their poll interval and keep "
        f"what they serve if it fails; ready when GET /v2/models/{model.name}/versions/{version}/ready "
        "answers 200"
        + (
            f"; callers reach it at /v2/models/{model.name}/versions/{version}/infer, then `seedance model promote`"
            if alongside and len(versions) > 1
            else ""
        )
    )


def _intent(
    repository: Repository, model: str, version: int, alongside: bool, config_change: bool, resume: bool
) -> tuple[dict[str, Any], bool]:
    """What this publish of N does, and whether that is recorded already: a new one records what it was
    asked (before any file); a resumed one does what the first run recorded, so a canary cut off midway
    resumes as a canary, whatever flags the resuming run repeats."""
    base = f"s3://{repository.bucket}/{repository.prefix}/{model}/{version}/"
    asked = {"alongside": alongside, "config_change": config_change}
    found = _get(repository.s3, repository.bucket, repository.key(model, intent_marker(version)))
    started = repository.s3.list_objects_v2(
        Bucket=repository.bucket, Prefix=f"{repository.prefix}/{model}/{version}/", MaxKeys=1
    ).get("KeyCount", 0)
    if (found is not None or started) and not resume:
        raise PublishError(
            f"{base} is incomplete (an upload was cut off, or another run is publishing it): --resume "
            "completes it from these files, as its first run asked"
        )
    if not resume or found is None:
        return asked, False
    recorded: dict[str, Any] = read_intent(found[0], f"{base[: -len(f'{version}/')]}{intent_marker(version)}")
    given = [flag for flag, on in asked.items() if on]
    if given and recorded != asked:
        raise PublishError(
            f"{base} was started with {_flags(recorded) or 'no flags'}; --resume completes it so, not with "
            f"{_flags(asked)}: resume without them, or publish the next version"
        )
    repository.say(f"resuming {base} as its first run asked: {_flags(recorded) or 'served alone'}")
    return recorded, True


def _flags(intent: dict[str, Any]) -> str:
    return " ".join(f"--{name.replace('_', '-')}" for name, on in intent.items() if on)


def promote(repository: Repository, model: str, version: int, action: str = "promote") -> None:
    """Serve one published, complete version alone (the canary after its trial, or any earlier one)."""
    if repository.complete(model, version) is None:
        raise PublishError(
            f"{model} version {version} is not a complete published version in "
            f"s3://{repository.bucket}/{repository.prefix}/{model}/ (publish it first)"
        )
    repository.switch(model, [version], action)
    repository.say(
        f"s3://{repository.bucket}/{repository.prefix}/{model}/config.pbtxt now serves version {version} "
        "alone; the others unload once it is ready everywhere"
    )


def rollback(repository: Repository, model: str, to: int | None = None) -> int | None:
    """Serve `to`, or the version that served alone before the current state, by the history. A rollback
    right after a rollback changes nothing (it would re-serve what the first one rolled back from)."""
    _text, _etag, served = repository.served(model)
    if to is not None:
        if served == [to]:
            repository.say(f"{model}: version {to} already serves alone; nothing changed")
            return None
        promote(repository, model, to, "rollback")
        return to
    history = repository.history(model)
    last = history[-1] if history else {}
    if last.get("action") == "rollback" and last.get("to") == served:
        repository.say(
            f"{model}: already rolled back to {served} (from {last.get('from')} at {last.get('at')}); nothing "
            "changed: `rollback --to N` serves an earlier version"
        )
        return None
    target = rollback_target(history, served)
    if target is None:
        raise PublishError(
            f"{model}: the history names no earlier version to roll back to (serving {served}); "
            "`rollback --to N` serves any published version"
        )
    promote(repository, model, target, "rollback")
    return target


def caller_arn(s3: Any) -> str:
    """Who is publishing, for the history: the ARN behind the client's own credentials (a caller that may
    not call STS is recorded as unknown; the history never blocks a publish)."""
    import boto3

    credentials = s3._request_signer._credentials
    if credentials is None:
        raise PublishError(NO_CREDENTIALS)
    try:
        sts = boto3.client(
            "sts",
            region_name=s3.meta.region_name,
            aws_access_key_id=credentials.access_key,
            aws_secret_access_key=credentials.secret_key,
            aws_session_token=credentials.token,
        )
        return sts.get_caller_identity()["Arn"]
    except Exception as error:  # botocore's errors, without importing botocore here
        if type(error).__module__.startswith("botocore"):
            return "unknown caller"
        raise


def publisher_s3(region: str | None, role_arn: str | None) -> Any:
    """An S3 client as the set's publisher role (the bucket lets nobody else write model files), or as the
    caller when it already is that role."""
    import boto3

    if role_arn is None:
        return boto3.client("s3", region_name=region)
    sts = boto3.client("sts", region_name=region)
    # The session is named after the caller, so the history's `by` says who assumed the role.
    caller = sts.get_caller_identity()["Arn"]
    credentials = sts.assume_role(RoleArn=role_arn, RoleSessionName=session_name(caller))["Credentials"]
    return boto3.client(
        "s3",
        region_name=region,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


# Tests replace this with a stubbed client.
s3_client: Callable[[str | None, str | None], Any] = publisher_s3


def _repository(args: argparse.Namespace) -> Repository:
    s3 = s3_client(args.region, args.role_arn)
    args.caller = caller_arn(s3)  # for the error a refusal gets (`explained`)
    run = getattr(args, "ci_run", None) or ci_run(os.environ)
    context = {k: v for k, v in (("reason", getattr(args, "reason", None)), ("ci_run", run)) if v}
    return Repository(s3, args.repository, args.caller, context=context)


NO_CREDENTIALS = (
    "no AWS credentials here: sign in (`aws sso login`, AWS_PROFILE) or set them; --role-arn is assumed with them"
)
# What AWS answers when the caller's credentials are no longer good: a HEAD has no body, so its 400 says no more.
_EXPIRED = ("400", "BadRequest", "ExpiredToken", "ExpiredTokenException", "InvalidToken", "InvalidClientTokenId")
_DENIED = ("AccessDenied", "403", "Forbidden")


def aws_refusal(error: Exception, args: argparse.Namespace) -> str | None:
    """One line that says why AWS refused a model verb and what to do, for the refusals people meet (no
    region, expired credentials, a role that may not write); None for any other error."""
    if type(error).__name__ == "NoCredentialsError":
        return NO_CREDENTIALS
    if type(error).__name__ == "NoRegionError":
        return "no AWS region: give --region (the bucket's, the platform contract's `region`) or set AWS_REGION"
    if type(error).__name__ == "EndpointConnectionError":
        return (
            f"AWS could not be reached ({error}): check the network, and --region (the bucket's, the platform "
            f"contract's `region`; this run used {args.region or 'the AWS configuration default'})"
        )
    code, operation = _code(error), getattr(error, "operation_name", "a call")
    who = getattr(args, "caller", None) or "the caller"
    if code in _EXPIRED:
        return (
            f"AWS refused {operation} ({code}) for {who}: the usual cause is expired or invalid credentials; "
            "renew them (`aws sso login`, or new keys) and run again"
        )
    if code in _DENIED:
        role = "" if args.role_arn is None else f" (--role-arn {args.role_arn} was assumed)"
        writes = operation in ("PutObject", "CreateMultipartUpload", "DeleteObject")
        return f"AWS denied {operation} to {who}{role}: " + (
            "only the serving set's publisher role writes model files (the contract's "
            "triton_endpoints.<set>.publisher_role_arn): pass it as --role-arn"
            if writes
            else "this identity may not read the served prefix; use the set's publisher role (--role-arn)"
        )
    return None


def explained(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A model verb whose AWS refusals and interruption are said in one line (no traceback)."""

    def verb(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except KeyboardInterrupt:
            if args.verb == "publish":
                raise Interrupted(
                    f"interrupted: version {args.version} is not switched to; run the same command with --resume "
                    "to complete it as this run was asked"
                ) from None
            raise Interrupted(f"interrupted: {args.verb} did not finish; run it again") from None
        except Exception as error:
            message = aws_refusal(error, args) if type(error).__module__.startswith("botocore") else None
            if message is None:
                raise
            raise PublishError(message) from None

    return verb


def _version(value: str) -> int:
    if not re.fullmatch(r"[1-9]\d{0,8}", value):
        raise argparse.ArgumentTypeError(f"{value!r}: Triton's version directories are numbered from 1")
    return int(value)


def _publish(args: argparse.Namespace) -> int:
    publish(_repository(args), args.model_dir, args.version, args.alongside, args.config_change, args.resume)
    return 0


def _promote(args: argparse.Namespace) -> int:
    promote(_repository(args), args.model, args.version)
    return 0


def _rollback(args: argparse.Namespace) -> int:
    rollback(_repository(args), args.model, args.to)
    return 0


def _history(args: argparse.Namespace) -> int:
    repository = _repository(args)
    entries = repository.history(args.model)
    if not entries:
        served = repository.served(args.model)[2]
        raise PublishError(
            f"{args.model}: no history in s3://{repository.bucket}/{repository.prefix}/{args.model}/ "
            + (f"(it serves {served}, switched without a history)" if served else "(no such model is published here)")
        )
    for entry in entries:
        why = "".join(f"  {k}: {entry[k]}" for k in ("reason", "ci_run") if entry.get(k))
        print(f"{entry['at']}  {entry['action']:<8} {entry['from']} -> {entry['to']}  by {entry['by']}{why}")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    model = commands.add_parser("model", help="publish, canary, promote and roll back a model in a served prefix")
    verbs = model.add_subparsers(dest="verb", required=True)

    def common(verb: argparse.ArgumentParser) -> None:
        verb.add_argument("--repository", required=True, help="s3://<bucket>/<served prefix>, from the contract")
        verb.add_argument("--region", help="the bucket's region (default: the AWS configuration's)")
        verb.add_argument("--role-arn", help="the set's publisher role to assume (only it may write model files)")

    def switching(verb: argparse.ArgumentParser) -> None:
        verb.add_argument("--reason", help="why, recorded in the model's history")
        verb.add_argument(
            "--ci-run",
            help="the CI run's URL, recorded in the history (default: read from GitHub's, GitLab's "
            "or Buildkite's variables)",
        )

    publish_verb = verbs.add_parser("publish", help="upload <model>/<N>/ and the model's files whole, then switch to N")
    publish_verb.add_argument("model_dir", type=Path, help="the model directory: config.pbtxt, its files and <N>/")
    publish_verb.add_argument("--version", type=_version, required=True, help="the version directory to publish")
    publish_verb.add_argument(
        "--alongside",
        action="store_true",
        help="the canary step: serve N beside the versions served now (then `promote`)",
    )
    publish_verb.add_argument(
        "--config-change",
        action="store_true",
        help="allow a config.pbtxt or model file that differs from the served one (it changes the served versions too)",
    )
    publish_verb.add_argument("--resume", action="store_true", help="complete a version an earlier run left incomplete")
    common(publish_verb)
    switching(publish_verb)
    publish_verb.set_defaults(run=explained(_publish))
    for name, help_text, run in (
        ("promote", "serve one published version alone (after a canary, or an older one)", _promote),
        ("rollback", "serve the version that served before the last switch", _rollback),
        ("history", "every switch of a model: when, who, from, to", _history),
    ):
        verb = verbs.add_parser(name, help=help_text)
        verb.add_argument("model", help="the model's name (its directory under the prefix)")
        if name == "promote":
            verb.add_argument("--version", type=_version, required=True, help="the version to serve alone")
        if name == "rollback":
            verb.add_argument("--to", type=_version, help="the published version to serve alone (default: by history)")
        common(verb)
        if name != "history":
            switching(verb)
        verb.set_defaults(run=explained(run))


# The platform's commands a team may reach for (plan and check its program, the cost gate, ...).
