"""The platform contract: everything a stack exports for application teams, typed and versioned.

The program exports exactly these fields (stack outputs of the same names); consumers read them
through `seedance_client.reference.PlatformReference`. Versioning: the major changes when a
field is removed or changes meaning; the minor when one is added. A consumer built for 1.x works
with any producer 1.y where y >= x: every model ignores fields it does not know (a newer producer's),
and every field added after 1.0 has a default (a consumer asking for 1.0 reads a 1.0 producer).
`reports` is for people: its shape may change within a version, so consumers never parse it.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CONTRACT_VERSION = "1.5"
SECRET_FIELDS = ("kubeconfig",)  # read apart, so the rest of the contract does not turn secret
# What a team's objects name: the GPU resource its containers ask for, and the label a Job names its queue by.
GPU_RESOURCE = "nvidia.com/gpu"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# What the platform's queue guards refuse of a team's Jobs and batch GPU pods (components/tenancy/queues.py):
# an elastic Job (Kueue gates its pods instead of suspending it), and a grace longer than a spot notice.
ELASTIC_JOB_ANNOTATION = "kueue.x-k8s.io/elastic-job"
SPOT_NOTICE_SECONDS = 120


class GpuPool(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    workload_class: str
    node_selector: dict[str, str] = Field(description="Labels a pod selects to run on the pool.")
    tolerations: list[dict[str, str]] = Field(description="Tolerations a pod needs for the pool's GPU taint.")
    instance_types: list[str]
    gpus_per_node: dict[str, int] = Field(description="GPUs of each instance type the pool may launch.")
    # 1.1
    gpu_models: dict[str, str] = Field({}, description="The GPU model of each instance type (NVIDIA's name).")
    gpu_memory_gib: dict[str, int] = Field({}, description="Memory of one GPU of each instance type, GiB.")
    # 1.2
    zones: list[str] = Field(
        [],
        description="Where the pool launches. A pool of one zone keeps a job with a "
        "zonal volume (a checkpoint claim) schedulable after an interruption: its nodes come back "
        "in the volume's zone.",
    )

    @property
    def single_zone(self) -> str | None:
        """The pool's one zone, when it has one (1.2; None for an older producer or a multi-zone pool)."""
        return self.zones[0] if len(self.zones) == 1 else None

    @property
    def max_gpus_per_pod(self) -> int:
        """The most GPUs one pod can ask and still fit on any node the pool launches."""
        return min(self.gpus_per_node.values())


class ClaimPrice(BaseModel):
    """A claim's monthly cost on one class: the class fixes its performance, so the cost is a part per GiB
    and a part the performance bills (gp3 above its included IOPS, io2's IOPS tiers) whatever the size."""

    model_config = ConfigDict(extra="ignore")

    usd_per_gib_month: float = Field(ge=0)
    usd_per_month: float = Field(ge=0, description="The performance's part, the same for any size.")

    def monthly_usd(self, size_gib: float) -> float:
        return round(size_gib * self.usd_per_gib_month + self.usd_per_month, 2)


class StorageClasses(BaseModel):
    model_config = ConfigDict(extra="ignore")

    checkpoint: str | None = Field(description="EBS class for training checkpoints (io2 or gp3, sized).")
    local: str | None = Field(description="Local NVMe class (WaitForFirstConsumer).")
    # 1.1
    training_namespace: str | None = Field(
        None,
        description="Where training jobs and their claims run (Pod "
        "Security baseline, default deny but DNS, its own pods and HTTPS).",
    )
    checkpoint_interval_seconds: int | None = Field(
        None,
        description="How often a trainer should checkpoint: at most half the batch class's interruption tolerance.",
    )
    volumes: dict[str, dict[str, str]] = Field(
        {},
        description="What a claim of each EBS class gets (type, iops, "
        "throughput): what `seedance check` prices a team's claims at.",
    )
    # 1.3
    claim_prices: dict[str, ClaimPrice] = Field(
        {},
        description="What a claim of each EBS class costs a month, in "
        "the platform's region (its own cost model): a team's `seedance "
        "check` prices its claims with these, without the platform.",
    )


class TritonEndpoint(BaseModel):
    model_config = ConfigDict(extra="ignore")

    http: str
    grpc: str
    metrics: str
    # 1.1: what a team needs to publish models (docs/publishing-models.md) and to call the set
    namespace: str = Field("", description="The serving set's namespace.")
    model_repository: str = Field("", description="s3://bucket/prefix of the stable set.")
    canary_model_repository: str | None = Field(None, description="s3://bucket/prefix of the canary, if any.")
    publisher_role_arn: str | None = Field(None, description="The only role that may write the set's models.")
    client_namespaces: list[str] = Field([], description="Namespaces whose pods may call the inference ports.")
    # 1.5
    operator_role_arn: str | None = Field(
        None,
        description="The role the publishing teams' people assume to promote, roll back and read the history "
        "(it writes each model's config and history, never a model file); None when no team publishes the set.",
    )


