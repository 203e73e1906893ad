"""seedance-gpu: GPU training and inference on EKS. Run with `pulumi up` or `seedance plan`."""

from datetime import UTC, datetime
from pathlib import Path

import pulumi
import pulumi_aws as aws
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.settings import get_monitor

from components.cluster.autoscaler import ClusterAutoscaler
from components.cluster.cluster import Cluster
from components.cluster.config import rebalance_summary
from components.cluster.descheduler import Descheduler
from components.compute.block_expiry import CapacityBlockExpiry
from components.compute.config import GpuNodeGroupConfig, helm_device_plugin_sharing
from components.compute.device_plugin import EfaDevicePlugin
from components.compute.gpu_node_group import GpuNodeGroup
from components.compute.node_identity import PoolIdentity
from components.compute.spot_interruptions import SpotInterruptionHandling
from components.cost.breaker import BudgetBreaker
from components.cost.budget import BudgetAlerts
from components.encryption.stack_key import StackKey
from components.monitoring.config import METRICS_SCRAPER
from components.monitoring.dashboards import ServedSet
from components.monitoring.metrics_pipeline import CostMonitoring, MetricsPipeline
from components.network.endpoints import PrivateEndpoints
from components.network.vpc import Network
from components.pricing.live import LivePriceSource
from components.serving.model_repository import ModelRepository
from components.serving.publishing import operator_role_name, publisher_role_name
from components.serving.triton import TritonServing
from components.stack.capacity import RunMode
from components.stack.config import check_stack_env
from components.stack.contract import platform_contract
from components.stack.derivation import derive, stack_reports
from components.stack.placeholders import refuse_placeholders
from components.stack.program import config_errors_as_run_errors, load_from_pulumi
from components.storage.storage_classes import CheckpointStorage, LocalStorage, VolumeGuard
from components.tenancy.tenants import GpuQueues, TenantCostLabels, TenantGuards, TenantSpace

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"

# Validate everything first: a bad value stops the run before any resource is declared.
with config_errors_as_run_errors():
    config = load_from_pulumi()
    check_stack_env(config, pulumi.get_stack())
    # Availability zones only: an opted-in Local or Wavelength Zone takes neither EKS control-plane subnets nor NAT.
    available = aws.get_availability_zones(
        state="available", filters=[aws.GetAvailabilityZonesFilterArgs(name="zone-type", values=["availability-zone"])]
    )
    zones = config.usable_zones(dict(zip(available.names, available.zone_ids)))
    # Under Pulumi's mock runtime (`seedance plan`, tests) there is no cloud to ask: prices come from the snapshot.
    offline = isinstance(get_monitor(), MockMonitor)
    if not offline:
        refuse_placeholders(config)  # an offline plan lists them instead
    derived = derive(
        config,
        pulumi.get_stack(),
        zones,
        STACKS_DIR,
        datetime.now(UTC),
        RunMode.offline_plan() if offline else RunMode(live=LivePriceSource()),
    )
capacity = derived.capacity
tags = config.resource_tags
name = config.cluster_name

identity = aws.get_caller_identity()
# The role `pulumi up` runs as (a role session's issuer), which gets cluster-admin by an explicit entry.
deployer_arn = config.cluster.deployer_role_arn or aws.iam.get_session_context(arn=identity.arn).issuer_arn
partition = aws.get_partition().partition

model_bucket = config.model_bucket_name(identity.account_id)

key = StackKey(name, region=config.region, tags=tags)
# Each served prefix is written by its set's publisher role only (the role TritonServing creates).
publishers = {
    prefix: [
        f"arn:{partition}:iam::{identity.account_id}:role/{publisher_role_name(config.serving_component(serving))}"
    ]
    for serving in config.serving
    for prefix in serving.prefixes
}
# And each prefix's switch (its models' configs and histories) by its set's operator role, when teams publish it.
operators = {
    prefix: [f"arn:{partition}:iam::{identity.account_id}:role/{operator_role_name(config.serving_component(serving))}"]
    for serving in config.serving
    if config.operators_of(serving)
    for prefix in serving.prefixes
}
models = ModelRepository(
    f"{name}-models",
    bucket_name=model_bucket,
    kms_key_arn=key.key_arn,
    tags=tags,
    publishers=publishers,
    operators=operators,
    administrators=[deployer_arn, *config.cluster.break_glass_principal_arns],
)
network = Network(
    name,
    config.network,
    zones=zones,
    cluster_name=name,
    kms_key_arn=key.key_arn,
    tags=tags,
    nat_gb_month=derived.nat_gb_per_gateway,
    deployer_cidrs=config.cluster.deployer_cidrs,
)
endpoints = PrivateEndpoints(
    f"{name}-endpoints",
    config.endpoints_with_tenants,
    s3_interface=config.s3_interface,
    region=config.region,
    vpc_id=network.vpc_id,
    vpc_cidr=network.vpc_cidr,
    private_subnet_ids=network.private_subnet_ids,
    private_route_table_ids=network.private_route_table_ids,
    kms_key_arn=key.key_arn,
    tags=tags,
)
cluster = Cluster(
    name,
    config.cluster,
    cluster_name=name,
    region=config.region,
    subnet_ids=network.private_subnet_ids,
    kms_key_arn=key.key_arn,
    tags=tags,
    gpu_sharing=helm_device_plugin_sharing(config.gpu_node_groups),
    deploy_path=network.deploy_path,
    deployer_arn=deployer_arn,
    app_namespaces=config.app_namespaces,
)


