"""How a GPU group's nodes are replaced when the stack changes them, per workload class. Pure.

The provider starts an instance refresh whenever the group's launch template version or mixed
instances policy changes (terraform-provider-aws `resourceGroupUpdate`: `launch_template` and
`mixed_instances_policy` set `shouldRefreshInstances`), after UpdateAutoScalingGroup has saved the new
configuration, and cancels one still running first. With skip matching and no desired configuration,
Auto Scaling replaces only instances whose launch template version or instance type differs from the
configuration last saved on the group (Auto Scaling user guide, "Use an instance refresh with skip
matching"): a new spot share or an added type replaces nothing, a removed type only its nodes, a new
image or user data every node, at the class's pace below.

A change of the On-Demand base or percentage is also applied by the group itself, which gradually
replaces running instances to reach the new mix (UpdateAutoScalingGroup); instances protected from
scale in are not terminated by the group's own activities, while the cluster autoscaler's
TerminateInstanceInAutoScalingGroup and an instance refresh told to `Refresh` them still are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.capacity.workload_classes import WorkloadClass

# Rebalancing across zones would terminate a running node to launch one elsewhere; the cluster
# autoscaler chooses zones from what pods need.
SUSPENDED_PROCESSES = ("AZRebalance",)


@dataclass(frozen=True)
class RolloutPace:
    """Instance refresh preferences (StartInstanceRefresh RefreshPreferences)."""

    min_healthy_percentage: int
    max_healthy_percentage: int
    instance_warmup_seconds: int
    checkpoint_percentages: tuple[int, ...]  # the refresh pauses after each (the last is 100)
    checkpoint_delay_seconds: int


def rollout_pace(workload: WorkloadClass, workload_class: str) -> RolloutPace:
    """Batch keeps 90 % of its nodes and buys no extra ones: one node (or a tenth) at a time, drained
    through the termination hook so its jobs checkpoint, and the refresh waits at each checkpoint for
    one checkpoint interval (twice the work a lost node costs) so resumed jobs write a new checkpoint
    before the next wave drains. Online surges: new nodes join and warm up before old ones drain, so
    serving capacity never drops."""
    if workload_class == "online":
        return RolloutPace(
            min_healthy_percentage=100,
            max_healthy_percentage=150,
            instance_warmup_seconds=workload.warmup_seconds,
            checkpoint_percentages=(),
            checkpoint_delay_seconds=0,
        )
    interval = max(2 * workload.lost_work_seconds, workload.warmup_seconds)
    return RolloutPace(
        min_healthy_percentage=90,
        max_healthy_percentage=100,
        instance_warmup_seconds=workload.warmup_seconds,
        checkpoint_percentages=(10, 50, 100),
        checkpoint_delay_seconds=workload.warmup_seconds + interval,
    )


def refresh_preferences(pace: RolloutPace) -> dict[str, Any]:
    """The preferences as the provider's `instance_refresh.preferences` takes them (snake_case)."""
    return {
        "skip_matching": True,
        # Nodes are protected from the group's own scale-in; a refresh the stack asked for replaces them.
        "scale_in_protected_instances": "Refresh",
        "min_healthy_percentage": pace.min_healthy_percentage,
        "max_healthy_percentage": pace.max_healthy_percentage,
        "instance_warmup": str(pace.instance_warmup_seconds),
        **(
            {
                "checkpoint_percentages": list(pace.checkpoint_percentages),
                "checkpoint_delay": str(pace.checkpoint_delay_seconds),
            }
            if pace.checkpoint_percentages
            else {}
        ),
    }
