"""The serving slice of the stack config: Triton model sets and their canaries. Pure."""

from __future__ import annotations

import re
from typing import Literal
from pydantic import BaseModel, ConfigDict, Field, field_validator


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
