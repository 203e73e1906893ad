"""What a stack's config says its plan must hold, as the rules' config: the one map from a `StackConfig` to
the values the rules judge against (its budget and region, who is home, each namespace's Pod Security
level, ...). The gate computes it with its own code from the stack file, so a plan cannot relax it."""

from __future__ import annotations

import json
from typing import Any

from components.cluster.autoscaling import autoscaler_values
from components.cluster.config import PRINCIPAL_LISTS
from components.compute.asg import node_template_tags
from components.compute.device_plugin import NAMESPACE as DEVICE_PLUGIN_NAMESPACE
from components.compute.efa import EFA_PLUGIN_NAMESPACE
from components.monitoring.config import GPU_AGENTS_NAMESPACE, METRICS_SCRAPER
from components.monitoring.config import NAMESPACE as MONITORING_NAMESPACE
from components.monitoring.grafana import NAMESPACE as GRAFANA_NAMESPACE
from components.monitoring.opencost import NAMESPACE as OPENCOST_NAMESPACE
from components.serving.manifests import triton_ingress
from components.serving.publishing import operator_role_name, publisher_role_name
from components.stack.config import PROJECT, StackConfig, parse_config_values
from components.storage.config import LocalStorageConfig
from components.storage.manifests import (
    LOCAL_DISKS_DIR,
    PROVISIONER_NAME,
    persistent_volume_policy,
    provisioner_subject,
    provisioner_user,
)
from components.tenancy.manifests import tenant_cost_label_policy, tenant_guard_policies, tenant_pod_policy
from components.tenancy.queues import kueue_values, queue_admission_policies, served_gpus
from policies.readers.rbac import subject_key

# The Pod Security level of each namespace the platform itself runs, whatever the stack: node agents that
# need the host get their own namespace at privileged; kube-system holds the API server's add-ons at
# baseline (it enforces nothing itself: the gate does).
PLATFORM_NAMESPACE_LEVELS = {
    "kube-system": "baseline",
    DEVICE_PLUGIN_NAMESPACE: "privileged",
    EFA_PLUGIN_NAMESPACE: "privileged",
    GPU_AGENTS_NAMESPACE: "privileged",
    MONITORING_NAMESPACE: "baseline",
    OPENCOST_NAMESPACE: "restricted",
    GRAFANA_NAMESPACE: "restricted",
}


def platform_exemptions(local_storage_namespace: str) -> list[dict[str, Any]]:
    """The local volume provisioner reads the disks nodeadm mounts under one host directory."""
    return [{"namespace": local_storage_namespace, "workload": PROVISIONER_NAME, "host_paths": [LOCAL_DISKS_DIR]}]


PLATFORM_EXEMPTIONS = platform_exemptions(LocalStorageConfig().namespace)


def namespace_levels(config: StackConfig) -> dict[str, str]:
    """Each namespace's level: the platform's, Triton's restricted, tenants' and training's baseline
    (trainers' and teams' images often run as root)."""
    levels = dict(PLATFORM_NAMESPACE_LEVELS)
    levels |= {serving.namespace: "restricted" for serving in config.serving}
    levels |= {namespace: "baseline" for tenant in config.tenants for namespace in tenant.namespace_names}
    if config.storage.checkpoints is not None:
        levels[config.storage.checkpoints.namespace] = "baseline"
    return levels


def named_principals(config: StackConfig) -> list[str]:
    """Every IAM principal the stack config names: administrators, tenants' people and CI, publishers."""
    named = [arn for field in PRINCIPAL_LISTS for arn in getattr(config.cluster, field)]
    named += [config.cluster.deployer_role_arn] if config.cluster.deployer_role_arn else []
    named += [arn for tenant in config.tenants for arn in tenant.principal_arns]
    return list(dict.fromkeys(named + publisher_principals(config)))


def publisher_principals(config: StackConfig) -> list[str]:
    """The principals the stack config names as model publishers: each team's CI and each served prefix's."""
    named = [arn for tenant in config.tenants for arn in tenant.publisher_principal_arns]
    return list(dict.fromkeys(named + [arn for serving in config.serving for arn in config.publishers_of(serving)]))


def publisher_prefixes(config: StackConfig) -> list[dict[str, Any]]:
    """Each served prefix, the names of the publisher roles that alone may write it, and of the operator roles
    that may write its switch (each model's config and history) only."""
    return [
        {
            "prefix": prefix,
            "publisher_roles": [publisher_role_name(config.serving_component(serving))],
            "operator_roles": (
                [operator_role_name(config.serving_component(serving))] if config.operators_of(serving) else []
            ),
        }
        for serving in config.serving
        for prefix in serving.prefixes
    ]


