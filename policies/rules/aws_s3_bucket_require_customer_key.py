"""Every bucket the stack creates encrypts new objects with a customer managed KMS key (the stack key): its
server-side encryption configuration (the resource, or the bucket's own inline block) says `aws:kms` (or
`aws:kms:dsse`) with a key that is not an AWS-managed alias. SSE-S3 (`AES256`) leaves the data under AWS's
key, out of the stack key's policy and its CloudTrail record. An object the plan writes may name its own
encryption, which overrides the bucket's default: it is held to the same."""

from components.plan.resources import (
    S3_BUCKETS as BUCKETS,
)
from components.plan.resources import (
    S3_ENCRYPTION_CONFIGURATIONS,
)
from components.plan.resources import (
    S3_KMS_ALGORITHMS as KMS_ALGORITHMS,
)
from components.plan.resources import (
    S3_OBJECTS as OBJECTS,
)
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.rules._helpers import bucket_encryption_rules, bucket_name, customer_key, encryption_defaults


def _customer_key(rules) -> bool:
    defaults = encryption_defaults(rules)
    return bool(defaults) and all(
        d.get("sseAlgorithm") in KMS_ALGORITHMS and customer_key(d.get("kmsMasterKeyId")) for d in defaults
    )


def check(resources, config):
    verdicts: dict[str, list[tuple[str, bool]]] = {}  # bucket -> (resource, customer key?) of what sets it
    for resource in of_types(resources, *S3_ENCRYPTION_CONFIGURATIONS, *BUCKETS):
        rules = bucket_encryption_rules(resource)
        if rules is not None:
            verdicts.setdefault(bucket_name(resource), []).append((resource.name, _customer_key(rules)))
    for resource in of_types(resources, *BUCKETS):
        found = verdicts.get(bucket_name(resource), [])
        weak = [name for name, ok in found if not ok]
        if not found or weak:
            said = f"{weak[0]} sets SSE-S3 or an AWS-managed key" if weak else "no encryption configuration"
            yield resource.urn, f"{resource.name}: new objects are not encrypted with a customer managed key ({said})"
    for resource in of_types(resources, *OBJECTS):  # a PUT's own encryption header overrides the bucket's default
        algorithm = resource.props.get("serverSideEncryption")
        if algorithm is not None and not (algorithm in KMS_ALGORITHMS and customer_key(resource.props.get("kmsKeyId"))):
            yield (
                resource.urn,
                f"{resource.name}: the object is written under {algorithm}"
                + (" with an AWS-managed key" if algorithm in KMS_ALGORITHMS else "")
                + ", not a customer managed key",
            )


RULE = Rule(
    name="aws-s3-bucket-require-customer-key",
    description="Buckets encrypt new objects with a customer managed KMS key (aws:kms and the stack key).",
    severity="high",
    remediation="Add aws.s3.BucketServerSideEncryptionConfiguration with sse_algorithm aws:kms and the stack key.",
    topics=("security", "storage"),
    check_stack=check,
    standards=("EKS BPG: Data encryption - encryption at rest with customer managed keys",),
)