def zone_ordered_subnets(group: GpuNodeGroupConfig) -> pulumi.Output[list[str]]:
    """Subnets in zone order: a single-zone group launches in the first, where checkpoint volumes live."""
    return network.private_subnet_ids.apply(lambda ids: ids[: len(group.launch_zones(zones))])


node_groups = {
    group.name: GpuNodeGroup(
        f"{name}-{group.name}",
        group,
        capacity.plans[group.name],
        cluster_name=name,
        kubernetes_version=config.cluster.kubernetes_version,
        join=cluster.join,
        subnet_ids=zone_ordered_subnets(group),
        node_security_group_id=cluster.node_security_group_id,
        kms_key_arn=key.key_arn,
        tags=tags,
        image_id=derived.node_images.get(group.name),
        zones=group.launch_zones(zones),
        blocks=derived.blocks,
        budget_breaker=config.capacity.budget_breaker,
    )
    for group in config.gpu_node_groups
}
if any(group.efa for group in config.gpu_node_groups):  # the EFA pools' adapters, schedulable
    EfaDevicePlugin(f"{name}-efa-device-plugin", opts=pulumi.ResourceOptions(provider=cluster.provider))
autoscaler = ClusterAutoscaler(
    f"{name}-autoscaler",
    config.cluster.autoscaler,
    cluster_name=name,
    region=config.region,
    kubernetes_version=config.cluster.kubernetes_version,
    oidc_provider_arn=cluster.oidc_provider_arn,
    oidc_issuer_url=cluster.oidc_issuer_url,
    provider=cluster.provider,
    tags=tags,
    provisioning_requests=bool(config.gang_pools),
)
checkpoint_claims = []
if config.storage.checkpoints is not None:
    checkpoints = CheckpointStorage(
        f"{name}-checkpoints",
        config.storage.checkpoints,
        derived.sized_checkpoint,
        kms_key_arn=key.key_arn,
        zone=zones[0],  # pre-provisioned volumes live in the first zone, where single-zone groups launch
        provider=cluster.provider,
        csi_driver=cluster.ebs_csi_addon,
        tags=tags,
    )
    checkpoint_claims = [
        {
            "name": claim,
            "namespace": config.storage.checkpoints.namespace,
            "zone": zones[0],
            "size_gib": derived.sized_checkpoint.chosen.size_gib,
            "node_group": config.storage.checkpoints.node_group,
        }
        for claim in checkpoints.claim_names
    ]
if config.local_storage_groups:
    LocalStorage(f"{name}-local-nvme", config.storage.local, zones=zones, provider=cluster.provider, tags=tags)
VolumeGuard(
    f"{name}-volume-guard",
    provider=cluster.provider,
    local_namespace=config.storage.local.namespace if config.local_storage_groups else None,
)
budget = BudgetAlerts(
    f"{name}-budget",
    monthly_usd=config.budget.monthly_usd,
    emails=config.budget.alert_emails,
    topic_arns=config.budget.alert_topic_arns,
    filter_tag=config.budget.filter_tag,
    account_id=identity.account_id,
    kms_key_arn=key.key_arn,
    tags=tags,
)
# The budget's alerts act by themselves: 85 % stops experiments growing, 95 % moves dev/staging to spot.
BudgetBreaker(
    f"{name}-breaker",
    stack=pulumi.get_stack(),
    env=config.env,
    cluster_name=name,
    budget_name=budget.budget_name,
    topic_arn=budget.topic_arn,
    kms_key_arn=key.key_arn,
    partition=partition,
    region=config.region,
    account_id=identity.account_id,
    node_role_arns=[group.node_role_arn for group in node_groups.values()],
    template_arns=[group.template_arn for group in node_groups.values()],
    tags=tags,
)
# A block's expiration warning drains its group at once, should the scheduled drain not have emptied it.
if blocked := [group for group in config.gpu_node_groups if group.capacity_blocks]:
    CapacityBlockExpiry(
        f"{name}-block-expiry",
        cluster_name=name,
        reservation_ids=[block.reservation_id for group in blocked for block in group.capacity_blocks],
        partition=partition,
        region=config.region,
        account_id=identity.account_id,
        template_arns=[arn for group in blocked for arn in node_groups[group.name].block_template_arns],
        node_role_arns=[node_groups[group.name].node_role_arn for group in blocked],
        alert_topic_arn=budget.topic_arn,
        kms_key_arn=key.key_arn,
        tags=tags,
    )
