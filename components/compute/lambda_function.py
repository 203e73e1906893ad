"""A Lambda function of this package: one module of its own code, a role that may do what the module does
and no more, its log group (kept, encrypted, its ingestion stated for the estimate), its environment and
dead letters encrypted with the stack key. The budget breaker and the Capacity Block drain use it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pulumi
import pulumi_aws as aws

from components.common.iam import service_assume_role_policy
from components.plan.resources import EXPECTED_GB_TAG

RUNTIME = "python3.12"
FUNCTION_LOG_RETENTION_DAYS = 30


def archive_files(module: Path) -> dict[str, Path]:
    """The function's archive: path inside it -> file here. The module imports the standard library and
    components/compute/labels.py alone (boto3 is the runtime's), which imports the taint keys from
    seedance_client/pod_admission.py (the standard library's alone), so these files are all it needs."""
    components = Path(__file__).resolve().parents[1]
    client = components.parent / "seedance_client"
    return {
        module.name: module,
        "components/__init__.py": components / "__init__.py",
        "components/compute/__init__.py": components / "compute" / "__init__.py",
        "components/compute/labels.py": components / "compute" / "labels.py",
        "seedance_client/__init__.py": client / "__init__.py",
        "seedance_client/pod_admission.py": client / "pod_admission.py",
    }


def log_writing(partition: str, region: str, account_id: str, function_name: str) -> dict:
    """The role's statement for the function's own log streams (the group is the stack's, made beforehand)."""
    return {
        "Sid": "WriteItsLogs",
        "Effect": "Allow",
        "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
        "Resource": f"arn:{partition}:logs:{region}:{account_id}:log-group:/aws/lambda/{function_name}:log-stream:*",
    }


def alert_topic_publishing(topic_arn: str, key_arn: str) -> list[dict]:
    """The role's statements to publish to the stack's alert topic (records, dead letters): the topic is
    encrypted with the stack key, which the publisher must be able to use."""
    return [
        {"Sid": "PublishToTheAlertTopic", "Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn},
        {
            "Sid": "UseTheStackKey",
            "Effect": "Allow",
            "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
            "Resource": key_arn,
        },
    ]


def packaged_function(
    name: str,
    *,
    function_name: str,
    module: Path,
    role_policy: pulumi.Input[str],
    account_id: str,
    environment: Mapping[str, pulumi.Input[str]],
    kms_key_arn: pulumi.Input[str],
    dead_letter_arn: pulumi.Input[str],
    timeout: int,
    expected_log_gb: str,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.lambda_.Function:
    """The function `<module>.handler`, with its role (`name`-role, `name`-policy) and log group (`name`-logs)."""
    logs = aws.cloudwatch.LogGroup(
        f"{name}-logs",
        name=f"/aws/lambda/{function_name}",
        retention_in_days=FUNCTION_LOG_RETENTION_DAYS,
        kms_key_id=kms_key_arn,
        tags={**tags, EXPECTED_GB_TAG: expected_log_gb},
        opts=opts,
    )
    role = aws.iam.Role(
        f"{name}-role",
        tags=dict(tags),
        opts=opts,
        assume_role_policy=json.dumps(service_assume_role_policy("lambda.amazonaws.com", account_id)),
    )
    aws.iam.RolePolicy(f"{name}-policy", role=role.name, opts=opts, policy=role_policy)
    return aws.lambda_.Function(
        f"{name}-function",
        name=function_name,
        runtime=RUNTIME,
        handler=f"{module.stem}.handler",
        role=role.arn,
        code=pulumi.AssetArchive(
            {inside: pulumi.FileAsset(str(path)) for inside, path in archive_files(module).items()}
        ),
        timeout=timeout,
        memory_size=128,
        kms_key_arn=kms_key_arn,
        dead_letter_config=aws.lambda_.FunctionDeadLetterConfigArgs(target_arn=dead_letter_arn),
        environment=aws.lambda_.FunctionEnvironmentArgs(variables=dict(environment)),
        tags=dict(tags),
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[logs])),
    )
