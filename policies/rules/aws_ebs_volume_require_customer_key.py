"""EBS volumes are encrypted with a customer managed KMS key (the stack key), not unencrypted or AWS-managed:
the volumes the stack declares, and the ones the EBS CSI driver makes for claims (a StorageClass of
ebs.csi.aws.com says `encrypted: "true"` and a kmsKeyId in its parameters, or the driver makes them plain)."""

from components.plan.resources import EBS_VOLUME, K8S_STORAGE_CLASS
from components.storage.ebs_csi import class_parameters, encrypts, kms_keys
from policies.framework import Rule
from policies.rules._helpers import customer_key


def check(resource, config):
    parameters = class_parameters(resource)
    if parameters is not None:
        if not encrypts(parameters):
            yield (
                f"{resource.name}: the EBS CSI driver makes this class's volumes unencrypted (it encrypts only "
                'when every `encrypted` parameter, in any letter case, is "true")'
            )
        elif not (keys := kms_keys(parameters)) or not all(customer_key(key) for key in keys):
            yield f"{resource.name}: the EBS CSI driver encrypts this class's volumes with the AWS-managed key"
        return
    if resource.type != EBS_VOLUME:
        return
    if resource.props.get("encrypted") is not True:
        yield f"{resource.name} is not encrypted"
    elif not customer_key(resource.props.get("kmsKeyId")):
        yield f"{resource.name} is encrypted with the AWS-managed key, not a customer key"


RULE = Rule(
    name="aws-ebs-volume-require-customer-key",
    description="EBS volumes are encrypted with a customer managed KMS key.",
    severity="high",
    remediation="Set encrypted: true and kms_key_id to the stack's key ARN.",
    topics=("security", "storage"),
    check_resource=check,
    resource_types=frozenset({EBS_VOLUME, K8S_STORAGE_CLASS}),
    standards=("EKS BPG: Data encryption - encryption at rest with customer managed keys",),
)
