"""`ModelRepository`: the S3 bucket Triton loads models from (and application teams publish to)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.common.buckets import private_bucket
from components.common.iam import deny_plain_http
from components.serving.publishing import BUCKET_SETTINGS_ACTIONS, served_writes_guard

# Old model versions stay recoverable for a month after they are replaced.
NONCURRENT_VERSION_DAYS = 30


def bucket_policy(
    bucket_arn: str,
    publishers: dict[str, list[str]],
    administrators: list[str],
    operators: dict[str, list[str]] | None = None,
) -> dict:
    """TLS only; a model file under a served prefix is written by that prefix's publisher roles only (a
    model is code the servers run: anyone else's write would be code in serving), its switch (each model's
    config and history) by those and its operator roles; and the bucket's own
    settings change only by `administrators` (the deployer and break-glass roles). If those roles are lost,
    the account's root user can still delete a bucket policy (S3 lets it, whatever the policy says)."""
    settings = {
        "Sid": "OnlyAdministratorsChangeTheBucket",
        "Effect": "Deny",
        "Principal": "*",
        "Action": BUCKET_SETTINGS_ACTIONS,
        "Resource": bucket_arn,
        "Condition": {"ArnNotEquals": {"aws:PrincipalArn": sorted(set(administrators))}},
    }
    return {
        "Version": "2012-10-17",
        "Statement": [deny_plain_http(bucket_arn), *served_writes_guard(bucket_arn, publishers, operators), settings],
    }


class ModelRepository(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]
    bucket_arn: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        bucket_name: str,
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        publishers: dict[str, list[str]],
        administrators: list[str],
        operators: dict[str, list[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`publishers`: served prefix -> the role ARNs that alone may write model files under it;
        `operators`: served prefix -> the role ARNs that may write its switch only;
        `administrators`: the roles that alone may change the bucket's settings (the deployer's first)."""
        super().__init__("seedance:serving:ModelRepository", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        bucket = private_bucket(name, bucket_name=bucket_name, kms_key_arn=kms_key_arn, tags=tags, opts=child)
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket.id,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-replaced-model-versions",
                    status="Enabled",
                    filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                    noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                        noncurrent_days=NONCURRENT_VERSION_DAYS
                    ),
                    abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=7
                    ),
                )
            ],
            opts=child,
        )
        aws.s3.BucketPolicy(
            f"{name}-tls-only",
            bucket=bucket.id,
            opts=child,
            policy=bucket.arn.apply(lambda arn: json.dumps(bucket_policy(arn, publishers, administrators, operators))),
        )
        self.bucket_name = bucket.bucket
        self.bucket_arn = bucket.arn
        self.register_outputs({"bucket_name": self.bucket_name, "bucket_arn": self.bucket_arn})
