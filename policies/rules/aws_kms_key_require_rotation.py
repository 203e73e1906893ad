"""Customer managed keys rotate yearly: a key that never rotates keeps one key material for every secret,
volume and log it ever protected. A key of imported material cannot rotate automatically (KMS API reference,
EnableKeyRotation: not for keys with imported key material), so the stack makes its keys in KMS. A replica of a
multi-Region key rotates with its primary."""

from components.plan.resources import KMS_EXTERNAL_KEYS, KMS_KEY
from policies.framework import Rule


def check(resource, config):
    if resource.type in KMS_EXTERNAL_KEYS:
        yield f"{resource.name}: a key of imported material cannot rotate automatically"
    elif resource.type == KMS_KEY and resource.props.get("enableKeyRotation") is not True:
        yield f"{resource.name}: automatic key rotation is off"


RULE = Rule(
    name="aws-kms-key-require-rotation",
    description="KMS keys rotate their key material automatically.",
    severity="high",
    remediation="Set enable_key_rotation=True on the key; make keys in KMS (aws.kms.Key), not of imported material.",
    topics=("security", "encryption"),
    check_resource=check,
    resource_types=frozenset({KMS_KEY, *KMS_EXTERNAL_KEYS}),
    standards=("EKS BPG: Data encryption - rotate your CMKs periodically",),
)
