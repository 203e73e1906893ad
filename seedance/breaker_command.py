"""`seedance breaker --stack dev|staging [--apply]`: the source's 95 % budget step, now.

Every GPU Auto Scaling group of the stack's cluster goes spot only (on-demand base 0, 0 % on-demand
above it). Without `--apply` it only says what it would change. It prints an incident record (the
groups, their previous distribution, owners from the `team` tag) for the budget owner. Make it
durable with `seedance-gpu:capacity.budget_breaker: true` in the stack file, or `pulumi up` puts
the reviewed plans back.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from typing import Any, Callable

from components.pricing.live import boto3_clients
from components.capacity.plan import BREAKER_TAG
from components.compute.labels import WORKLOAD_CLASS_LABEL

CLASS_TAG = f"k8s.io/cluster-autoscaler/node-template/label/{WORKLOAD_CLASS_LABEL}"

# Tests replace this to answer with recorded API responses.
clients: Callable[[str, str], Any] = boto3_clients


class BreakerRefused(Exception):
    """The breaker does not run on this stack (exit code 2)."""


def gpu_groups(autoscaling: Any, cluster_name: str) -> list[dict]:
    """The cluster's seedance GPU groups (tagged with a workload class), every page."""
    pages = autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
        Filters=[{"Name": "tag-key", "Values": [f"kubernetes.io/cluster/{cluster_name}"]}])
    return [g for page in pages for g in page["AutoScalingGroups"]
            if any(t["Key"] == CLASS_TAG for t in g.get("Tags", []))]


def incident_record(stack: str, groups: list[dict], applied: bool, now: datetime) -> dict:
    record = {"event": "budget-breaker-95-percent", "stack": stack, "at": now.isoformat(), "applied": applied,
              "groups": []}
    for group in groups:
        tags = {t["Key"]: t["Value"] for t in group.get("Tags", [])}
        distribution = group.get("MixedInstancesPolicy", {}).get("InstancesDistribution", {})
        record["groups"].append({
            "name": group["AutoScalingGroupName"], "arn": group.get("AutoScalingGroupARN"),
            "workload_class": tags.get(CLASS_TAG), "owner": tags.get("team"),
            "before": {"on_demand_base_capacity": distribution.get("OnDemandBaseCapacity"),
                       "on_demand_percentage_above_base": distribution.get("OnDemandPercentageAboveBaseCapacity")},
            "after": {"on_demand_base_capacity": 0, "on_demand_percentage_above_base": 0},
        })
    return record


def spot_only_policy(described: dict) -> dict:
    """The group's whole mixed instances policy with a zero on-demand base and percentage. Describe
    returns the template by id and by name; an update may name it only one way."""
    policy = {"InstancesDistribution": {**described.get("InstancesDistribution", {}), "OnDemandBaseCapacity": 0,
                                        "OnDemandPercentageAboveBaseCapacity": 0}}
    if "LaunchTemplate" in described:
        template = dict(described["LaunchTemplate"])
        spec = dict(template.get("LaunchTemplateSpecification", {}))
        if "LaunchTemplateId" in spec:
            spec.pop("LaunchTemplateName", None)
        policy["LaunchTemplate"] = {**template, "LaunchTemplateSpecification": spec}
    return policy


def trip(autoscaling: Any, groups: list[dict]) -> None:
    for group in groups:
        autoscaling.update_auto_scaling_group(AutoScalingGroupName=group["AutoScalingGroupName"],
                                              MixedInstancesPolicy=spot_only_policy(group.get("MixedInstancesPolicy", {})))
        autoscaling.create_or_update_tags(Tags=[{
            "ResourceId": group["AutoScalingGroupName"], "ResourceType": "auto-scaling-group", "Key": BREAKER_TAG,
            "Value": "on", "PropagateAtLaunch": False}])


def run(args: argparse.Namespace, stack_config: Callable[[argparse.Namespace], Any]) -> int:
    config = stack_config(args)
    if config.env == "prod":
        raise BreakerRefused("the budget breaker runs in dev and staging only; prod keeps its class caps")
    autoscaling = clients("autoscaling", config.region)
    groups = gpu_groups(autoscaling, config.cluster_name)
    if args.apply:
        trip(autoscaling, groups)
    record = incident_record(args.stack, groups, args.apply, datetime.now(timezone.utc))
    print(json.dumps(record, indent=2))
    if not args.apply:
        print(f"\n{len(groups)} GPU group(s) would go spot only; run again with --apply")
    return 0
