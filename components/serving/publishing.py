"""The platform's side of a served model set in the bucket: the marker, the publisher role, the write guard. Pure.

Triton opens `s3://bucket/<prefix>` only when something exists under it (core s3.h: an empty prefix
"is not a valid directory" and the server exits), so the platform writes one plain file at the
prefix's root in the run that creates the bucket. Triton takes only directories for models, so the
file is never loaded, and it tells whoever lists the prefix how to publish.
"""

from __future__ import annotations

from typing import Any

from seedance_client.publishing import MARKER_NAME, SWITCH_FILES

# Writes that change what a server loads: new objects, deletions (of versions too), and their ACLs.
WRITE_ACTIONS = [
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:DeleteObjectVersion",
    "s3:PutObjectAcl",
    "s3:PutObjectVersionAcl",
    "s3:RestoreObject",
    "s3:ReplicateObject",
    "s3:ReplicateDelete",
]

# What would undo the guard or the history from the bucket's side, or send its contents out: a lifecycle rule
# that expires the models, versioning suspended, the policy rewritten or deleted, replication out, the
# bucket deleted.
BUCKET_SETTINGS_ACTIONS = [
    "s3:PutLifecycleConfiguration",
    "s3:PutBucketVersioning",
    "s3:PutBucketPolicy",
    "s3:DeleteBucketPolicy",
    "s3:PutReplicationConfiguration",
    "s3:PutEncryptionConfiguration",
    "s3:PutBucketPublicAccessBlock",
    "s3:PutBucketAcl",
    "s3:PutBucketOwnershipControls",
    "s3:PutBucketObjectLockConfiguration",
    "s3:DeleteBucket",
    # Settings that copy the bucket's objects or their names elsewhere: inventory and access logs to
    # another bucket, events to another account's queue.
    "s3:PutInventoryConfiguration",
    "s3:PutBucketLogging",
    "s3:PutBucketNotification",
    "s3:PutAnalyticsConfiguration",
]


def publisher_role_name(serving_component: str) -> str:
    """The fixed name of a served set's publisher role (its ARN is known before it exists, so the bucket
    policy can name it in the same run)."""
    return f"{serving_component}-publisher"[:64]


def operator_role_name(serving_component: str) -> str:
    """The fixed name of a served set's operator role: the team's people switch what serves (promote, roll
    back) with it, and write no model file."""
    return f"{serving_component}-operator"[:64]


def switch_patterns(bucket_arn: str, prefix: str) -> list[str]:
    """The keys an operator writes under a prefix: each model's served config and its history. (S3's `*`
    spans `/`, so a file of these names inside a version directory matches too: Triton reads a model's
    config.pbtxt at the model's level only.)"""
    return [f"{bucket_arn}/{prefix}/*/{name}" for name in SWITCH_FILES]


def served_writes_guard(
    bucket_arn: str, publishers: dict[str, list[str]], operators: dict[str, list[str]] | None = None
) -> list[dict[str, Any]]:
    """Bucket-policy statements: under each served prefix, only that prefix's publisher roles may write
    inside a model directory (`<prefix>/*/*`: every model file and config), and its operator roles only
    the switch (each model's config.pbtxt and history). Files at the prefix's root are not models (Triton
    loads directories only), so the platform's marker stays writable by the deployer."""
    operators = operators or {}
    guards = [
        {
            "Sid": f"OnlyPublishersWrite{index}",
            "Effect": "Deny",
            "Principal": "*",
            "Action": WRITE_ACTIONS,
            "Resource": f"{bucket_arn}/{prefix}/*/*",
            "Condition": {"ArnNotLike": {"aws:PrincipalArn": sorted({*roles, *operators.get(prefix, [])})}},
        }
        for index, (prefix, roles) in enumerate(sorted(publishers.items()))
    ]
    switches: dict[str, list[str]] = {}
    for prefix, roles in sorted(operators.items()):
        for role in roles:
            switches.setdefault(role, []).extend(switch_patterns(bucket_arn, prefix))
    return guards + [
        {
            "Sid": f"OperatorsOnlySwitch{index}",
            "Effect": "Deny",
            "Principal": "*",
            "Action": WRITE_ACTIONS,
            "NotResource": patterns,
            "Condition": {"ArnLike": {"aws:PrincipalArn": [role]}},
        }
        for index, (role, patterns) in enumerate(sorted(switches.items()))
    ]


def bucket_access(
    bucket_arn: str, grants: list[tuple[list[str], list[str]]], key_actions: list[str], key_arn: str, region: str
) -> dict[str, Any]:
    """A role's access to model prefixes: list the bucket (Triton's S3 filesystem sends HeadBucket, which S3
    authorises as s3:ListBucket with no s3:prefix, so a prefix condition would deny it: core s3.h
    IsDirectory), each (object actions, resources) grant, and the stack key through S3 only."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket_arn},
            *({"Effect": "Allow", "Action": actions, "Resource": resources} for actions, resources in grants),
            {
                "Effect": "Allow",
                "Action": key_actions,
                "Resource": key_arn,
                "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}},
            },
        ],
    }


def publisher_policy(bucket_arn: str, prefixes: list[str], key_arn: str, region: str) -> dict[str, Any]:
    """What publishing needs: read and write under the set's prefixes (tagging: an upload with tags, the cost
    tags, needs it, and Pulumi reads an object's tags back), encrypting with the stack key."""
    objects = ["s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:GetObjectTagging"]
    return bucket_access(
        bucket_arn,
        [(objects, [f"{bucket_arn}/{prefix}/*" for prefix in prefixes])],
        ["kms:GenerateDataKey", "kms:Decrypt"],
        key_arn,
        region,
    )


def operator_policy(bucket_arn: str, prefixes: list[str], key_arn: str, region: str) -> dict[str, Any]:
    """What promote, roll back and history need: read under the set's prefixes, write each model's config
    and history there (never a model file), encrypting with the stack key."""
    return bucket_access(
        bucket_arn,
        [
            (["s3:GetObject"], [f"{bucket_arn}/{p}/*" for p in prefixes]),
            (["s3:PutObject"], [pattern for p in prefixes for pattern in switch_patterns(bucket_arn, p)]),
        ],
        ["kms:GenerateDataKey", "kms:Decrypt"],
        key_arn,
        region,
    )


def marker_key(prefix: str) -> str:
    return f"{prefix}/{MARKER_NAME}"


def marker_text(prefix: str) -> str:
    return (
        f"# Triton model repository: {prefix}\n\n"
        "Written by the platform so Triton can open this prefix before any model exists; Triton ignores "
        "files here.\n\nA model is `<name>/config.pbtxt` with immutable version directories `<name>/<N>/`. "
        "Upload a new version directory completely, then switch to it by rewriting `config.pbtxt` with "
        "`version_policy: { specific: { versions: [N] } }` (`seedance model publish` does both, in that "
        "order). Triton follows within its poll interval; a version that fails to load leaves the "
        "loaded one serving. See docs/publishing-models.md.\n"
    )