def guard_expectations(config: StackConfig) -> dict[str, Any]:
    """The admission guards the stack requires, and what each guards and refuses, built as the program
    builds them from the same config: the local provisioner's identity, each team's pools."""
    local = config.storage.local.namespace if config.local_storage_groups else None
    built = [*persistent_volume_policy(provisioner_user(local) if local else None)]
    if config.tenants:
        built += [*tenant_cost_label_policy(), *tenant_guard_policies(config.team_namespaces)]
        for tenant in config.tenants:
            built += tenant_pod_policy(tenant, config.tenant_pool_classes(tenant))
        built += queue_admission_policies() if config.queues.enabled else []
    guards = [m for m in built if m["kind"] == "ValidatingAdmissionPolicy"]
    return {
        "required_policies": [guard["metadata"]["name"] for guard in guards],
        "required_specs": {
            guard["metadata"]["name"]: {key: guard["spec"].get(key) for key in GUARD_KEYS} for guard in guards
        },
    }


# What decides which requests a ValidatingAdmissionPolicy sees (the binding's matchResources narrows it more)
# and what it refuses of them (its variables feed its validations); a paramKind the platform does not give it
# makes each binding need a parameter, and a binding whose parameter is missing may allow everything.
GUARD_KEYS = ("matchConstraints", "matchConditions", "variables", "validations", "paramKind")


def platform_role_subjects(provisioner_namespace: str) -> dict[str, list[str]]:
    """The platform's own controller roles and the service accounts that alone hold them."""
    return {PROVISIONER_NAME: [subject_key(provisioner_subject(provisioner_namespace))]}


def stack_policy_config(config: StackConfig) -> dict[str, dict[str, Any]]:
    regional = {"region": config.region}
    group_classes = {"group_classes": {group.name: group.workload_class for group in config.gpu_node_groups}}
    budget = {"monthly_budget_usd": config.budget.monthly_usd, "basis": config.budget.basis, **regional}
    tenant_namespaces = [name for tenant in config.tenants for name in tenant.namespace_names]
    return {
        "budget-monthly-cost-limit": budget,
        "budget-monthly-cost-warn-near-budget": budget,
        "aws-ebs-volume-disallow-gp2-io1": regional,
        "aws-ebs-volume-flag-overprovisioned-io2": regional,
        "kubernetes-claim-flag-costly-volume": regional,
        # The roles it names are trusted by their exact ARN; their accounts are not home as a whole.
        "aws-iam-policy-disallow-public-principal": {"home_principals": named_principals(config)},
        "kubernetes-pod-enforce-pod-security-standards": {
            "namespace_levels": namespace_levels(config),
            "default_level": "restricted",
            "exemptions": platform_exemptions(config.storage.local.namespace),
            "non_root_namespaces": [serving.namespace for serving in config.serving],
        },
        "kubernetes-namespace-require-pod-security-level": {
            "namespace_levels": namespace_levels(config),
            "default_level": "restricted",
        },
        "kubernetes-admission-binding-require-deny": guard_expectations(config),
        "pulumi-resource-require-known-type": {"kubernetes_version": config.cluster.kubernetes_version},
        "aws-autoscaling-group-limit-spot-share": {
            **group_classes,
            "capacity_blocks": [
                block.reservation_id for group in config.gpu_node_groups for block in group.capacity_blocks
            ],
        },
        "aws-autoscaling-group-require-on-demand-baseline": group_classes,
        "kubernetes-rbac-binding-disallow-escalating-roles": {
            "tenant_namespaces": tenant_namespaces,
            "platform_role_subjects": platform_role_subjects(config.storage.local.namespace),
        },
        "kubernetes-rbac-role-disallow-escalation": {"tenant_namespaces": tenant_namespaces},
        "aws-vpc-security-group-disallow-open-ingress": {
            "allowed_ranges": [config.network.vpc_cidr, *config.cluster.deployer_cidrs]
        },
        "kubernetes-networkpolicy-restrict-serving-ingress": {
            "serving_ingress": {
                serving.namespace: triton_ingress(serving.client_namespaces, METRICS_SCRAPER)
                for serving in config.serving
            }
        },
        "kubernetes-deployment-require-triton-model-control": {
            "namespace_modes": {serving.namespace: [serving.model_control_mode] for serving in config.serving}
        },
        "aws-eks-access-restrict-admin-policies": {
            "tenant_principals": {arn: tenant.name for tenant in config.tenants for arn in tenant.principal_arns},
            "admin_principals": config.cluster.admin_principal_arns,
            "viewer_principals": config.cluster.viewer_principal_arns,
            "from_stack_config": True,
            "publisher_principals": publisher_principals(config),
            "cluster_admin_principals": [
                *config.cluster.break_glass_principal_arns,
                *([config.cluster.deployer_role_arn] if config.cluster.deployer_role_arn else []),
            ],
            "deployer_named": config.cluster.deployer_role_arn is not None,
        },
        "aws-iam-role-restrict-platform-role-entry": {
            "from_stack_config": True,
            "role_entrants": {
                **{
                    publisher_role_name(config.serving_component(serving)): config.publishers_of(serving)
                    for serving in config.serving
                },
                **{
                    operator_role_name(config.serving_component(serving)): config.operators_of(serving)
                    for serving in config.serving
                    if config.operators_of(serving)
                },
            },
            "platform_namespaces": sorted({*PLATFORM_NAMESPACE_LEVELS, *(s.namespace for s in config.serving)}),
            "platform_roles": [config.cluster.deployer_role_arn] if config.cluster.deployer_role_arn else [],
        },
        "aws-kms-key-restrict-key-policy": {
            "key_administrators": [
                *([config.cluster.deployer_role_arn] if config.cluster.deployer_role_arn else []),
                *config.cluster.break_glass_principal_arns,
                *config.cluster.admin_principal_arns,
            ]
        },
        "kubernetes-container-disallow-unsafe-options": {
            "max_scale_down_unneeded_minutes": config.cluster.autoscaler.scale_down_unneeded_minutes
        },
        "aws-s3-bucket-restrict-replication": {"model_bucket_prefix": f"{config.cluster_name}-models-"},
        "aws-s3-bucket-require-model-publisher-deny": {
            "bucket_prefix": f"{config.cluster_name}-models-",
            "prefixes": publisher_prefixes(config),
            "administrators": [
                *([config.cluster.deployer_role_arn] if config.cluster.deployer_role_arn else []),
                *config.cluster.break_glass_principal_arns,
            ],
            "deployer_named": config.cluster.deployer_role_arn is not None,
        },
        "kubernetes-kueue-queue-restrict-to-decision": queue_expectations(config),
        "kubernetes-autoscaler-require-platform-values": autoscaler_expectations(config),
        "aws-budget-restrict-to-config": {
            "from_stack_config": True,
            "monthly_usd": config.budget.monthly_usd,
            "alert_emails": list(config.budget.alert_emails),
        },
        "aws-autoscaling-group-restrict-to-config": {
            "from_stack_config": True,
            "pools": {
                group.name: {
                    "instance_types": list(group.instance_types),
                    "min_size": group.min_gpus // group.gpus_per_instance,
                    "max_size": group.max_gpus // group.gpus_per_instance,
                    "node_template": node_template_tags(group),
                }
                for group in config.gpu_node_groups
            },
        },
    }