class CheckpointClaim(BaseModel):
    """A pre-provisioned checkpoint volume's claim: a pod that mounts it runs in its zone."""

    model_config = ConfigDict(extra="ignore")

    name: str
    namespace: str
    zone: str
    size_gib: int
    node_group: str = Field("", description="The GPU group its pods run on (the volume's node affinity names it).")


class Tenant(BaseModel):
    """A team as the platform set it up (1.1)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    namespaces: list[str]
    gpus: dict[str, int] = Field({}, description="GPUs the team may request at once, per workload class.")
    publishes: list[str] = Field([], description="Serving sets whose models the team publishes.")
    # 1.5
    pools: list[str] | None = Field(
        None,
        description="The GPU pools the team's pods may tolerate (the platform's admission refuses any other). "
        "None from a producer before 1.5: every pool of a class the team has GPUs in, the platform's default.",
    )


class PlatformContract(BaseModel):
    model_config = ConfigDict(extra="ignore")

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
    reports: dict[str, Any] = Field(
        {},
        description="For people (capacity, egress, sizing, account steps, serving "
        "capacity); its shape may change within a version.",
    )
    # 1.1
    checkpoint_claims: list[CheckpointClaim] = Field([], description="Pre-provisioned checkpoint claims.")
    tenants: list[Tenant] = Field([], description="The teams on the platform.")
    priority_classes: dict[str, str] = Field(
        {},
        description="The PriorityClass a pod of each workload class names "
        "(serving preempts batch; a team's GPU quota per class counts by it).",
    )
    cost_label_keys: list[str] = Field(
        [],
        description="Labels every team object carries for cost allocation "
        "(pods, claims): the budget and the cost reports group by them.",
    )
    # 1.4
    queues: dict[str, str] = Field(
        {},
        description=f"When the platform queues GPUs (Kueue): the LocalQueue a team's Job names per workload class "
        f"(label {QUEUE_LABEL}); a Job naming none is refused, and a batch pod asking for GPUs must be a Job's. "
        "Empty: no queues; a team's GPUs are its namespaces' quotas.",
    )

    # 1.5
    stack: str = Field(
        "",
        description="The platform stack these outputs are, <project>/<stack>: a team's offline check refuses a "
        "contract file of another stack than the one its program reads.",
    )

    def pool(self, name: str) -> GpuPool:
        for pool in self.gpu_pools:
            if pool.name == name:
                return pool
        raise KeyError(f"the platform has no GPU pool {name!r}; it has: {', '.join(p.name for p in self.gpu_pools)}")


class ContractVersionError(Exception):
    """The producer's contract version cannot serve this consumer, or its outputs do not match it."""


def read_contract(values: dict[str, Any], stack: str, requires: str = CONTRACT_VERSION) -> PlatformContract:
    """A platform stack's outputs as the contract, its version checked first. A stack reference answers None
    for an output the producer does not export (an older minor's): the field is absent, and the model's
    default for it applies. The secret fields are read apart and stand masked here."""
    try:
        check_compatible(values.get("contract_version"), requires)
    except ContractVersionError as error:
        raise ContractVersionError(f"{stack}: {error}") from None
    present = {name: value for name, value in values.items() if value is not None}
    try:
        return PlatformContract.model_validate({**present, **{f: "[secret]" for f in SECRET_FIELDS}})
    except ValueError as error:
        raise ContractVersionError(
            f"{stack}: its outputs do not match contract {values.get('contract_version')}: {error}".replace("\n", " ")
        ) from None


# ASCII digits only: int() also reads other scripts' digits ("1.٣" would pass as 1.3).
MAJOR_MINOR = re.compile(r"[0-9]+\.[0-9]+")


def check_compatible(producer: Any, consumer: str = CONTRACT_VERSION) -> None:  # the output as exported
    if not isinstance(producer, str) or not MAJOR_MINOR.fullmatch(producer):
        raise ContractVersionError(f"the platform stack exports contract_version {producer!r}, not major.minor")
    produced = tuple(int(p) for p in producer.split("."))
    needed = tuple(int(p) for p in consumer.split("."))
    if produced[0] != needed[0] or produced[1] < needed[1]:
        raise ContractVersionError(
            f"the platform stack exports contract {producer}; this program needs {needed[0]}.{needed[1]} or a later "
            f"{needed[0]}.x: upgrade seedance-infra-client here to match, or ask the platform team to deploy it"
        )