triton = {
    serving.name: TritonServing(
        config.serving_component(serving),
        serving,
        warm_pool=config.warm_pool(serving),
        region=config.region,
        account_id=identity.account_id,
        partition=partition,
        bucket_name=model_bucket,
        kms_key_arn=key.key_arn,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer_url=cluster.oidc_issuer_url,
        node_provision_minutes=config.cluster.autoscaler.max_node_provision_minutes,
        provider=cluster.provider,
        metrics_scraper=METRICS_SCRAPER,
        publishers=config.publishers_of(serving),
        operators=config.operators_of(serving),
        tags=tags,
        opts=pulumi.ResourceOptions(depends_on=[node_groups[serving.node_group], models, *cluster.priority_classes]),
    )
    for serving in config.serving
}
if config.tenants:
    TenantCostLabels(f"{name}-tenant-cost-labels", provider=cluster.provider)
    guards = TenantGuards(f"{name}-tenant-guards", team_namespaces=config.team_namespaces, provider=cluster.provider)
spaces = [
    TenantSpace(
        f"{name}-tenant-{tenant.name}",
        tenant,
        triton_namespaces=config.client_sets(tenant),
        observed_namespaces=[s.namespace for s in config.serving if s.name in tenant.publishes],
        pools=config.tenant_pool_classes(tenant),
        namespace_gpus=derived.namespace_gpus[tenant.name],
        cluster_name=cluster.name,
        provider=cluster.provider,
        tags=tags,
        opts=pulumi.ResourceOptions(
            depends_on=[*cluster.priority_classes, guards, *(triton[s] for s in tenant.publishes)]
        ),
    )
    for tenant in config.tenants
]
# Kueue and the pools' flavors; with tenants, their queues (docs/capacity-decision.md).
if config.queues.enabled:
    GpuQueues(
        f"{name}-queues",
        config.queues,
        derived.queues,
        teams=bool(config.tenants),
        vpc_cidr=config.network.vpc_cidr,
        api_service_ip=config.cluster.api_service_ip,
        provider=cluster.provider,
        provisioning_api=autoscaler.provisioning_api,
        opts=pulumi.ResourceOptions(depends_on=[*node_groups.values(), *cluster.priority_classes, *spaces]),
    )
if config.scheduling.descheduler:
    Descheduler(
        f"{name}-descheduler",
        config.scheduling,
        kubernetes_version=config.cluster.kubernetes_version,
        provider=cluster.provider,
        tags=tags,
        training_namespaces=[config.storage.checkpoints.namespace] if config.storage.checkpoints else [],
    )
# Every stack: the HPAs' metrics, and GPU utilisation per pod for people.
MetricsPipeline(
    f"{name}-metrics",
    config.monitoring,
    vpc_cidr=config.network.vpc_cidr,
    api_service_ip=config.cluster.api_service_ip,
    provider=cluster.provider,
    cost=CostMonitoring(
        cluster_name=name,
        monthly_budget_usd=config.budget.monthly_usd,
        rebalance=rebalance_summary(config.scheduling),
        rates=derived.cost_rates,
        served=tuple(ServedSet(s.namespace, s.requests_per_second_target) for s in config.serving),
        planned_spot_share={g: p.max_spot_share for g, p in capacity.plans.items()},
        series=derived.series,
        alert_topic_arn=budget.topic_arn,
        kms_key_arn=key.key_arn,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer_url=cluster.oidc_issuer_url,
        region=config.region,
        tags=tags,
    ),
    csi_driver=cluster.ebs_csi_addon,
)
if node_groups:
    # A kubelet may label and taint its Node only as the pool its IAM role belongs to.
    PoolIdentity(
        f"{name}-pool-identity",
        {group.name: (node_groups[group.name].node_role_arn, group.workload_class) for group in config.gpu_node_groups},
        provider=cluster.provider,
    )
    SpotInterruptionHandling(
        f"{name}-interruptions",
        region=config.region,
        cluster_name=name,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer_url=cluster.oidc_issuer_url,
        group_arns=[arn for group in node_groups.values() for arn in (group.asg_arn, *group.block_asg_arns)],
        chart_version=config.cluster.node_termination_handler_version,
        provider=cluster.provider,
        tags=tags,
    )

# Exactly the platform contract, so application teams can rely on every field.
contract = platform_contract(
    config,
    derived,
    {
        "vpc_id": network.vpc_id,
        "private_subnet_ids": network.private_subnet_ids,
        "cluster_name": cluster.name,
        "cluster_endpoint": cluster.endpoint,
        "kubeconfig": cluster.kubeconfig,
        "oidc_provider_arn": cluster.oidc_provider_arn,
        "kms_key_arn": key.key_arn,
        "model_repository_bucket": models.bucket_name,
        "triton_endpoints": {serving_name: serving.endpoints for serving_name, serving in triton.items()},
        "endpoint_ids": endpoints.endpoint_ids,
        "reports": stack_reports(config, pulumi.get_stack(), derived, {g: n.asg_name for g, n in node_groups.items()}),
        "checkpoint_claims": checkpoint_claims,
        "stack": f"{pulumi.get_project()}/{pulumi.get_stack()}",
    },
)
for output_name, value in contract.items():
    pulumi.export(output_name, value)
