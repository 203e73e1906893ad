"""The monthly price of one EBS volume, from the price catalog's per-unit EBS prices. Pure.

One formula for the checkpoint sizing, the cost estimate and the EBS policies: gp3 bills IOPS and
throughput above its included 3,000 / 125 MiB/s; io2 bills IOPS in three tiers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from components.pricing.prices import UnitPrice

EBS_VOLUME_TYPES = ("gp3", "io2", "io1", "gp2")
IO2_IOPS_TIERS = (
    (32_000, "ebs_io2_iops_month_to_32000"),
    (64_000, "ebs_io2_iops_month_to_64000"),
    (math.inf, "ebs_io2_iops_month_above_64000"),
)


def ebs_monthly(
    volume_type: str, size_gib: float, iops: float | None, throughput: float | None, prices: Mapping[str, UnitPrice]
) -> float:
    def unit(name: str) -> float:
        return prices[name].usd

    if volume_type == "gp3":
        return (
            size_gib * unit("ebs_gp3_gb_month")
            + max(0, (iops or 3000) - 3000) * unit("ebs_gp3_iops_month_above_3000")
            + max(0, (throughput or 125) - 125) * unit("ebs_gp3_mibps_month_above_125")
        )
    if volume_type == "io2":
        cost = size_gib * unit("ebs_io2_gb_month")
        below: float = 0
        for ceiling, key in IO2_IOPS_TIERS:
            cost += max(0, min(iops or 0, ceiling) - below) * unit(key)
            below = ceiling
        return cost
    if volume_type == "io1":
        return size_gib * unit("ebs_io1_gb_month") + (iops or 0) * unit("ebs_io1_iops_month")
    if volume_type == "gp2":
        return size_gib * unit("ebs_gp2_gb_month")
    raise ValueError(f"no price for EBS volume type {volume_type}; priced: {', '.join(EBS_VOLUME_TYPES)}")
