"""IAM policy documents as plain data. Pure: the components serialise them."""

from __future__ import annotations

from typing import Any

Document = dict[str, Any]


def service_assume_role_policy(
    service: str, source_account: str | None = None, source_arn: str | None = None
) -> Document:
    """Trust policy letting one AWS service (e.g. `eks.amazonaws.com`) assume the role; with a source, only
    on behalf of this account's resource (confused-deputy protection: another account's cluster or flow
    log cannot make the service act with this role)."""
    statement: Document = {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
    if source_account:
        statement["Condition"] = {
            "StringEquals": {"aws:SourceAccount": source_account},
            **({"ArnLike": {"aws:SourceArn": source_arn}} if source_arn else {}),
        }
    return {"Version": "2012-10-17", "Statement": [statement]}


def flow_log_delivery_policy(log_group_arn: str) -> Document:
    """What VPC flow log delivery needs on its log group (the VPC user guide's role policy, scoped to the
    group the stack creates, so neither CreateLogGroup nor an account-wide DescribeLogGroups)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "logs:DescribeLogStreams", "Resource": log_group_arn},
            {
                "Effect": "Allow",
                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": f"{log_group_arn}:log-stream:*",
            },
        ],
    }


def irsa_trust_policy(oidc_provider_arn: str, issuer_url: str, namespace: str, service_account: str) -> Document:
    """Trust policy for IAM Roles for Service Accounts: only this one service account may assume it."""
    issuer = issuer_url.removeprefix("https://")
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                        f"{issuer}:aud": "sts.amazonaws.com",
                    }
                },
            }
        ],
    }


AUTOSCALING_SERVICE = "autoscaling.amazonaws.com"
AUTOSCALING_ROLE_PATH = f"/aws-service-role/{AUTOSCALING_SERVICE}/"
AUTOSCALING_ROLE_NAME = "AWSServiceRoleForAutoScaling"


def autoscaling_role_arn(partition: str, account_id: str) -> str:
    """The Auto Scaling service-linked role: it launches every ASG instance, so it opens their encrypted volumes."""
    return f"arn:{partition}:iam::{account_id}:role{AUTOSCALING_ROLE_PATH}{AUTOSCALING_ROLE_NAME}"


def stack_key_policy(partition: str, account_id: str, region: str, autoscaling_role: str) -> Document:
    """Key policy of the stack's KMS key.

    The account root keeps administration (so IAM policies decide who else may use it); the
    Auto Scaling service-linked role (`autoscaling_role`, which must exist before the key: KMS
    rejects a policy naming an unknown principal) may use the key, without which nodes with
    encrypted root volumes fail to launch; AWS Budgets may use it to publish to the encrypted alert
    topic; CloudWatch Logs may use it for this account's log groups only.
    """
    root = f"arn:{partition}:iam::{account_id}:root"
    autoscaling = autoscaling_role
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AccountAdministers",
                "Effect": "Allow",
                "Principal": {"AWS": root},
                "Action": "kms:*",
                "Resource": "*",
            },
            {
                "Sid": "AutoScalingUsesKeyForVolumes",
                "Effect": "Allow",
                "Principal": {"AWS": autoscaling},
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
                "Resource": "*",
            },
            {
                "Sid": "AutoScalingGrantsForAttachedVolumes",
                "Effect": "Allow",
                "Principal": {"AWS": autoscaling},
                "Action": "kms:CreateGrant",
                "Resource": "*",
                "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
            },
            {
                "Sid": "BudgetsPublishToTheEncryptedAlertTopic",
                "Effect": "Allow",
                "Principal": {"Service": "budgets.amazonaws.com"},
                "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account_id},
                    "ArnLike": {"aws:SourceArn": f"arn:{partition}:budgets::{account_id}:*"},
                },
            },
            {
                "Sid": "CloudWatchLogsOfThisAccount",
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{region}.amazonaws.com"},
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
                "Resource": "*",
                "Condition": {
                    "ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account_id}:*"}
                },
            },
        ],
    }


def kms_volume_use_policy(key_arn: str) -> Document:
    """What the EBS CSI driver needs on a customer key to create and attach encrypted volumes."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"],
                "Resource": key_arn,
                "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}},
            },
            {
                "Effect": "Allow",
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
                "Resource": key_arn,
            },
        ],
    }


# registry.k8s.io's S3 mirror per region is prod-registry-k8s-io-<region>, except these
# (kubernetes/registry.k8s.io, cmd/archeio/internal/app/buckets.go).
_REGISTRY_K8S_BUCKET_EXCEPTIONS = {"eu-west-2": "767373bbdcb8270361b96548387bf2a9ad0d48758c35-eu-west-2"}


