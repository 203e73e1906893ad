"""`seedance model publish`: one model version into a served prefix, in the order that makes the switch
atomic for Triton's poll mode: the immutable version directory first, whole, then the model's
config.pbtxt pinned to it. A version already published is refused, never overwritten."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

import boto3

from components.common.files import read_text
from seedance_client.publishing import PublishError, model_name, pin_version, pinned_versions, split_repository

MAX_FILES = 10_000  # a model version is a handful of files; a directory of millions is a mistake


def _version_files(model_dir: Path, version: int) -> list[Path]:
    version_dir = model_dir / str(version)
    if not version_dir.is_dir() or version_dir.is_symlink():
        raise PublishError(f"{version_dir}: no such version directory (a model is <name>/config.pbtxt and <name>/<N>/)")
    files = []
    for path in sorted(version_dir.rglob("*")):
        if path.is_symlink():
            raise PublishError(f"{path}: a symbolic link; publish the files themselves")
        if path.is_file():
            files.append(path)
            if len(files) > MAX_FILES:
                raise PublishError(f"{version_dir}: more than {MAX_FILES:,} files")
    if not files:
        raise PublishError(f"{version_dir}: empty")
    return files


def publish(s3: Any, repository: str, model_dir: Path, version: int, say: Callable[[str], None] = print,
            alongside: bool = False) -> str:
    """Upload the version, then the pinned config; the config's key, once written. `alongside`: the canary
    step: serve the new version beside those served now (callers that ask for it by number get it, the
    rest keep theirs); `promote` then serves it alone."""
    bucket, prefix = split_repository(repository)
    model = model_dir.resolve().name
    config = read_text(model_dir / "config.pbtxt", "model config")
    if model_name(config) not in (None, model):
        raise PublishError(f"{model_dir}/config.pbtxt names {model_name(config)!r}; Triton needs the directory's name "
                           f"({model!r})")
    files = _version_files(model_dir, version)
    base = f"{prefix}/{model}"
    existing = s3.list_objects_v2(Bucket=bucket, Prefix=f"{base}/{version}/", MaxKeys=1)
    if existing.get("KeyCount", 0):
        raise PublishError(f"s3://{bucket}/{base}/{version}/ exists: versions are immutable (servers may hold it); "
                           f"publish {version + 1}")
    for path in files:
        key = f"{base}/{path.relative_to(model_dir).as_posix()}"
        s3.upload_file(str(path), bucket, key)
        say(f"uploaded s3://{bucket}/{key}")
    key = f"{base}/config.pbtxt"
    served = _served_versions(s3, bucket, key) if alongside else []
    s3.put_object(Bucket=bucket, Key=key, Body=pin_version(config, version, *served).encode(),
                  ContentType="text/plain")
    now = ", ".join(str(v) for v in sorted({version, *served}))
    say(f"switched s3://{bucket}/{key} to version(s) {now}: servers load {version} within their poll interval and "
        f"keep what they serve if it fails; ready when GET /v2/models/{model}/versions/{version}/ready answers 200"
        + (f"; callers reach it at /v2/models/{model}/versions/{version}/infer, then `seedance model promote`"
           if served else ""))
    return key


def _served_versions(s3: Any, bucket: str, key: str) -> list[int]:
    try:
        current = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    except s3.exceptions.NoSuchKey:
        return []
    return pinned_versions(current)


def promote(s3: Any, repository: str, model: str, version: int, say: Callable[[str], None] = print) -> str:
    """Serve `version` alone (after a canary beside the others): only a version already served is promoted."""
    bucket, prefix = split_repository(repository)
    key = f"{prefix}/{model}/config.pbtxt"
    served = _served_versions(s3, bucket, key)
    if version not in served:
        raise PublishError(f"s3://{bucket}/{key} serves {served or 'no pinned version'}, not {version}: publish it "
                           "first (with --alongside to try it beside them)")
    current = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    s3.put_object(Bucket=bucket, Key=key, Body=pin_version(current, version).encode(), ContentType="text/plain")
    say(f"s3://{bucket}/{key} now serves version {version} alone; the others unload once it is ready everywhere")
    return key


def publisher_s3(region: str | None, role_arn: str | None) -> Any:
    """An S3 client as the set's publisher role (the bucket lets nobody else write model files), or as the
    caller when it already is that role."""
    if role_arn is None:
        return boto3.client("s3", region_name=region)
    credentials = boto3.client("sts", region_name=region).assume_role(
        RoleArn=role_arn, RoleSessionName="seedance-model-publish")["Credentials"]
    return boto3.client("s3", region_name=region, aws_access_key_id=credentials["AccessKeyId"],
                        aws_secret_access_key=credentials["SecretAccessKey"],
                        aws_session_token=credentials["SessionToken"])


# Tests replace this with a stubbed client.
s3_client: Callable[[str | None, str | None], Any] = publisher_s3


def _publish_command(args: argparse.Namespace) -> int:
    if args.version < 1:
        raise PublishError(f"--version {args.version}: Triton's version directories are numbered from 1")
    publish(s3_client(args.region, args.role_arn), args.repository, args.model_dir, args.version,
            alongside=args.alongside)
    return 0


def _promote_command(args: argparse.Namespace) -> int:
    promote(s3_client(args.region, args.role_arn), args.repository, args.model, args.version)
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    model = commands.add_parser("model", help="publish a model version to a served prefix (no platform up)")
    verbs = model.add_subparsers(dest="verb", required=True)
    publish_verb = verbs.add_parser("publish", help="upload <model>/<N>/ whole, then switch config.pbtxt to N")
    publish_verb.add_argument("model_dir", type=Path, help="the model directory: config.pbtxt and <N>/")
    publish_verb.add_argument("--version", type=int, required=True, help="the version directory to publish (>= 1)")
    publish_verb.add_argument("--repository", required=True, help="s3://<bucket>/<served prefix>, from the contract")
    publish_verb.add_argument("--region", help="the bucket's region (default: the AWS configuration's)")
    publish_verb.add_argument("--role-arn", help="the set's publisher role to assume (only it may write model files)")
    publish_verb.add_argument("--alongside", action="store_true",
                              help="the canary step: serve N beside the versions served now (then `promote`)")
    publish_verb.set_defaults(run=_publish_command)
    promote_verb = verbs.add_parser("promote", help="serve one version alone, after trying it --alongside")
    promote_verb.add_argument("model", help="the model's name (its directory under the prefix)")
    promote_verb.add_argument("--version", type=int, required=True, help="the version to serve alone")
    promote_verb.add_argument("--repository", required=True, help="s3://<bucket>/<served prefix>, from the contract")
    promote_verb.add_argument("--region", help="the bucket's region (default: the AWS configuration's)")
    promote_verb.add_argument("--role-arn", help="the set's publisher role to assume")
    promote_verb.set_defaults(run=_promote_command)
