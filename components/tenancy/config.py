"""The tenants slice of the stack config: one entry per application team. Pure."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from components.common.validation import IAM_ROLE_ARN, S3_BUCKET_NAME, FieldError, all_match
from seedance_client.pod_admission import quota_classes

NAME_PATTERN = r"[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?"
_PATTERNS = {
    "namespaces": (NAME_PATTERN, "a namespace name (lowercase letters, digits, hyphens)"),
    "principal_arns": (IAM_ROLE_ARN, "an IAM role ARN"),
    "publisher_principal_arns": (IAM_ROLE_ARN, "an IAM role ARN"),
    "data_buckets": (S3_BUCKET_NAME, "a bucket name"),
    "pools": (NAME_PATTERN, "a GPU node group name"),
}


KUEUE_VERSIONS = ("0.19.2",)  # charts the tests render from ../shared/charts; Kueue's own pins below


class QueuesConfig(BaseModel):
    """How teams share GPUs through Kueue (config `seedance-gpu:queues`; docs/capacity-decision.md)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        False,
        description="Install Kueue and declare the pools' flavors and the teams' queues. Off by default (a "
        "stack without teams that share GPUs needs none); every stack of this repository turns it on "
        "(docs/capacity-decision.md says what is deployed).",
    )
    kueue_version: str = Field(
        "0.19.2",
        description=f"Kueue's chart and image version (oci://registry.k8s.io/kueue/charts/kueue); one of "
        f"{', '.join(KUEUE_VERSIONS)}.",
    )
    gang_timeout_minutes: int = Field(
        10,
        ge=1,
        le=120,
        description="A job's pods must all be ready this long after admission, else Kueue evicts and requeues "
        "it whole (waitForPodsReady): a gang never holds part of its GPUs. Above the autoscaler's node "
        "provision time, so that new nodes can come.",
    )
    gang_requeues: int = Field(
        5, ge=0, le=100, description="Times a gang is requeued after such a timeout before Kueue deactivates it."
    )

    @field_validator("kueue_version")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if value not in KUEUE_VERSIONS:
            raise ValueError(f"{value} is not a Kueue release this version pins; allowed: {', '.join(KUEUE_VERSIONS)}")
        return value


