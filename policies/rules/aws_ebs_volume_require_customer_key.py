"""EBS volumes are encrypted with a customer managed KMS key (the stack key), not unencrypted or AWS-managed."""

from components.plan.resources import EBS_VOLUME
from policies.framework import Rule
from policies.rules._helpers import aws_managed_key


def check(resource, config):
    if resource.type != EBS_VOLUME:
        return
    if resource.props.get("encrypted") is not True:
        yield f"{resource.name} is not encrypted"
    elif not resource.props.get("kmsKeyId") or aws_managed_key(resource.props.get("kmsKeyId")):
        yield f"{resource.name} is encrypted with the AWS-managed key, not a customer key"


RULE = Rule(
    name="aws-ebs-volume-require-customer-key",
    description="EBS volumes are encrypted with a customer managed KMS key.",
    severity="high",
    remediation="Set encrypted: true and kms_key_id to the stack's key ARN.",
    topics=("security", "storage"),
    check_resource=check,
    resource_types=frozenset({EBS_VOLUME}),
    standards=("EKS BPG: Data encryption - encryption at rest with customer managed keys",),
)
