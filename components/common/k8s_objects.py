"""Declare a plain Kubernetes manifest as the matching pulumi_kubernetes resource.

Components build their objects as plain dicts (pure, schema-checked in tests) and declare them
here; the provider receives the same fields, so what the tests validate is what is deployed.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.common.manifests import Manifest

_KINDS = {
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "LimitRange"): k8s.core.v1.LimitRange,
    ("v1", "ResourceQuota"): k8s.core.v1.ResourceQuota,
    ("scheduling.k8s.io/v1", "PriorityClass"): k8s.scheduling.v1.PriorityClass,
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "PersistentVolume"): k8s.core.v1.PersistentVolume,
    ("v1", "PersistentVolumeClaim"): k8s.core.v1.PersistentVolumeClaim,
    ("v1", "Service"): k8s.core.v1.Service,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
    ): k8s.admissionregistration.v1.ValidatingAdmissionPolicy,
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicyBinding",
    ): k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): k8s.apiextensions.v1.CustomResourceDefinition,
    ("apps/v1", "DaemonSet"): k8s.apps.v1.DaemonSet,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
    ("autoscaling/v2", "HorizontalPodAutoscaler"): k8s.autoscaling.v2.HorizontalPodAutoscaler,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("policy/v1", "PodDisruptionBudget"): k8s.policy.v1.PodDisruptionBudget,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): k8s.rbac.v1.ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): k8s.rbac.v1.ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
    ("storage.k8s.io/v1", "StorageClass"): k8s.storage.v1.StorageClass,
}


def declare(manifest: Manifest, resource_name: str, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    kind = _KINDS.get((manifest["apiVersion"], manifest["kind"]))
    if kind is None:  # a custom resource (e.g. a ServiceMonitor): its CRD must exist in the cluster
        return k8s.apiextensions.CustomResource(
            resource_name,
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest["metadata"],
            spec=manifest["spec"],
            opts=opts,
        )
    # Top-level fields are the class's arguments, in snake_case; nested fields pass through as written.
    fields = {_snake(k): v for k, v in manifest.items() if k not in ("apiVersion", "kind")}
    return kind(resource_name, **fields, opts=opts)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