def autoscaler_expectations(config: StackConfig) -> dict[str, Any]:
    """The autoscaler's release as the program builds it from the stack config (its role ARN aside)."""
    autoscaler, minor = config.cluster.autoscaler, config.cluster.kubernetes_version
    values = autoscaler_values(
        autoscaler,
        cluster_name=config.cluster_name,
        region=config.region,
        image_tag=autoscaler.image_for(minor),
        chart_version=autoscaler.chart_for(minor),
        role_arn="",
        provisioning_requests=bool(config.gang_pools),
    )
    return {"from_stack_config": True, "chart_version": autoscaler.chart_for(minor), "values": values}


def queue_expectations(config: StackConfig) -> dict[str, Any]:
    """What the queues must be, from the stack config: each team's nominal GPUs per class over its pools, the
    pools' classes, what serving may hold on each pool, and Kueue's release (components/tenancy/queues.py)."""
    return {
        "from_stack_config": True,
        "queues_enabled": config.queues.enabled,
        "teams": {
            tenant.name: {
                "namespaces": tenant.namespace_names,
                "pools": config.tenant_pools(tenant),
                "gpus": {klass: count for klass, count in tenant.gpus.items() if count > 0},
                "borrowing": tenant.gpu_borrowing_limits,
                "lending": tenant.gpu_lending_limits,
            }
            for tenant in config.tenants
        },
        "group_classes": {group.name: group.workload_class for group in config.gpu_node_groups},
        "gang_pools": config.gang_pools,
        "gang_topologies": config.gang_topologies,
        "served": served_gpus(config.serving),
        "kueue_version": config.queues.kueue_version,
        "kueue_values": kueue_values(config.queues, provisioning=bool(config.gang_pools)),
    }


def stack_config_expectations(config_json: str | None) -> dict[str, dict[str, Any]]:
    """`stack_policy_config` of the stack config the engine hands a policy pack (PULUMI_CONFIG: the
    namespaced keys and their string values, as a program gets them), when it is this project's; nothing
    for another project's stack (a team's program). A config the program would refuse stops the pack with
    the same one-line error."""
    if not config_json:
        return {}
    values = {str(k): str(v) for k, v in json.loads(config_json).items()}
    if not any(key.startswith(f"{PROJECT}:") for key in values):
        return {}
    return stack_policy_config(parse_config_values(values))


def team_policy_config(contract: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What a platform's contract (its stack outputs) says a team's plan must fit: the team rules' config."""
    return {
        "kubernetes-tenant-require-contract-fit": {"contracts": [dict(contract)]},
        # A team's Roles in its own namespaces may write its workloads.
        "kubernetes-rbac-role-disallow-escalation": {
            "tenant_namespaces": [
                name
                for tenant in contract.get("tenants") or []
                if isinstance(tenant, dict)
                for name in tenant.get("namespaces") or []
            ]
        },
        "kubernetes-claim-flag-costly-volume": {
            "region": contract.get("region") or "us-east-1",
            "storage_classes": (contract.get("storage_classes") or {}).get("volumes") or {},
        },
    }
