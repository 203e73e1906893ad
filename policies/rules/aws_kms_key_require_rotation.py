"""Customer managed keys rotate yearly: a key that never rotates keeps one key material for every secret,
volume and log it ever protected."""

from components.plan.resources import KMS_KEY
from policies.framework import Rule


def check(resource, config):
    if resource.type == KMS_KEY and resource.props.get("enableKeyRotation") is not True:
        yield f"{resource.name}: automatic key rotation is off"


RULE = Rule(
    name="aws-kms-key-require-rotation",
    description="KMS keys rotate their key material automatically.",
    severity="high",
    remediation="Set enable_key_rotation=True on the key.",
    topics=("security", "encryption"),
    check_resource=check,
    resource_types=frozenset({KMS_KEY}),
    standards=("EKS BPG: Data encryption - rotate your CMKs periodically",),
)
