"""The platform contract: everything a stack exports for application teams, typed and versioned.

The program exports exactly these fields (stack outputs of the same names); consumers read them
through `components.contract.reference.PlatformReference`. Versioning: the major changes when a
field is removed or changes meaning; the minor when one is added. A consumer built for 1.x works
with any producer 1.y where y >= x.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CONTRACT_VERSION = "1.0"


class GpuPool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    workload_class: str
    node_selector: dict[str, str] = Field(description="Labels a pod selects to run on the pool.")
    tolerations: list[dict[str, str]] = Field(description="Tolerations a pod needs for the pool's GPU taint.")
    instance_types: list[str]
    gpus_per_node: dict[str, int] = Field(description="GPUs of each instance type the pool may launch.")

    @property
    def max_gpus_per_pod(self) -> int:
        """The most GPUs one pod can ask and still fit on any node the pool launches."""
        return min(self.gpus_per_node.values())


class StorageClasses(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checkpoint: str | None = Field(description="EBS class for training checkpoints (io2 or gp3, sized).")
    local: str | None = Field(description="Local NVMe class (WaitForFirstConsumer).")


class TritonEndpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    http: str
    grpc: str
    metrics: str


class PlatformReports(BaseModel):
    """Operational reports for people, not for consumers' logic: they may change within a version."""

    model_config = ConfigDict(extra="forbid")

    capacity: dict[str, Any]
    egress: dict[str, Any]
    checkpoint_sizing: list[str]
    account_steps: list[str] = Field(description="What AWS requires outside `pulumi up`, with how to do it.")
    serving_capacity: list[str] = Field(description="Pods the Triton autoscalers may ask for against what each "
                                                    "online group runs at its maximum (a markdown table).")


class PlatformContract(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contract_version: str = Field(description="major.minor of this contract.")
    region: str
    vpc_id: str
    private_subnet_ids: list[str]
    cluster_name: str
    cluster_endpoint: str
    kubeconfig: str = Field(description="Secret: authenticates with `aws eks get-token`.")
    oidc_provider_arn: str
    kms_key_arn: str
    model_repository_bucket: str
    gpu_pools: list[GpuPool]
    storage_classes: StorageClasses
    triton_endpoints: dict[str, TritonEndpoint]
    endpoint_ids: dict[str, str]
    reports: PlatformReports

    def pool(self, name: str) -> GpuPool:
        for pool in self.gpu_pools:
            if pool.name == name:
                return pool
        raise KeyError(f"the platform has no GPU pool {name!r}; it has: {', '.join(p.name for p in self.gpu_pools)}")


class ContractVersionError(Exception):
    """The producer's contract version cannot serve this consumer."""


def check_compatible(producer: str, consumer: str = CONTRACT_VERSION) -> None:
    try:
        produced = tuple(int(p) for p in producer.split("."))
        needed = tuple(int(p) for p in consumer.split("."))
    except (AttributeError, ValueError):
        raise ContractVersionError(f"the platform stack exports contract_version {producer!r}, not major.minor") from None
    if produced[0] != needed[0] or produced[1] < needed[1]:
        raise ContractVersionError(
            f"the platform stack exports contract {producer}; this program needs {needed[0]}.{needed[1]} or a later "
            f"{needed[0]}.x: upgrade seedance-infra here to match, or ask the platform team to deploy it")
