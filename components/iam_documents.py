"""IAM policy documents as plain data. Pure: the components serialise them."""

from __future__ import annotations

from typing import Any

Document = dict[str, Any]


def service_assume_role_policy(service: str) -> Document:
    """Trust policy letting one AWS service (e.g. `eks.amazonaws.com`) assume the role."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
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
            {"Sid": "AccountAdministers", "Effect": "Allow", "Principal": {"AWS": root},
             "Action": "kms:*", "Resource": "*"},
            {"Sid": "AutoScalingUsesKeyForVolumes", "Effect": "Allow", "Principal": {"AWS": autoscaling},
             "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
             "Resource": "*"},
            {"Sid": "AutoScalingGrantsForAttachedVolumes", "Effect": "Allow", "Principal": {"AWS": autoscaling},
             "Action": "kms:CreateGrant", "Resource": "*",
             "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}}},
            {"Sid": "BudgetsPublishToTheEncryptedAlertTopic", "Effect": "Allow",
             "Principal": {"Service": "budgets.amazonaws.com"},
             "Action": ["kms:GenerateDataKey*", "kms:Decrypt"], "Resource": "*",
             "Condition": {"StringEquals": {"aws:SourceAccount": account_id}}},
            {"Sid": "CloudWatchLogsOfThisAccount", "Effect": "Allow",
             "Principal": {"Service": f"logs.{region}.amazonaws.com"},
             "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
             "Resource": "*",
             "Condition": {"ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:{partition}:logs:{region}:{account_id}:*"}}},
        ],
    }


def kms_volume_use_policy(key_arn: str) -> Document:
    """What the EBS CSI driver needs on a customer key to create and attach encrypted volumes."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"],
             "Resource": key_arn, "Condition": {"Bool": {"kms:GrantIsForAWSResource": "true"}}},
            {"Effect": "Allow",
             "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
             "Resource": key_arn},
        ],
    }


def s3_endpoint_policy(partition: str, account_id: str, region: str, bucket_names: list[str]) -> Document:
    """S3 through the endpoints: the listed buckets for this account's principals, and the ECR
    layer bucket, without which image pulls through the gateway fail. No other bucket."""
    statements = [{
        "Sid": "EcrImageLayers", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
        "Resource": f"arn:{partition}:s3:::prod-{region}-starport-layer-bucket/*",
    }]
    if bucket_names:
        buckets = [f"arn:{partition}:s3:::{name}" for name in bucket_names]
        statements.append({
            "Sid": "StackBucketsForThisAccount", "Effect": "Allow", "Principal": "*",
            "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket", "s3:GetBucketLocation",
                       "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
            "Resource": [*buckets, *[f"{arn}/*" for arn in buckets]],
            "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
        })
    return {"Version": "2012-10-17", "Statement": statements}


def kms_endpoint_policy(key_arn: str, account_id: str) -> Document:
    """KMS through the endpoint: the stack's key only, for this account's principals."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "StackKeyOnly", "Effect": "Allow", "Principal": "*",
        "Action": ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*", "kms:DescribeKey",
                   "kms:CreateGrant"],
        "Resource": key_arn,
        "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
    }]}


def account_endpoint_policy(account_id: str) -> Document:
    """Other interface endpoints (ECR, STS, logs...): any call, but only by this account's principals."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "ThisAccountOnly", "Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*",
        "Condition": {"StringEquals": {"aws:PrincipalAccount": account_id}},
    }]}
