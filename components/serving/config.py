"""The serving slice of the stack config: Triton model sets and their canaries. Pure."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from components.common.validation import IAM_ROLE_ARN, all_match

_DNS_LABEL = r"^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$"
_NAMESPACE = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
# Values a reader may expect, refused with the reason (a Literal alone only lists what is allowed).
_REFUSED = {
    # explicit mode opens load/unload to whoever reaches the port: a load request may carry a model's
    # files inline, and a Python-backend model runs code in serving with its IRSA role.
    "model_control_mode": {
        "explicit": "opens Triton's model load API to every caller of the Service (arbitrary "
        "code in serving, docs/security.md); allowed: poll, none"
    },
    # The NLB annotations are the AWS Load Balancer Controller's, which no stack deploys yet: such a
    # Service would stay pending, and the ingress NetworkPolicy admits pods, not the NLB's addresses.
    "service_type": {
        "internal-nlb": "needs the AWS Load Balancer Controller, which this stack does not deploy "
        "yet; allowed: ClusterIP"
    },
}


def _pinned_release(value: str) -> str:
    if not re.fullmatch(r"\d{2}\.\d{2}", value):
        raise ValueError("must pin a Triton release as YY.MM, such as 26.07 (never latest)")
    return value


class CanaryConfig(BaseModel):
    """A second Deployment behind the same Service: the way to roll out a new model version."""

    model_config = ConfigDict(extra="forbid")

    image_version: str = Field(description="Triton release of the canary, YY.MM.")
    image_digest: str | None = Field(None, pattern=r"^sha256:[0-9a-f]{64}$", description="The canary image's digest.")
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
    image_digest: str | None = Field(
        None,
        pattern=r"^sha256:[0-9a-f]{64}$",
        description="The release's image digest: pods then run exactly that image, whatever the tag is moved to.",
    )
    registry: str = Field(
        "nvcr.io/nvidia/tritonserver",
        pattern=r"^[a-z0-9.-]+(:\d+)?(/[a-z0-9._-]+)+$",
        description="Where the image is pulled from: NVIDIA's registry (through NAT), or a "
        "mirror in ECR with immutable tags (through the ECR endpoints).",
    )
    model_prefix: str = Field(pattern=r"^[\w.-]+(/[\w.-]+)*$", description="Prefix in the model repository bucket.")
    model_control_mode: Literal["poll", "none"] = Field(
        "poll",
        description="poll: load everything at start and follow the bucket (a published model or version "
        "loads by itself); none: load at start only. Either closes the load/unload API.",
    )
    repository_poll_seconds: int = Field(
        30,
        ge=5,
        le=600,
        description="How often poll mode reads the bucket for "
        "changes (each poll lists the prefix and heads every object).",
    )
    client_namespaces: list[str] = Field(
        [],
        max_length=50,
        description="Namespaces whose pods may call the inference ports (8000 http, 8001 grpc); "
        "nothing else may. The metrics port answers Prometheus only.",
    )
    publisher_principal_arns: list[str] = Field(
        min_length=1,
        max_length=20,
        description="IAM roles that may assume this set's publisher role (a team's CI); "
        "only the publisher role may write model files under the set's prefixes.",
    )
    node_group: str = Field("online", description="The online GPU node group the pods run on.")
    gpus: int = Field(1, ge=1, le=8, description="GPUs per replica.")
    cpu: float = Field(3, gt=0, le=192, description="vCPUs per replica (requests = limits).")
    memory_gib: int | None = Field(None, ge=1, le=2048, description="Memory per replica; default 4 GiB per vCPU.")
    warm_pool: int | None = Field(None, ge=1, le=100, description="Minimum ready replicas; default 2 (1 in dev).")
    max_replicas: int = Field(8, ge=1, le=200, description="Most replicas the autoscaler may run.")
    queue_time_target_us: int = Field(
        20_000, ge=100, le=10_000_000, description="Target queue time per request, microseconds (Pods metric)."
    )
    requests_per_second_target: int = Field(100, ge=1, le=100_000, description="Target successful requests/s per pod.")
    startup_budget_seconds: int = Field(600, ge=30, le=3600, description="Time a replica may take to load models.")
    image_pull_budget_seconds: int = Field(
        600, ge=30, le=3600, description="Time a new GPU node may take to pull the Triton image."
    )
    drain_seconds: int = Field(15, ge=1, le=300, description="preStop wait while endpoints drop the pod.")
    exit_timeout_seconds: int = Field(30, ge=1, le=600, description="Triton's wait for in-flight requests on SIGTERM.")
    max_usd_per_1000_requests: float | None = Field(
        None,
        gt=0,
        le=10_000,
        description="The CI cost gate (`seedance cost-gate`): the release fails when the set's "
        "cost per 1,000 successful requests over the window (OpenCost allocation / Triton's request counter) is above "
        "this.",
    )
    service_type: Literal["ClusterIP", "internal-nlb"] = Field(
        "ClusterIP", description="ClusterIP, or an internal NLB (never internet-facing)."
    )
    canary: CanaryConfig | None = None

    @field_validator("image_version")
    @classmethod
    def _release(cls, value: str) -> str:
        return _pinned_release(value)

    @field_validator("publisher_principal_arns")
    @classmethod
    def _roles(cls, values: list[str]) -> list[str]:
        return all_match(values, IAM_ROLE_ARN, "an IAM role ARN")

    @property
    def namespace(self) -> str:
        return f"triton-{self.name}"

    @property
    def prefixes(self) -> list[str]:
        """The served prefixes: the stable set's, and its canary's."""
        return [self.model_prefix] + ([self.canary.model_prefix] if self.canary else [])

    @field_validator("client_namespaces")
    @classmethod
    def _namespace_names(cls, values: list[str]) -> list[str]:
        return all_match(values, _NAMESPACE, "a namespace name (lowercase letters, digits, hyphens; at most 63)")

    @field_validator("model_control_mode", "service_type", mode="before")
    @classmethod
    def _refused_with_the_reason(cls, value: object, info: ValidationInfo) -> object:
        assert info.field_name is not None  # a field validator's
        reason = _REFUSED[info.field_name].get(value) if isinstance(value, str) else None
        if reason:
            raise ValueError(reason)
        return value

    @property
    def memory(self) -> int:
        return self.memory_gib or int(self.cpu * 4)  # the source's 1 vCPU : 4 GiB
