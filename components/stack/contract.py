"""The platform contract a stack exports (seedance_client/contract.py is its type): built here, from the
validated config, the derivation and the values of the resources the program declared (Outputs pass
through as they are). The program exports exactly this. Pure: no Pulumi import."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.catalog.instance_types import gpu_instance_type
from components.common.manifests import COST_LABEL_KEYS
from components.compute.config import allocatable_gpus, gpu_pool_selector
from components.compute.labels import pool_tolerations
from components.compute.priority import PRIORITY_CLASS
from components.cost.estimate import catalog_for
from components.pricing.ebs import ebs_monthly
from components.stack.config import StackConfig
from components.stack.derivation import StackDerivation
from components.storage.checkpoint_sizing import SizingDecision
from components.storage.manifests import volume_parameters
from components.tenancy.queues import FLAVOR_ORDER, local_queue_name
from seedance_client.contract import CONTRACT_VERSION, PlatformContract


def gpu_pools(config: StackConfig, zones: tuple[str, ...]) -> list[dict]:
    return [
        {
            "name": group.name,
            "zones": list(group.launch_zones(zones)),
            "workload_class": group.workload_class,
            "node_selector": gpu_pool_selector(group),
            "tolerations": pool_tolerations(group.name),
            "instance_types": list(group.instance_types),
            "gpus_per_node": allocatable_gpus(group),
            "gpu_models": {t: gpu_instance_type(t).gpu for t in group.instance_types},
            "gpu_memory_gib": {t: gpu_instance_type(t).gpu_memory_gib for t in group.instance_types},
        }
        for group in config.gpu_node_groups
    ]


def storage_classes(config: StackConfig, derived: StackDerivation) -> dict:
    checkpoints = config.storage.checkpoints
    return {
        "checkpoint": checkpoints.storage_class_name if checkpoints else None,
        "local": config.storage.local.storage_class_name if config.local_storage_groups else None,
        "training_namespace": checkpoints.namespace if checkpoints else None,
        "checkpoint_interval_seconds": checkpoints.profile.interval_seconds if checkpoints else None,
        "volumes": {checkpoints.storage_class_name: volume_parameters(derived.sized_checkpoint)} if checkpoints else {},
        "claim_prices": {checkpoints.storage_class_name: claim_price(derived.sized_checkpoint, config.region)}
        if checkpoints
        else {},
    }


def claim_price(decision: SizingDecision, region: str) -> dict[str, float]:
    """A claim of the class at the region's bundled EBS prices, by `ebs_monthly` (the estimate's formula): the
    class fixes IOPS and throughput, so what a GiB adds is the difference between one and none."""
    volume, prices = decision.chosen, catalog_for(region).services
    fixed = ebs_monthly(volume.volume_type, 0, volume.iops, volume.throughput_mibps, prices)
    return {
        "usd_per_gib_month": round(
            ebs_monthly(volume.volume_type, 1, volume.iops, volume.throughput_mibps, prices) - fixed, 6
        ),
        "usd_per_month": round(fixed, 6),
    }


def platform_contract(config: StackConfig, derived: StackDerivation, resources: Mapping[str, Any]) -> dict[str, Any]:
    """Every field of the contract: `resources` holds those only the declared resources know (ids, names,
    endpoints, the reports), the rest comes from the config and the derivation."""
    contract = {
        "contract_version": CONTRACT_VERSION,
        "region": config.region,
        **resources,
        "gpu_pools": gpu_pools(config, derived.zones),
        "storage_classes": storage_classes(config, derived),
        "cost_label_keys": list(COST_LABEL_KEYS),
        "tenants": [
            {
                "name": t.name,
                "namespaces": t.namespace_names,
                "gpus": t.gpus,
                "publishes": t.publishes,
                "pools": config.tenant_pools(t),
            }
            for t in config.tenants
        ],
        "priority_classes": dict(PRIORITY_CLASS),
        "queues": {klass: local_queue_name(klass) for klass in FLAVOR_ORDER} if config.queues.enabled else {},
    }
    missing, extra = (
        set(PlatformContract.model_fields) - set(contract),
        set(contract) - set(PlatformContract.model_fields),
    )
    if missing or extra:
        raise ValueError(f"the exports must be exactly the contract: missing {sorted(missing)}, extra {sorted(extra)}")
    return contract
