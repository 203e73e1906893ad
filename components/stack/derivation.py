"""Everything a validated stack config implies, derived once before any resource is declared: the
capacity plans, the checkpoint volume, the serving capacity of each online group, the endpoint layout
and its egress cost. The program declares resources from it and exports its reports; `seedance plan`
derives the same to render them. The clock is passed in: nothing here reads the time itself.

A derived value that does not fit (a checkpoint profile no volume meets, more Triton pods than a group
holds) is a config error naming the key, raised here, before the program declares anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from components.capacity.plan import CapacityPlan
from components.catalog.instance_types import gpu_instance_type
from components.common.validation import FieldError
from components.compute.capacity_block import BlockSchedule, block_schedule
from components.compute.node_images import NodeImageError, images_path, pinned_images, read_node_images
from components.monitoring.opencost import ClusterRates, cluster_rates
from components.monitoring.sizing import SeriesEstimate, series_estimate
from components.network.egress import EgressReport, EndpointLayout, egress_report, report_lines
from components.pricing.prices import PriceSourceError, SnapshotPriceSource
from components.serving.capacity import GroupCapacity, ServingDemand, group_capacity, table_lines
from components.stack.capacity import ProgramCapacity, RunMode, program_capacity
from components.stack.config import StackConfig, field_error
from components.storage.checkpoint_sizing import SizingDecision, size_checkpoint_volume
from components.tenancy.queues import flavors, queue_ceilings, queue_manifests, served_gpus


@dataclass(frozen=True)
class StackDerivation:
    zones: tuple[str, ...]
    capacity: ProgramCapacity
    checkpoint: SizingDecision | None
    serving: tuple[GroupCapacity, ...]
    endpoints: EndpointLayout
    egress: EgressReport | None
    egress_problem: str | None  # why there is no egress report (no prices for the region)
    node_images: dict[str, str]  # group -> pinned AMI id
    unpinned_images: tuple[str, ...]  # "<family>/<arch>" the stack's images file does not pin
    series: SeriesEstimate  # what Prometheus holds at the maxima
    blocks: dict[str, BlockSchedule]  # Capacity Block reservation id -> what this run declares for it
    queues: tuple[dict[str, Any], ...]  # Kueue's flavors and the teams' queues (components/tenancy/queues.py)
    namespace_gpus: dict[str, dict[str, int]]  # team -> class -> each of its namespaces' GPU quota

    @property
    def sized_checkpoint(self) -> SizingDecision:
        """The checkpoint volume of a stack with `storage.checkpoints` (sized whenever it has them)."""
        assert self.checkpoint is not None
        return self.checkpoint

    @property
    def cost_rates(self) -> ClusterRates:
        """OpenCost's rates, from the plans the program deploys."""
        return cluster_rates(self.capacity.plans)

    @property
    def nat_gb_per_gateway(self) -> float:
        """The data each NAT gateway is expected to process a month (the egress model, spread evenly)."""
        return self.egress.nat_gb / self.endpoints.nat_gateways if self.egress else 0.0


def derive(
    config: StackConfig, stack: str, zones: Sequence[str], stacks_dir: Path, now: datetime, mode: RunMode = RunMode()
) -> StackDerivation:
    serving = serving_capacity(config)
    _check_serving_fits(config, serving)
    checkpoint = checkpoint_decision(config)
    layout = config.endpoint_layout()
    try:
        egress, problem = (
            egress_report(config.egress_traffic, layout, SnapshotPriceSource().service_prices(config.region)),
            None,
        )
    except PriceSourceError as error:
        egress, problem = None, str(error)
    capacity = program_capacity(config, stack, zones, stacks_dir, now, mode)
    images, unpinned = node_images(config, stack, stacks_dir, mode)
    return StackDerivation(
        tuple(zones),
        capacity,
        checkpoint,
        tuple(serving),
        layout,
        egress,
        problem,
        images,
        tuple(unpinned),
        monitoring_series(config),
        block_schedules(config, zones, now),
        *gpu_queues(config, capacity.plans),
    )


