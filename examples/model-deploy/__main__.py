"""Publish the models under ./model_repository to the platform's Triton model repository.

Each file becomes an S3 object under `<model_prefix>/`, encrypted with the platform's KMS key; the
Triton Deployment of that prefix loads every model in it at start-up (roll it to pick them up).
"""

from pathlib import Path

import pulumi
import pulumi_aws as aws

from components.platform_reference import PlatformReference

config = pulumi.Config()
platform = PlatformReference(config.require("platform_stack"))
prefix = config.require("model_prefix").strip("/")
repository = Path(__file__).parent / "model_repository"
bucket = platform.contract.apply(lambda c: c.model_repository_bucket)
key_arn = platform.contract.apply(lambda c: c.kms_key_arn)

published = []
for path in sorted(p for p in repository.rglob("*") if p.is_file()):
    relative = path.relative_to(repository).as_posix()
    published.append(aws.s3.BucketObjectv2(
        f"model-{relative.replace('/', '-')}",
        bucket=bucket,
        key=f"{prefix}/{relative}",
        source=pulumi.FileAsset(str(path)),
        server_side_encryption="aws:kms",
        kms_key_id=key_arn,
        tags={"team": "video-ml", "env": "dev", "cost-center": "cc-video-7100"},
    ))
pulumi.export("model_repository", pulumi.Output.concat("s3://", bucket, f"/{prefix}"))
pulumi.export("objects", [o.key for o in published])
