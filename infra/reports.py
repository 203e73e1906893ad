"""The operational reports a stack exports beside its contract: capacity decisions and egress cost."""

from __future__ import annotations

from typing import Any

import pulumi

from components.network.egress import egress_report, report_lines
from components.pricing.prices import PriceSourceError, SnapshotPriceSource
from components.stack.capacity import ProgramCapacity
from components.stack.config import StackConfig


def capacity_report(capacity: ProgramCapacity, asg_names: dict[str, pulumi.Output[str]]) -> dict[str, Any]:
    return {
        "origin": capacity.origin,
        "groups": {
            group: {
                "asg_name": asg_names[group],
                "instance_types": list(plan.instance_types),
                "spot_types": list(plan.spot_types),
                "on_demand_base_gpus": plan.on_demand_base_gpus,
                "on_demand_percentage_above_base": plan.on_demand_percentage_above_base,
                "max_spot_share": round(plan.max_spot_share, 4),
                "expected_usd_per_hour": plan.expected_usd_per_hour,
                "all_on_demand_usd_per_hour": plan.all_on_demand_usd_per_hour,
                "explanation": list(plan.explanation),
            }
            for group, plan in capacity.plans.items()
        },
    }


def egress(config: StackConfig) -> dict[str, Any]:
    try:
        report = egress_report(config.egress_traffic, config.endpoint_layout(),
                               SnapshotPriceSource().service_prices(config.region))
    except PriceSourceError as error:
        return {"report": [f"  no egress estimate: {error}"]}
    return {"monthly_via_nat_usd": round(report.via_nat_usd, 2),
            "monthly_with_endpoints_usd": round(report.with_endpoints_usd, 2),
            "monthly_saving_usd": round(report.saving_usd, 2), "report": report_lines(report)}


def account_steps(config: StackConfig, stack: str) -> list[str]:
    """What AWS requires outside `pulumi up`, with the command or place to do it."""
    cluster = config.cluster
    reach = (f"public endpoint from {', '.join(cluster.public_endpoint_cidrs)}" if cluster.public_endpoint_cidrs
             else f"private endpoint from {', '.join(cluster.deployer_cidrs)} (routed to the VPC by your network)")
    return [
        f"run `pulumi up` where the cluster API is reachable: {reach}",
        f"a day after the first `pulumi up`, activate the cost-allocation tag {config.budget.filter_tag!r} in the "
        f"organization's management account (`seedance budget-tag --stack {stack} --activate`); the budget "
        "counts nothing until then",
    ]
