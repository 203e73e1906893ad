"""`TritonServing`: one served model set on the `online` GPU pool. Its autoscaler reads Pods metrics
that `MetricsPipeline` (components/monitoring/metrics_pipeline.py) publishes from Triton's own metrics."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from typing import Literal

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
from pydantic import BaseModel, ConfigDict, Field, field_validator

from components.common.iam import irsa_trust_policy
from components.common.k8s_objects import declare
from components.serving.manifests import PORTS, TritonSpec, serving_manifests

_DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$"


def _pinned_release(value: str) -> str:
    if not re.fullmatch(r"\d{2}\.\d{2}", value):
        raise ValueError("must pin a Triton release as YY.MM, such as 26.07 (never latest)")
    return value


class CanaryConfig(BaseModel):
    """A second Deployment behind the same Service: the way to roll out a new model version."""

    model_config = ConfigDict(extra="forbid")

    image_version: str = Field(description="Triton release of the canary, YY.MM.")
    model_prefix: str = Field(pattern=r"^[\w.-]+(/[\w.-]+)*$", description="Model repository prefix of the canary.")
    replicas: int = Field(1, ge=1, le=4, description="Canary pods (fixed; the stable track autoscales).")

    @field_validator("image_version")
    @classmethod
    def _release(cls, value: str) -> str:
        return _pinned_release(value)


class TritonServingConfig(BaseModel):
    """One served model set (config `seedance-gpu:serving[]`)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=_DNS_LABEL, description="Name of the model set; objects are triton-<name>.")
    image_version: str = Field(description="nvcr.io/nvidia/tritonserver release, YY.MM (never latest).")
    model_prefix: str = Field(pattern=r"^[\w.-]+(/[\w.-]+)*$", description="Prefix in the model repository bucket.")
    model_control_mode: Literal["none", "explicit"] = Field(
        "explicit", description="none: load everything at start; explicit: --load-model=* at start, API loads later.")
    node_group: str = Field("online", description="The online GPU node group the pods run on.")
    gpus: int = Field(1, ge=1, le=8, description="GPUs per replica.")
    cpu: float = Field(3, gt=0, le=192, description="vCPUs per replica (requests = limits).")
    memory_gib: int | None = Field(None, ge=1, le=2048, description="Memory per replica; default 4 GiB per vCPU.")
    warm_pool: int | None = Field(None, ge=1, le=100, description="Minimum ready replicas; default 2 (1 in dev).")
    max_replicas: int = Field(8, ge=1, le=200, description="Most replicas the autoscaler may run.")
    queue_time_target_us: int = Field(20_000, ge=100, le=10_000_000,
                                      description="Target queue time per request, microseconds (Pods metric).")
    requests_per_second_target: int = Field(100, ge=1, le=100_000, description="Target successful requests/s per pod.")
    startup_budget_seconds: int = Field(600, ge=30, le=3600, description="Time a replica may take to load models.")
    image_pull_budget_seconds: int = Field(600, ge=30, le=3600,
                                           description="Time a new GPU node may take to pull the Triton image.")
    drain_seconds: int = Field(15, ge=1, le=300, description="preStop wait while endpoints drop the pod.")
    exit_timeout_seconds: int = Field(30, ge=1, le=600, description="Triton's wait for in-flight requests on SIGTERM.")
    service_type: Literal["ClusterIP", "internal-nlb"] = Field(
        "ClusterIP", description="ClusterIP, or an internal NLB (never internet-facing).")
    canary: CanaryConfig | None = None

    @field_validator("image_version")
    @classmethod
    def _release(cls, value: str) -> str:
        return _pinned_release(value)

    @field_validator("service_type")
    @classmethod
    def _served_by_a_deployed_controller(cls, value: str) -> str:
        # The NLB annotations are the AWS Load Balancer Controller's, which no stack deploys yet: such a
        # Service would stay pending, and the ingress NetworkPolicy admits pods, not the NLB's addresses.
        if value == "internal-nlb":
            raise ValueError("needs the AWS Load Balancer Controller, which this stack does not deploy yet; "
                             "allowed: ClusterIP")
        return value

    @property
    def memory(self) -> int:
        return self.memory_gib or int(self.cpu * 4)  # the source's 1 vCPU : 4 GiB