def gpu_queues(
    config: StackConfig, plans: Mapping[str, CapacityPlan]
) -> tuple[tuple[dict[str, Any], ...], dict[str, dict[str, int]]]:
    """Kueue's objects: each pool's flavors from its plan, less what the serving sets on it may hold at their
    most replicas (canaries included), and the teams' queues over them; and each team's per-namespace GPU
    quota per class: with queues on, what Kueue may admit for the team (a namespace's quota must not stop
    what the cohort lends), else its `gpus`."""
    groups = [(g.name, g.workload_class, g.gpus_per_instance) for g in config.gpu_node_groups]
    offered = flavors(groups, plans, served_gpus(config.serving), config.gang_pools, config.gang_topologies)
    pools_of = {t.name: config.tenant_pools(t) for t in config.tenants}
    try:
        manifests = queue_manifests(config.tenants, pools_of, offered)
        ceilings = queue_ceilings(config.tenants, pools_of, offered)
    except FieldError as error:
        raise field_error(error) from None
    namespace_gpus = {
        t.name: {k: ceilings.get((t.name, k), n) if config.queues.enabled else n for k, n in t.gpus.items()}
        for t in config.tenants
    }
    return tuple(manifests), namespace_gpus


def block_schedules(config: StackConfig, zones: Sequence[str], now: datetime) -> dict[str, BlockSchedule]:
    """Each Capacity Block's group as this run declares it; a block outside the zones its group launches in
    (the account's, in zone order) could launch nothing."""
    found = {}
    for group_index, group in enumerate(config.gpu_node_groups):
        launch = group.launch_zones(zones)
        for index, block in enumerate(group.capacity_blocks):
            if block.zone not in launch:
                raise field_error(
                    FieldError(
                        f"gpu_node_groups[{group_index}].capacity_blocks[{index}].zone",
                        block.zone,
                        f"group {group.name} launches in {', '.join(launch)}; allowed: one of "
                        "those (a block's instances run in its zone only)",
                    )
                )
            found[block.reservation_id] = block_schedule(block, now)
    return found


