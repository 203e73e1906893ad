"""An S3 bucket only its account reaches: public access blocked, encrypted by default with the stack key
(bucket keys: one KMS call per object per session), versioned."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws


def private_bucket(
    name: str,
    *,
    kms_key_arn: pulumi.Input[str],
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
    bucket_name: str | None = None,
) -> aws.s3.Bucket:
    bucket = aws.s3.Bucket(f"{name}-bucket", bucket=bucket_name, tags=dict(tags), opts=opts)
    aws.s3.BucketPublicAccessBlock(
        f"{name}-no-public",
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
        opts=opts,
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        f"{name}-encryption",
        bucket=bucket.id,
        rules=[
            aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                    sse_algorithm="aws:kms", kms_master_key_id=kms_key_arn
                ),
                bucket_key_enabled=True,
            )
        ],
        opts=opts,
    )
    aws.s3.BucketVersioning(
        f"{name}-versioning",
        bucket=bucket.id,
        versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
        opts=opts,
    )
    return bucket