def model_reader_policy(bucket: str, prefixes: list[str], key_arn: str, region: str, partition: str = "aws") -> dict:
    """Read only the model set's prefixes, and decrypt only through S3."""
    arn = f"arn:{partition}:s3:::{bucket}"
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": arn,
         "Condition": {"StringLike": {"s3:prefix": [f"{p}/*" for p in prefixes] + prefixes}}},
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": [f"{arn}/{p}/*" for p in prefixes]},
        {"Effect": "Allow", "Action": "kms:Decrypt", "Resource": key_arn,
         "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}}},
    ]}


def deployment_timeouts(config: TritonServingConfig, node_provision_minutes: int) -> dict[str, str]:
    """How long `pulumi up` waits for the Deployment. A new replica may need a new GPU node (the
    autoscaler's provision limit), an image pull and the startup budget; creating starts the warm pool
    at once, while a rolling update (maxSurge 1) replaces up to max_replicas pods one after another."""
    per_pod = math.ceil((config.image_pull_budget_seconds + config.startup_budget_seconds) / 60)
    create = node_provision_minutes + per_pod
    update = node_provision_minutes + config.max_replicas * per_pod
    return {"create": f"{create}m", "update": f"{update}m"}


class TritonServing(pulumi.ComponentResource):
    endpoints: dict[str, str]

    def __init__(self, name: str, config: TritonServingConfig, *, warm_pool: int, region: str, account_id: str,
                 partition: str, bucket_name: str, kms_key_arn: pulumi.Input[str], oidc_provider_arn: pulumi.Input[str],
                 oidc_issuer_url: pulumi.Input[str], node_provision_minutes: int,
                 provider: k8s.Provider,
                 tags: dict[str, str], opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:serving:TritonServing", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        namespace = f"triton-{config.name}"
        account_name = f"triton-{config.name}"
        prefixes = [config.model_prefix] + ([config.canary.model_prefix] if config.canary else [])
        # A fixed role name makes its ARN known up front, so the manifests stay plain data.
        role_name = f"{name}-models"[:64]
        role = aws.iam.Role(
            f"{name}-role",
            name=role_name,
            assume_role_policy=pulumi.Output.all(oidc_provider_arn, oidc_issuer_url).apply(
                lambda v: json.dumps(irsa_trust_policy(v[0], v[1], namespace, account_name))),
            tags=tags,
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-models",
            role=role.id,
            policy=pulumi.Output.from_input(kms_key_arn).apply(
                lambda arn: json.dumps(model_reader_policy(bucket_name, prefixes, arn, region, partition))),
            opts=child,
        )
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        ns = declare({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, f"{name}-namespace",
                     in_cluster)
        spec = TritonSpec(
            name=config.name, namespace=namespace, image_version=config.image_version,
            model_repository=f"s3://{bucket_name}/{config.model_prefix}",
            model_control_mode=config.model_control_mode, gpus=config.gpus, cpu=config.cpu,
            memory_gib=config.memory, node_group=config.node_group, warm_pool=warm_pool,
            max_replicas=config.max_replicas, queue_time_target_us=config.queue_time_target_us,
            requests_per_second_target=config.requests_per_second_target,
            startup_budget_seconds=config.startup_budget_seconds, drain_seconds=config.drain_seconds,
            exit_timeout_seconds=config.exit_timeout_seconds, service_type=config.service_type,
            service_account=account_name, role_arn=f"arn:{partition}:iam::{account_id}:role/{role_name}", region=region,
        )
        canary = None
        if config.canary is not None:
            canary = replace(spec, image_version=config.canary.image_version, track="canary",
                             model_repository=f"s3://{bucket_name}/{config.canary.model_prefix}",
                             replicas=config.canary.replicas)
        after_namespace = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[ns, role])
        manifests = serving_manifests(spec, canary)
        timeouts = pulumi.CustomTimeouts(**deployment_timeouts(config, node_provision_minutes))
        for manifest in manifests:
            suffix = manifest["kind"].lower() + ("-canary" if "canary" in manifest["metadata"]["name"] else "")
            wait = pulumi.ResourceOptions(custom_timeouts=timeouts) if manifest["kind"] == "Deployment" else None
            declare(manifest, f"{name}-{suffix}", pulumi.ResourceOptions.merge(after_namespace, wait))
        host = f"triton-{config.name}.{namespace}.svc.cluster.local"
        self.endpoints = {"http": f"http://{host}:{PORTS['http']}", "grpc": f"{host}:{PORTS['grpc']}",
                          "metrics": f"http://{host}:{PORTS['metrics']}/metrics"}
        self.register_outputs({"endpoints": self.endpoints})
