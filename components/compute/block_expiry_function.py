"""A Capacity Block's expiration warning, handled as a termination notice, as AWS Lambda runs it.

EC2 sends the warning 40 minutes before a block ends and starts terminating what still runs in it 10
minutes later (EC2 user guide, "Monitor Capacity Blocks using EventBridge"). The block's group is
scheduled to drain well before that (components/compute/capacity_block.py); this is the backstop for a
group still holding nodes when the warning comes (its drain action deleted or edited by hand, a block's
end moved): the group goes to zero at once, so each node leaves through the group's termination lifecycle
hook, drained by the termination handler, instead of being cut off when EC2 reclaims it.

Standard library only at import, so the function's archive is this file and components/compute/labels.py
(components/compute/lambda_function.py); boto3 comes with the Lambda runtime and is imported by `handler`
alone.
"""

from __future__ import annotations

import os
from typing import Any

from components.compute.labels import CAPACITY_BLOCK_TAG

# The event's detail type: AWS's English user guide spells it "Capacity Block Expiration Warning", its
# China-region copy and earlier versions "Capacity Block Reservation Expiration Warning"; the rule takes both.
WARNING_DETAIL_TYPES = ("Capacity Block Expiration Warning", "Capacity Block Reservation Expiration Warning")


def warning_pattern(reservation_ids: list[str]) -> dict:
    """The EventBridge pattern of the warnings for these blocks only."""
    return {
        "source": ["aws.ec2"],
        "detail-type": list(WARNING_DETAIL_TYPES),
        "detail": {"capacity-reservation-id": sorted(reservation_ids)},
    }


def block_groups(autoscaling: Any, cluster_name: str, reservation_id: str) -> list[dict]:
    """This cluster's groups that run the block (tagged with its reservation id), every page."""
    pages = autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
        Filters=[
            {"Name": f"tag:{CAPACITY_BLOCK_TAG}", "Values": [reservation_id]},
            {"Name": f"tag:kubernetes.io/cluster/{cluster_name}", "Values": ["owned"]},
        ]
    )
    return [group for page in pages for group in page["AutoScalingGroups"]]


def drain(event: dict, autoscaling: Any, cluster_name: str) -> dict:
    """Every group of the warned block to zero (its minimum too, which the start action raised); a group
    already at zero is left as it is, so a repeated warning changes nothing."""
    reservation_id = (event.get("detail") or {}).get("capacity-reservation-id")
    if not isinstance(reservation_id, str) or not reservation_id.startswith("cr-"):
        return {"reservation": None, "drained": [], "already_empty": []}
    drained, already_empty = [], []
    for group in block_groups(autoscaling, cluster_name, reservation_id):
        name = group["AutoScalingGroupName"]
        if group["MinSize"] == 0 and group["DesiredCapacity"] == 0:
            already_empty.append(name)
            continue
        autoscaling.update_auto_scaling_group(AutoScalingGroupName=name, MinSize=0, DesiredCapacity=0)
        drained.append(name)
    return {"reservation": reservation_id, "drained": drained, "already_empty": already_empty}


def handler(event: dict, context: Any = None) -> dict:
    """The Lambda entry point (`block_expiry_function.handler`)."""
    import boto3  # the Lambda runtime's

    outcome = drain(event, boto3.client("autoscaling"), os.environ["CLUSTER_NAME"])
    print(outcome)  # the function's log: which groups the warning drained
    return outcome
