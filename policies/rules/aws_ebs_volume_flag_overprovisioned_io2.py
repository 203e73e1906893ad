"""io2 within gp3's limits costs more than it needs to, unless the volume needs io2's latency."""

from components.cost_estimate import catalog_for, ebs_monthly
from components.resource_types import EBS_VOLUME, tags_of
from policies.framework import Rule
from policies.rules._helpers import number

GP3_MAX_IOPS = 80_000
LATENCY_TAG = "seedance.io/io2-reason"  # set by CheckpointStorage when the sizing chose io2 for latency


def check(resource, config):
    if resource.type != EBS_VOLUME or resource.props.get("type") != "io2":
        return
    if (tags_of(resource) or {}).get(LATENCY_TAG):
        return
    size, iops = number(resource.props.get("size")), number(resource.props.get("iops"))
    if size is None or iops is None or iops > GP3_MAX_IOPS:
        return
    catalog = catalog_for(config["region"])
    io2 = ebs_monthly("io2", size, iops, None, catalog)
    gp3_size = max(size, iops / 500)
    gp3 = ebs_monthly("gp3", gp3_size, max(3000, iops), min(2000, iops * 0.25), catalog)
    if gp3 < io2:
        yield (f"{resource.name} is io2 with {iops:,.0f} IOPS, within gp3's limits: gp3 saves ${io2 - gp3:,.2f}/month "
               f"(tag {LATENCY_TAG} if it needs io2's sub-millisecond latency)")


RULE = Rule(
    name="aws-ebs-volume-flag-overprovisioned-io2",
    description="io2 volumes whose IOPS gp3 could carry are flagged with the monthly saving.",
    severity="low",
    remediation="Use gp3 with the same IOPS, or tag the volume with the reason io2 is needed.",
    topics=("cost", "storage"),
    config={"region": {"type": "string", "default": "us-east-1"}},
    check_resource=check,
)
