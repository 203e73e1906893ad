"""io2 within gp3's limits costs more than it needs to, unless the volume needs io2's latency."""

from components.cost.estimate import catalog_for
from components.plan.resources import EBS_VOLUME, tags_of
from components.pricing.ebs import ebs_monthly
from components.storage.checkpoint_sizing import GP3, IO2_REASON_TAG
from policies.framework import Rule
from policies.rules._helpers import number


def check(resource, config):
    if resource.type != EBS_VOLUME or resource.props.get("type") != "io2":
        return
    if (tags_of(resource) or {}).get(IO2_REASON_TAG):
        return
    size, iops = number(resource.props.get("size")), number(resource.props.get("iops"))
    if size is None or iops is None or iops > GP3["max_iops"]:
        return
    prices = catalog_for(config["region"]).services
    io2 = ebs_monthly("io2", size, iops, None, prices)
    gp3_size = max(size, iops / GP3["iops_per_gib"])
    gp3 = ebs_monthly(
        "gp3", gp3_size, max(GP3["base_iops"], iops), min(GP3["max_mibps"], iops * GP3["mibps_per_iops"]), prices
    )
    if gp3 < io2:
        yield (
            f"{resource.name} is io2 with {iops:,.0f} IOPS, within gp3's limits: gp3 saves ${io2 - gp3:,.2f}/month "
            f"(tag {IO2_REASON_TAG} if it needs io2's sub-millisecond latency)"
        )


RULE = Rule(
    name="aws-ebs-volume-flag-overprovisioned-io2",
    description="io2 volumes whose IOPS gp3 could carry are flagged with the monthly saving.",
    severity="low",
    remediation="Use gp3 with the same IOPS, or tag the volume with the reason io2 is needed.",
    topics=("cost", "storage"),
    config={"region": {"type": "string", "default": "us-east-1"}},
    check_resource=check,
    resource_types=frozenset({EBS_VOLUME}),
)
