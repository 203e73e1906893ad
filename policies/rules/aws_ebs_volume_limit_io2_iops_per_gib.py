"""io2 allows at most 1,000 IOPS per GiB: a larger ratio fails at creation."""

from components.plan.resources import EBS_VOLUME
from policies.framework import Rule
from policies.rules._helpers import number


def check(resource, config):
    if resource.type != EBS_VOLUME or resource.props.get("type") != "io2":
        return
    size, iops = number(resource.props.get("size")), number(resource.props.get("iops"))
    if size and iops and iops > config["max_iops_per_gib"] * size:
        yield (
            f"{resource.name} asks {iops:,.0f} IOPS on {size:g} GiB: io2 allows {config['max_iops_per_gib']:,} per "
            f"GiB, so at least {iops / config['max_iops_per_gib']:,.0f} GiB"
        )


RULE = Rule(
    name="aws-ebs-volume-limit-io2-iops-per-gib",
    description="io2 volumes stay within 1,000 provisioned IOPS per GiB.",
    severity="high",
    remediation="Grow the volume or lower its IOPS.",
    topics=("storage",),
    config={"max_iops_per_gib": {"type": "integer", "default": 1000}},
    check_resource=check,
    resource_types=frozenset({EBS_VOLUME}),
)
