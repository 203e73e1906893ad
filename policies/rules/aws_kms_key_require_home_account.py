"""Whatever the stack encrypts, it encrypts with a key of its own accounts: volumes (declared, launched by a
template or an instance, made by the EBS CSI driver for a class), Kubernetes secrets and new bucket objects. A
key ARN of another account puts the data in that account's hands: its key policy decides who may decrypt, and
it may disable the key or schedule its deletion, taking the data with it. A key id or alias without an ARN is
resolved in the caller's own account. Home: the accounts the config names, else the account of the node roles'
access entries; a plan with neither is not judged (whose key is home cannot be told)."""

from typing import Any

from components.plan.resources import (
    EBS_VOLUME,
    EC2_INSTANCE,
    EKS_CLUSTER,
    K8S_STORAGE_CLASS,
    LAUNCH_TEMPLATE,
    S3_BUCKETS,
    S3_ENCRYPTION_CONFIGURATIONS,
)
from components.plan.unknowns import of_types
from components.storage.ebs_csi import class_parameters, kms_keys
from policies.framework import Rule
from policies.readers.iam import account_of
from policies.rules._helpers import (
    block_devices,
    bucket_encryption_rules,
    encryption_defaults,
    home_accounts,
    secrets_encryption,
)

JUDGED = frozenset(
    {
        EBS_VOLUME,
        EC2_INSTANCE,
        EKS_CLUSTER,
        K8S_STORAGE_CLASS,
        LAUNCH_TEMPLATE,
        *S3_BUCKETS,
        *S3_ENCRYPTION_CONFIGURATIONS,
    }
)


def key_references(resource) -> list[tuple[str, Any]]:
    """(what is encrypted, the key named for it) of each KMS key a resource encrypts with."""
    props = resource.props
    if resource.type == EBS_VOLUME:
        return [("the volume", props.get("kmsKeyId"))]
    if resource.type == K8S_STORAGE_CLASS:
        return [("its volumes", key) for key in kms_keys(class_parameters(resource) or {})]
    if resource.type in (LAUNCH_TEMPLATE, EC2_INSTANCE):
        return [(f"volume {name}", ebs.get("kmsKeyId")) for name, ebs in block_devices(resource)]
    if resource.type == EKS_CLUSTER:
        return [("Kubernetes secrets", secrets_encryption(resource)[1])]
    return [
        ("new objects", default.get("kmsMasterKeyId"))
        for default in encryption_defaults(bucket_encryption_rules(resource))
    ]


def check(resources, config):
    home = home_accounts(resources, config["home_accounts"])
    if not home:
        return
    for resource in of_types(resources, *JUDGED):
        for what, key in key_references(resource):
            account = account_of(key) if isinstance(key, str) and key.startswith("arn:") else None
            if account is not None and account not in home:
                yield (
                    resource.urn,
                    f"{resource.name}: encrypts {what} with a key of account {account} ({key}), not one of the stack's",
                )


RULE = Rule(
    name="aws-kms-key-require-home-account",
    description="Volumes, Kubernetes secrets and bucket objects are encrypted with keys of the stack's own accounts.",
    severity="high",
    remediation="Name the stack key (or another key of the stack's accounts); another account's key policy decides "
    "who decrypts the data, and that account can disable or delete the key.",
    topics=("security", "encryption"),
    config={"home_accounts": {"type": "array", "items": {"type": "string", "pattern": r"^\d{12}$"}, "default": []}},
    check_stack=check,
    standards=(
        "CIS EKS 5.3.1 (secrets under a customer managed key)",
        "AWS KMS Developer Guide: key policies are the primary way to control access to a key",
    ),
)