def monitoring_series(config: StackConfig) -> SeriesEstimate:
    """The series the stack's Prometheus holds with every group at its maximum."""
    return series_estimate(
        system_nodes=config.cluster.system_nodes.max_size,
        gpu_nodes=sum(g.max_gpus // g.gpus_per_instance for g in config.gpu_node_groups),
        gpus=sum(g.max_gpus for g in config.gpu_node_groups),
        triton_pods=sum(s.max_replicas + (s.canary.replicas if s.canary else 0) for s in config.serving),
        namespaces=len(config.serving) + sum(len(t.namespace_names) for t in config.tenants) + 12,
    )


def node_images(
    config: StackConfig, stack: str, stacks_dir: Path, mode: RunMode = RunMode()
) -> tuple[dict[str, str], list[str]]:
    """The pinned GPU node images; a real run refuses a group whose image is not pinned (an offline
    plan reads the recommended one and lists it, as it lists placeholders)."""
    try:
        images, unpinned = pinned_images(
            read_node_images(images_path(stacks_dir, stack)),
            stack,
            config.region,
            config.cluster.kubernetes_version,
            config.gpu_node_groups,
        )
    except NodeImageError as error:
        raise field_error(FieldError("gpu_node_groups", "(node images)", str(error))) from None
    if unpinned and mode.unpinned_images == "refuse":
        raise field_error(
            FieldError(
                "gpu_node_groups",
                "(node images)",
                f"no pinned image for {', '.join(unpinned)}: a GPU node image moves only when "
                f"the stack says so; run `seedance images pin --stack {stack}` and commit "
                f"{images_path(stacks_dir, stack).name}",
            )
        )
    return images, unpinned


def checkpoint_decision(config: StackConfig) -> SizingDecision | None:
    """The sized checkpoint volume (None without `storage.checkpoints`)."""
    checkpoints = config.storage.checkpoints
    if checkpoints is None:
        return None
    group = next(g for g in config.gpu_node_groups if g.name == checkpoints.node_group)
    try:
        prices = SnapshotPriceSource().service_prices(config.region)
        return size_checkpoint_volume(checkpoints.profile, prices, [gpu_instance_type(t) for t in group.instance_types])
    except FieldError as error:
        raise field_error(
            FieldError(f"storage.checkpoints.profile.{error.field}", error.value, error.allowed)
        ) from None
    except PriceSourceError as error:
        raise field_error(
            FieldError("storage.checkpoints", "(set)", f"cannot size volumes in {config.region}: {error}")
        ) from None


def serving_capacity(config: StackConfig) -> list[GroupCapacity]:
    """Per online group: the pods its model sets may need against the pods it can run at its maximum."""
    groups = {g.name: g for g in config.gpu_node_groups}
    capacities = []
    for name in dict.fromkeys(s.node_group for s in config.serving):
        group = groups[name]
        demands = [
            ServingDemand(
                name=s.name,
                gpus=s.gpus,
                cpu=s.cpu,
                memory_gib=s.memory,
                hpa_min=config.warm_pool(s),
                hpa_max=s.max_replicas,
                canary=s.canary.replicas if s.canary else 0,
            )
            for s in config.serving
            if s.node_group == name
        ]
        capacities.append(
            group_capacity(
                name,
                group.instance_types,
                group.gpus_per_instance,
                group.gpu_sharing.gpu_multiplier,
                group.max_gpus,
                demands,
            )
        )
    return capacities


def _check_serving_fits(config: StackConfig, capacities: Sequence[GroupCapacity]) -> None:
    for capacity in capacities:
        if not capacity.fits:
            index = next(i for i, s in enumerate(config.serving) if s.node_group == capacity.group)
            group = next(i for i, g in enumerate(config.gpu_node_groups) if g.name == capacity.group)
            raise field_error(
                FieldError(
                    f"serving[{index}].max_replicas",
                    config.serving[index].max_replicas,
                    f"group {capacity.group} holds {capacity.schedulable} Triton pods at its maximum "
                    f"({capacity.max_nodes} nodes x {capacity.pods_per_node}, limited by {capacity.limited_by}) but "
                    f"may be asked for {capacity.needed} (HPA maxima + surge + canary); allowed: fewer replicas, or a "
                    f"larger gpu_node_groups[{group}].max_gpus",
                )
            )


def stack_reports(
    config: StackConfig, stack: str, derived: StackDerivation, asg_names: Mapping[str, Any]
) -> dict[str, Any]:
    """The `reports` stack output (contract 1.0's shape), from the derivation alone: the same inputs
    give the same reports on any day (prices carry when they were observed, never their age)."""
    return {
        "capacity": capacity_report(derived.capacity, asg_names),
        "egress": egress_summary(derived),
        "checkpoint_sizing": derived.checkpoint.lines() if derived.checkpoint else [],
        "account_steps": account_steps(config, stack),
        "serving_capacity": table_lines(list(derived.serving)) if derived.serving else [],
    }


def capacity_report(capacity: ProgramCapacity, asg_names: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "origin": capacity.origin,
        "groups": {
            group: {
                "asg_name": asg_names.get(group),
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


def egress_summary(derived: StackDerivation) -> dict[str, Any]:
    report = derived.egress
    if report is None:
        return {"report": [f"  no egress estimate: {derived.egress_problem}"]}
    return {
        "monthly_via_nat_usd": round(report.via_nat_usd, 2),
        "monthly_with_endpoints_usd": round(report.with_endpoints_usd, 2),
        "monthly_saving_usd": round(report.saving_usd, 2),
        "report": report_lines(report),
    }


def account_steps(config: StackConfig, stack: str) -> list[str]:
    """What AWS requires outside `pulumi up`, with the command or place to do it."""
    cluster = config.cluster
    reach = (
        f"public endpoint from {', '.join(cluster.public_endpoint_cidrs)}"
        if cluster.public_endpoint_cidrs
        else f"private endpoint from {', '.join(cluster.deployer_cidrs)} (routed to the VPC by your network)"
    )
    return [
        f"run `pulumi up` where the cluster API is reachable: {reach}",
        f"a day after the first `pulumi up`, activate the cost-allocation tag {config.budget.filter_tag!r} in the "
        f"organization's management account (`seedance budget-tag --stack {stack} --activate`); the budget "
        "counts nothing until then",
    ]
