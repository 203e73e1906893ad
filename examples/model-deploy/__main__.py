"""Publish one version of the model under ./model_repository to a served prefix of the platform's Triton.

The same order and objects as `seedance model publish`: the version directory `<model>/<N>/` first, whole
(each file with its SHA-256), then its completion marker, then `<model>/config.pbtxt` pinned to N
(`version_policy: specific`), which is the switch the servers follow within their poll interval: the CLI's
`promote`, `rollback --to` and `publish --resume` work on what this program wrote (it keeps no history:
`seedance model history` shows the CLI's switches only). Nothing is rolled; a version that fails to load
leaves the previous one serving. Publish N+1 by adding its directory and setting `model-deploy:version`;
go back by setting the old number (every version directory here is published, and none is ever deleted).
"""

import json
import time
from pathlib import Path

import pulumi
import pulumi_aws as aws

from seedance_client.publishing import completion_marker, model_name, pin_version, sha256, version_marker
from seedance_client.reference import PlatformReference

config = pulumi.Config()
platform = PlatformReference(config.require("platform_stack"))
serving_set = platform.contract.apply(lambda c: c.triton_endpoints[config.require("serving_set")])
# s3://bucket/prefix of the set (or its canary's, to try a version there first)
repository = serving_set.apply(lambda s: s.canary_model_repository if config.get_bool("canary") else s.model_repository)
prefix = repository.apply(lambda url: url.split("/", 3)[3])
# Only the set's publisher role may write its model files (the bucket denies everyone else).
publisher = aws.Provider(
    "publisher",
    region=aws.get_region().region,
    assume_roles=[
        aws.ProviderAssumeRoleArgs(
            role_arn=serving_set.apply(lambda s: s.publisher_role_arn), session_name="model-deploy"
        )
    ],
)
model_dir = Path(__file__).parent / "model_repository" / config.require("model")
version = config.require_int("version")
bucket = platform.contract.apply(lambda c: c.model_repository_bucket)
key_arn = platform.contract.apply(lambda c: c.kms_key_arn)
model_config = (model_dir / "config.pbtxt").read_text()
if model_name(model_config) not in (None, model_dir.name):
    raise ValueError(f"{model_dir}/config.pbtxt names another model; Triton needs {model_dir.name!r}")
tags = {"team": config.require("team"), "env": pulumi.get_stack(), "cost-center": config.require("cost_center")}


def publish(key: str, opts: pulumi.ResourceOptions | None = None, **content) -> aws.s3.BucketObjectv2:
    return aws.s3.BucketObjectv2(
        key.replace("/", "-"),
        bucket=bucket,
        key=pulumi.Output.concat(prefix, "/", key),
        server_side_encryption="aws:kms",
        kms_key_id=key_arn,
        tags=tags,
        opts=pulumi.ResourceOptions.merge(pulumi.ResourceOptions(provider=publisher), opts),
        **content,
    )


def version_files(number: int) -> list[aws.s3.BucketObjectv2]:
    # Published versions stay in the bucket even when their directory leaves this program: a server may
    # hold one, and the pointer can go back to it (rollback is a config.pbtxt change).
    paths = {
        p.relative_to(model_dir).as_posix(): p for p in sorted((model_dir / str(number)).rglob("*")) if p.is_file()
    }
    # and a published version never changes: editing its files here changes nothing there
    kept = pulumi.ResourceOptions(retain_on_delete=True, ignore_changes=["source", "metadata", "content"])
    files = [
        publish(
            f"{model_dir.name}/{key}", source=pulumi.FileAsset(str(path)), metadata={"sha256": sha256(path)}, opts=kept
        )
        for key, path in paths.items()
    ]
    marker = completion_marker(
        number,
        paths,
        f"pulumi:{pulumi.get_project()}/{pulumi.get_stack()}",
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    return [
        *files,
        publish(
            f"{model_dir.name}/{version_marker(number)}",
            content=json.dumps(marker, indent=1),
            content_type="application/json",
            opts=pulumi.ResourceOptions.merge(kept, pulumi.ResourceOptions(depends_on=files)),
        ),
    ]


versions = sorted(int(d.name) for d in model_dir.iterdir() if d.is_dir() and d.name.isdigit())
if version not in versions:
    raise ValueError(f"{model_dir}/{version}: no such version directory")
files = {number: version_files(number) for number in versions}
pointer = publish(
    f"{model_dir.name}/config.pbtxt",
    content=pin_version(model_config, version),
    opts=pulumi.ResourceOptions(depends_on=files[version]),
)
pulumi.export("model_repository", repository)
pulumi.export("serving_version", version)
pulumi.export("objects", [o.key for o in [*(f for number in versions for f in files[number]), pointer]])
