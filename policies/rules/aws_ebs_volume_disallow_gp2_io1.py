"""No gp2 (gp3 is 20 % cheaper with a 3,000 IOPS floor) and no io1 (io2 costs the same, lasts longer): not on
volumes, node root volumes, EBS StorageClasses, nor VolumeAttributesClasses the EBS CSI driver would modify a
claim's volume to."""

from components.cost.estimate import catalog_for
from components.plan.resources import EBS_VOLUME, K8S_STORAGE_CLASS, K8S_VOLUME_ATTRIBUTES_CLASSES, LAUNCH_TEMPLATE
from components.pricing.ebs import ebs_monthly
from components.storage.ebs_csi import class_parameters, given, modified_parameters, volume_types
from policies.framework import Rule
from policies.rules._helpers import number


def _volumes(resource):
    if resource.type == EBS_VOLUME:
        yield resource.props.get("type") or "gp2", number(resource.props.get("size")), resource.props.get("iops")
    elif resource.type == LAUNCH_TEMPLATE:
        for mapping in resource.props.get("blockDeviceMappings") or []:
            ebs = mapping.get("ebs") or {}
            if ebs:
                yield ebs.get("volumeType") or "gp2", number(ebs.get("volumeSize")), ebs.get("iops")
    elif (parameters := class_parameters(resource)) is not None:
        for volume_type in volume_types(parameters):
            yield volume_type, None, None
    elif (parameters := modified_parameters(resource)) is not None:  # no type: the volume keeps its own
        for volume_type in (str(value).lower() for value in given(parameters, "type")):
            yield volume_type, None, None


def check(resource, config):
    prices = catalog_for(config["region"]).services
    for volume_type, size, _iops in _volumes(resource):
        if volume_type == "gp2":
            saving = (
                ": gp3 saves "
                f"${ebs_monthly('gp2', size, None, None, prices) - ebs_monthly('gp3', size, None, None, prices):,.2f}"
                "/month"
                if size
                else ""
            )
            yield f"{resource.name} uses gp2{saving}"
        elif volume_type == "io1":
            yield f"{resource.name} uses io1: io2 has the same price and 100x the durability"


RULE = Rule(
    name="aws-ebs-volume-disallow-gp2-io1",
    description="EBS volumes, node root volumes and EBS StorageClasses use gp3 or io2, never gp2 or io1.",
    severity="medium",
    remediation="Set the volume type to gp3 (or io2 for IOPS-heavy, latency-sensitive volumes).",
    topics=("cost", "storage"),
    config={"region": {"type": "string", "default": "us-east-1"}},
    check_resource=check,
    resource_types=frozenset({EBS_VOLUME, LAUNCH_TEMPLATE, K8S_STORAGE_CLASS, *K8S_VOLUME_ATTRIBUTES_CLASSES}),
)