class TenantConfig(BaseModel):
    """A team (config `seedance-gpu:tenants[]`): what it gets is in docs/onboarding.md."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=f"^{NAME_PATTERN}$", description="The team's name: its default namespace, its labels.")
    namespaces: list[str] = Field(
        [], max_length=10, description="The team's namespaces; default one named after the team."
    )
    principal_arns: list[str] = Field(
        min_length=1,
        max_length=20,
        description="The team's people's IAM roles: the "
        "platform's tenant role in its namespaces only (docs/onboarding.md), and the operator role of each set in "
        "`publishes` (promote, roll back, history; no model file). Never trusted to publish models, and never "
        "any team's CI role.",
    )
    publisher_principal_arns: list[str] = Field(
        [],
        max_length=5,
        description="The team's CI roles that publish the sets in `publishes` (each may assume "
        "those sets' publisher roles). Required when `publishes` names a set; never one of `principal_arns`: a "
        "published model runs as code in serving, so only reviewed pipelines publish.",
    )
    pools: list[str] = Field(
        [],
        max_length=20,
        description="GPU node groups the team's pods may run on (tolerate); "
        "default: every group of a workload class its `gpus` gives more than 0.",
    )
    gpus: dict[str, int] = Field(
        {},
        description="GPUs each of the team's namespaces may request at once, per "
        "workload class (batch, online); none: no GPU. With `queues.enabled`, the team's nominal quota in its "
        "class's Kueue cohort across all its namespaces, checked against what its pools run, and each namespace's "
        "batch quota is what Kueue may admit for the team (docs/capacity-decision.md).",
    )
    gpu_borrowing_limits: dict[str, int] = Field(
        {},
        description="With `queues.enabled`: GPUs per class the team may borrow beyond `gpus` from the cohort's idle "
        "quota, on each flavor of its pools (Kueue's limit is per flavor); default: no limit for batch, none for "
        "online (serving is never preempted to give GPUs back).",
    )
    gpu_lending_limits: dict[str, int] = Field(
        {},
        description="With `queues.enabled`: GPUs per class of the team's `gpus` the cohort may lend to others "
        "while idle; default: all.",
    )
    cpu: int = Field(64, ge=1, le=10_000, description="vCPUs the team's pods may request in all, per namespace.")
    memory_gib: int = Field(256, ge=1, le=100_000, description="Memory the team's pods may request, per namespace.")
    publishes: list[str] = Field([], description="Serving sets (serving[].name) whose models the team publishes.")
    data_buckets: list[str] = Field(
        [],
        max_length=20,
        description="The team's buckets in other accounts its pods read and write through the VPC's S3 endpoints.",
    )

    @field_validator("namespaces", "principal_arns", "publisher_principal_arns", "data_buckets", "pools")
    @classmethod
    def _names(cls, values: list[str], info: ValidationInfo) -> list[str]:
        assert info.field_name is not None  # a field validator's
        return all_match(values, *_PATTERNS[info.field_name])

    @field_validator("gpus", "gpu_borrowing_limits", "gpu_lending_limits")
    @classmethod
    def _classes(cls, values: dict[str, int]) -> dict[str, int]:
        for klass, count in values.items():
            if klass not in ("batch", "online") or not 0 <= count <= 10_000:
                raise ValueError(
                    f"{klass}: {count} is not a GPU count (0 to 10,000) of a workload class (batch, online)"
                )
        return values

    @model_validator(mode="after")
    def _publishers_are_pipelines(self) -> TenantConfig:
        if self.publishes and not self.publisher_principal_arns:
            raise FieldError(
                "publisher_principal_arns",
                [],
                f"is empty but the team publishes "
                f"{', '.join(self.publishes)}; allowed: the team's CI role(s), never its people's",
            )
        for index, arn in enumerate(self.publisher_principal_arns):
            if arn in self.principal_arns:
                raise FieldError(
                    f"publisher_principal_arns[{index}]",
                    arn,
                    "is also one of the team's "
                    "principal_arns (its people); allowed: a CI role only reviewed pipelines assume",
                )
        return self

    @model_validator(mode="after")
    def _lends_what_it_has(self) -> TenantConfig:
        for klass, count in sorted(self.gpu_lending_limits.items()):
            if count > self.gpus.get(klass, 0):
                raise FieldError(
                    f"gpu_lending_limits.{klass}",
                    count,
                    f"is more than the team's {self.gpus.get(klass, 0)} {klass} GPUs; allowed: 0 to gpus.{klass}",
                )
        return self

    @property
    def namespace_names(self) -> list[str]:
        return self.namespaces or [self.name]

    @property
    def priority_classes(self) -> list[str]:
        return quota_classes(self.gpus)


def check_tenants(tenants: list[TenantConfig], serving_sets: list[str], reserved: set[str]) -> None:
    """Across tenants: a namespace belongs to one team and to no platform component; a published set exists."""
    owner: dict[str, str] = {}
    named: set[str] = set()
    for index, tenant in enumerate(tenants):
        if tenant.name in named:  # its roles, quotas and cost label would be declared twice
            raise FieldError(
                f"tenants[{index}].name", tenant.name, "is another tenant's name; allowed: one entry per team"
            )
        named.add(tenant.name)
        for name in tenant.namespace_names:
            holder = "the platform" if name in reserved else f"team {owner[name]}" if name in owner else None
            if holder:
                raise FieldError(
                    f"tenants[{index}].namespaces", name, f"is already {holder}'s; allowed: a namespace no one else has"
                )
            owner[name] = tenant.name
        for name in tenant.publishes:
            if name not in serving_sets:
                raise FieldError(
                    f"tenants[{index}].publishes",
                    name,
                    f"names no serving set; this stack has: {', '.join(serving_sets) or 'none'}",
                )