def cluster_read_only_buckets(partition: str, region: str) -> list[str]:
    """Buckets of AWS and of public registries that a cluster's nodes read through the S3 gateway
    without our credentials: the endpoint policy must let them through or image pulls and node
    package installs fail with 403. From aws-samples/data-perimeter-policy-examples
    (vpc_endpoint_policies/s3_endpoint_policy.json, service_owned_resources.md) and registry.k8s.io:

    - ECR serves image layers from `prod-<region>-starport-layer-bucket` (presigned by an ECR account);
    - registry.k8s.io redirects clients on AWS to its mirror bucket in the region (anonymous);
    - Amazon Linux 2023 and 2 package repositories (anonymous);
    - quay.io, where the Prometheus images come from, redirects AWS clients to presigned URLs in its
      buckets (Red Hat's allowlist names them; in us-east-1 they pass the gateway).
    """
    names = [
        f"prod-{region}-starport-layer-bucket",
        _REGISTRY_K8S_BUCKET_EXCEPTIONS.get(region, f"prod-registry-k8s-io-{region}"),
        f"al2023-repos-{region}-de612dc2",
        f"al2023-{region}",
        f"amazonlinux-2-repos-{region}",
        f"amazonlinux.{region}.amazonaws.com",
        f"packages.{region}.amazonaws.com",
        f"repo.{region}.amazonaws.com",
        "quay-registry",
        "quayio-production-s3",
    ]
    return [f"arn:{partition}:s3:::{name}/*" for name in names]


def s3_endpoint_policy(
    partition: str, account_id: str, region: str, other_account_buckets: list[str], public_read_buckets: list[str]
) -> Document:
    """S3 through the endpoints, as a data perimeter: this account's principals may use this account's
    buckets (models, checkpoints, datasets) and the listed buckets of other accounts; anyone may read
    the AWS and registry buckets the cluster itself needs. Writing to any other bucket is impossible
    from the VPC, so data cannot be copied out through the endpoint."""
    read_only = cluster_read_only_buckets(partition, region) + [
        f"arn:{partition}:s3:::{name}/*" for name in public_read_buckets
    ]
    statements = [
        {
            "Sid": "ThisAccountsPrincipalsOnThisAccountsBuckets",
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id, "aws:ResourceAccount": account_id}},
        },
        # Presigned (ECR) and anonymous (registries, package repositories) reads carry no principal of ours.
        {
            "Sid": "ClusterImagesAndPackages",
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:GetObject",
            "Resource": read_only,
        },
    ]
    if other_account_buckets:
        buckets = [f"arn:{partition}:s3:::{name}" for name in other_account_buckets]
        statements.append(
            {
                "Sid": "ListedBucketsOfOtherAccounts",
                "Effect": "Allow",
                "Principal": "*",
                "Action": [
                    "s3:GetObject",
                    "s3:PutObject",
                    "s3:DeleteObject",
                    "s3:ListBucket",
                    "s3:GetBucketLocation",
                    "s3:AbortMultipartUpload",
                    "s3:ListMultipartUploadParts",
                ],
                "Resource": [*buckets, *[f"{arn}/*" for arn in buckets]],
                "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}


def kms_endpoint_policy(key_arn: str, account_id: str) -> Document:
    """KMS through the endpoint: the stack's key only, for this account's principals."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "StackKeyOnly",
                "Effect": "Allow",
                "Principal": "*",
                "Action": [
                    "kms:Decrypt",
                    "kms:Encrypt",
                    "kms:GenerateDataKey*",
                    "kms:ReEncrypt*",
                    "kms:DescribeKey",
                    "kms:CreateGrant",
                ],
                "Resource": key_arn,
                "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
            }
        ],
    }


def account_endpoint_policy(account_id: str) -> Document:
    """Other interface endpoints (ECR, logs...): any call, but only by this account's principals."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ThisAccountOnly",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "*",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
            }
        ],
    }


def sts_endpoint_policy(account_id: str) -> Document:
    """STS: this account's principals, plus web-identity federation into this account's roles.

    AssumeRoleWithWebIdentity (every IRSA role) is an unsigned call: it carries no
    aws:PrincipalAccount, so the account-only statement alone would deny it once private DNS sends
    STS traffic to the endpoint, and no pod with an IAM role would start. The IAM User Guide's form
    limits federation to roles of this account with aws:ResourceAccount.
    """
    policy = account_endpoint_policy(account_id)
    policy["Statement"].append(
        {
            "Sid": "WebIdentityIntoThisAccountsRoles",
            "Effect": "Allow",
            "Principal": "*",
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:ResourceAccount": account_id}},
        }
    )
    return policy


def deny_plain_http(bucket_arn: str) -> Document:
    """The bucket-policy statement that refuses every request not made over TLS."""
    return {
        "Sid": "DenyPlainHttp",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": [bucket_arn, f"{bucket_arn}/*"],
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
