"""Every volume a node boots with is encrypted with the stack's key: a launch template names each block
device with `encrypted` on and a KMS key, and names the root device (left out, the AMI's unencrypted
snapshot decides; the root is /dev/xvda on every AMI family the stack runs); an instance's root and EBS
devices the same. An AWS-managed key (`alias/aws/ebs`) is not the stack's."""

from components.compute.node_bootstrap import AMI_FAMILY_TRAITS
from components.plan.resources import EC2_INSTANCE, LAUNCH_TEMPLATE
from policies.framework import Rule
from policies.readers.pods import on
from policies.rules._helpers import block_devices, customer_key

# The device each AMI family boots from (its first mapped device): a template that leaves it out boots
# from the AMI's own snapshot.
ROOT_DEVICES = frozenset(traits.block_devices[0] for traits in AMI_FAMILY_TRAITS.values())


def check(resource, config):
    if resource.type not in (LAUNCH_TEMPLATE, EC2_INSTANCE):
        return
    devices = block_devices(resource)
    if resource.type == LAUNCH_TEMPLATE and not devices:
        yield f"{resource.name}: names no block device, so the root volume is the AMI's (unencrypted, no key)"
    elif resource.type == LAUNCH_TEMPLATE and not ROOT_DEVICES & {name for name, _ in devices}:
        yield (
            f"{resource.name}: names no root device ({', '.join(sorted(ROOT_DEVICES))}), so the root volume is "
            "the AMI's (unencrypted, no key)"
        )
    for name, ebs in devices:
        if not on(ebs.get("encrypted")):
            yield f"{resource.name}: volume {name} is not encrypted"
        elif not customer_key(ebs.get("kmsKeyId")):
            yield f"{resource.name}: volume {name} is encrypted with the AWS-managed key, not the stack's"


RULE = Rule(
    name="aws-ec2-launch-template-require-encrypted-volumes",
    description="Launch templates and instances encrypt every EBS device, the root included, with a customer "
    "managed key.",
    severity="high",
    remediation='Name the root device in blockDeviceMappings with ebs.encrypted "true" and the stack\'s kmsKeyId.',
    topics=("security", "encryption"),
    check_resource=check,
    resource_types=frozenset({LAUNCH_TEMPLATE, EC2_INSTANCE}),
    standards=("EKS BPG: Data encryption - encryption at rest with customer managed keys",),
)
