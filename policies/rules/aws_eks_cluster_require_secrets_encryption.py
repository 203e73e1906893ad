"""Kubernetes Secrets are envelope-encrypted with a customer managed KMS key, so etcd backups and the API's
storage never hold them under AWS's key alone."""

from components.plan.resources import EKS_CLUSTER
from policies.framework import Rule
from policies.rules._helpers import customer_key, secrets_encryption


def check(resource, config):
    if resource.type != EKS_CLUSTER:
        return
    covered, key = secrets_encryption(resource)
    if "secrets" not in covered or not key:
        yield f"{resource.name}: Kubernetes secrets are not encrypted with a KMS key"
    elif not customer_key(key):
        yield f"{resource.name}: Kubernetes secrets are encrypted with an AWS-managed key ({key}), not the stack's"


RULE = Rule(
    name="aws-eks-cluster-require-secrets-encryption",
    description="EKS clusters encrypt Kubernetes secrets with a customer managed KMS key.",
    severity="high",
    remediation="Set encryption_config resources=['secrets'] with provider.key_arn of the stack key.",
    topics=("security", "encryption"),
    check_resource=check,
    resource_types=frozenset({EKS_CLUSTER}),
    standards=("CIS EKS 5.3.1",),
)
