"""seedance-gpu: GPU training and inference on EKS. Run with `pulumi up` or `seedance plan`."""

from datetime import datetime, timezone
from pathlib import Path

import pulumi
import pulumi_aws as aws

from components.aws_prices import LivePriceSource
from components.cluster import Cluster
from components.egress_cost import egress_report, report_lines
from components.encryption import StackKey
from components.gpu_node_group import GpuNodeGroup
from components.model_repository import ModelRepository
from components.network import Network
from components.pricing import PriceSourceError, SnapshotPriceSource
from components.private_endpoints import PrivateEndpoints
from components.spot_interruptions import SpotInterruptionHandling
from components.storage import CheckpointStorage, LocalStorage
from components.triton_serving import MetricsAdapter, TritonServing
from infra.capacity import program_capacity
from infra.config import load_from_pulumi

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"

# Validate everything first: a bad value stops the run before any resource is declared.
config = load_from_pulumi()
zones = config.usable_zones(aws.get_availability_zones(state="available").names)
capacity = program_capacity(config, pulumi.get_stack(), zones, STACKS_DIR, datetime.now(timezone.utc),
                            live=LivePriceSource())
tags = config.resource_tags
name = config.cluster_name

identity = aws.get_caller_identity()
partition = aws.get_partition().partition

model_bucket = f"{name}-models-{identity.account_id}"  # bucket names are global: the account keeps it unique

key = StackKey(name, region=config.region, tags=tags)
models = ModelRepository(f"{name}-models", bucket_name=model_bucket, kms_key_arn=key.key_arn, tags=tags)
network = Network(name, config.network, zones=zones, cluster_name=name, tags=tags)
endpoints = PrivateEndpoints(
    f"{name}-endpoints",
    config.endpoints,
    s3_interface=config.s3_interface,
    region=config.region,
    vpc_id=network.vpc_id,
    vpc_cidr=network.vpc_cidr,
    private_subnet_ids=network.private_subnet_ids,
    private_route_table_ids=network.private_route_table_ids,
    kms_key_arn=key.key_arn,
    stack_bucket_names=[model_bucket],
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
)
node_groups = {
    group.name: GpuNodeGroup(
        f"{name}-{group.name}",
        group,
        capacity.plans[group.name],
        cluster_name=name,
        kubernetes_version=config.cluster.kubernetes_version,
        join=cluster.join,
        subnet_ids=network.private_subnet_ids,
        node_security_group_id=cluster.node_security_group_id,
        kms_key_arn=key.key_arn,
        tags=tags,
    )
    for group in config.gpu_node_groups
}
checkpoint_decision = config.checkpoint_decision()
if config.storage.checkpoints is not None:
    CheckpointStorage(
        f"{name}-checkpoints",
        config.storage.checkpoints,
        checkpoint_decision,
        kms_key_arn=key.key_arn,
        zone=zones[0],  # pre-provisioned volumes live in one zone; their PVs pin pods there
        provider=cluster.provider,
        csi_driver=cluster.ebs_csi_addon,
        tags=tags,
    )
if config.local_storage_groups:
    LocalStorage(f"{name}-local-nvme", config.storage.local, zones=zones, provider=cluster.provider)
triton = {
    serving.name: TritonServing(
        f"{name}-triton-{serving.name}",
        serving,
        warm_pool=config.warm_pool(serving),
        region=config.region,
        account_id=identity.account_id,
        partition=partition,
        bucket_name=model_bucket,
        kms_key_arn=key.key_arn,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer_url=cluster.oidc_issuer_url,
        service_monitor_crd=config.monitoring.prometheus_operator,
        provider=cluster.provider,
        tags=tags,
        opts=pulumi.ResourceOptions(depends_on=[node_groups[serving.node_group]]),
    )
    for serving in config.serving
}
if triton:
    MetricsAdapter(f"{name}-metrics-adapter", config.monitoring, provider=cluster.provider)
if node_groups:
    SpotInterruptionHandling(
        f"{name}-interruptions",
        region=config.region,
        oidc_provider_arn=cluster.oidc_provider_arn,
        oidc_issuer_url=cluster.oidc_issuer_url,
        chart_version=config.cluster.node_termination_handler_version,
        provider=cluster.provider,
        tags=tags,
    )

pulumi.export("region", config.region)
pulumi.export("vpc_id", network.vpc_id)
pulumi.export("private_subnet_ids", network.private_subnet_ids)
pulumi.export("cluster_name", cluster.name)
pulumi.export("cluster_endpoint", cluster.endpoint)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("oidc_provider_arn", cluster.oidc_provider_arn)
pulumi.export("kms_key_arn", key.key_arn)
pulumi.export("endpoint_ids", endpoints.endpoint_ids)
pulumi.export("model_repository_bucket", models.bucket_name)
pulumi.export("triton_endpoints", {name_: serving.endpoints for name_, serving in triton.items()})
pulumi.export("storage", {
    "checkpoint_class": config.storage.checkpoints.storage_class_name if config.storage.checkpoints else None,
    "checkpoint_sizing": checkpoint_decision.lines() if checkpoint_decision else [],
    "local_class": config.storage.local.storage_class_name if config.local_storage_groups else None,
})
try:
    egress = egress_report(config.egress_traffic, config.endpoint_layout(),
                           SnapshotPriceSource().service_prices(config.region))
    pulumi.export("egress", {"monthly_via_nat_usd": round(egress.via_nat_usd, 2),
                             "monthly_with_endpoints_usd": round(egress.with_endpoints_usd, 2),
                             "monthly_saving_usd": round(egress.saving_usd, 2), "report": report_lines(egress)})
except PriceSourceError as error:
    pulumi.export("egress", {"report": [f"  no egress estimate: {error}"]})
pulumi.export("capacity", {
    "origin": capacity.origin,
    "groups": {
        group: {
            "asg_name": node_groups[group].asg_name,
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
})
