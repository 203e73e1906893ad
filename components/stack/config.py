"""The whole stack's configuration, validated before any resource is declared.

One model serves both readers: the Pulumi program (values from `pulumi.Config`) and the
offline tools (values from `stacks/Pulumi.<env>.yaml`). A bad value raises `ConfigError`, one line
naming the key, the value and what is allowed; the program's edge (components/stack/program.py) turns
it into the engine's one-line error. Pure.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from components.capacity.config import CapacityConfig
from components.catalog.instance_types import gpu_instance_type, shared_network_layers
from components.catalog.regions import EKS_EXCLUDED_ZONE_IDS, regions
from components.cluster.config import ClusterConfig, SchedulingConfig
from components.common.validation import FieldError, all_match, clipped
from components.compute.config import GpuNodeGroupConfig, allocatable_gpus
from components.monitoring.config import MonitoringConfig
from components.network.config import EndpointsConfig, NetworkConfig
from components.network.egress import EgressTraffic, EndpointLayout
from components.network.subnets import plan_subnets
from components.pricing.prices import SnapshotPriceSource
from components.serving.capacity import USABLE_MEMORY
from components.serving.config import TritonServingConfig
from components.storage.config import StorageConfig
from components.tenancy.config import QueuesConfig, TenantConfig, check_tenants

PROJECT = "seedance-gpu"
REQUIRED_TAGS = ("team", "cost-center")
MAX_BUCKET_NAME = 63


class ConfigError(ValueError):
    """A stack configuration value is invalid; the message names the key, the value and what is allowed."""


class BudgetConfig(BaseModel):
    """Monthly spend the stack is planned against."""

    model_config = ConfigDict(extra="forbid")

    monthly_usd: float = Field(gt=0, le=10_000_000, description="Monthly budget in US dollars.")
    alert_emails: list[str] = Field(
        [],
        max_length=10,
        description="Who gets the 85 % and 95 % alerts by e-mail (subscribed to the stack's SNS topic).",
    )
    alert_topic_arns: list[str] = Field(
        [],
        max_length=1,
        description="An existing SNS topic that gets the alerts "
        "instead of the stack's own (an AWS Chatbot channel's, say; it must let "
        "budgets.amazonaws.com publish). AWS Budgets takes one SNS subscriber per "
        "notification: with one here the e-mails are the budget's own subscribers.",
    )
    filter_tag: str = Field(
        "cost-center", description="Cost-allocation tag the budget counts (its value in this stack)."
    )
    basis: Literal["worst_case", "expected"] = Field(
        "worst_case",
        description="What the budget rules judge the estimate by: worst_case (every spot unit at "
        "on-demand, as if spot were gone) or expected (spot at the price each group's plan expects).",
    )

    @field_validator("alert_emails")
    @classmethod
    def _emails(cls, values: list[str]) -> list[str]:
        return all_match(values, r"[^@\s]+@[^@\s]+\.[a-z]{2,}", "an e-mail address")

    @field_validator("alert_topic_arns")
    @classmethod
    def _topics(cls, values: list[str]) -> list[str]:
        return all_match(values, r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}", "an SNS topic ARN")

    @model_validator(mode="after")
    def _someone_is_told(self) -> BudgetConfig:
        # An SNS topic without a subscription delivers the 85 % and 95 % alerts to nobody.
        if not self.alert_emails and not self.alert_topic_arns:
            raise FieldError(
                "alert_emails",
                [],
                "a budget must reach someone; allowed: at least one e-mail, or "
                "an existing SNS topic in alert_topic_arns",
            )
        return self


class StackConfig(BaseModel):
    """Everything a stack is configured with (keys `seedance-gpu:<field>`, region `aws:region`)."""

    model_config = ConfigDict(extra="forbid")

    region: str = Field(description="AWS region (`aws:region`).")
    env: Literal["dev", "staging", "prod"] = Field(
        description="Environment; sets defaults, policies and the `env` tag."
    )
    tags: dict[str, str] = Field(
        description="Cost-allocation tags on every resource; must include team and cost-center."
    )
    budget: BudgetConfig
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)
    endpoints: EndpointsConfig = Field(default_factory=EndpointsConfig)
    egress_traffic: EgressTraffic = Field(
        default_factory=EgressTraffic, description="Monthly GB to AWS services, for the egress cost model."
    )
    capacity: CapacityConfig = Field(default_factory=CapacityConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    serving: list[TritonServingConfig] = Field([], max_length=20, description="Triton model sets on the online pool.")
    tenants: list[TenantConfig] = Field(
        [],
        max_length=100,
        description="Application teams: namespaces, access, quotas, network, publishing (docs/onboarding.md).",
    )
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)
    scheduling: SchedulingConfig = Field(default_factory=SchedulingConfig)
    queues: QueuesConfig = Field(default_factory=QueuesConfig)
    gpu_node_groups: list[GpuNodeGroupConfig] = Field(
        [], max_length=20, description="GPU node groups; their Spot/On-Demand/RI mix comes from the capacity decision."
    )

    @field_validator("region")
    @classmethod
    def _known_region(cls, value: str) -> str:
        # A region must plan offline: checkpoint sizing and the egress model price from the bundled snapshot.
        priced = sorted(set(regions()) & set(SnapshotPriceSource().document()["regions"]))
        if value not in priced:
            more = (
                f"; {value} has no bundled prices: `seedance prices refresh --region {value}` adds its EC2 "
                "prices (its network prices are added by hand to the snapshot, with their source)"
                if value in regions()
                else ""
            )
            raise ValueError(f"must be one of {', '.join(priced)}{more}")
        return value

    @field_validator("tags")
    @classmethod
    def _cost_tags(cls, tags: dict[str, str]) -> dict[str, str]:
        missing = [key for key in REQUIRED_TAGS if not tags.get(key)]
        if missing:
            raise ValueError(
                f"must include non-empty {', '.join(missing)} (required cost tags: {', '.join(REQUIRED_TAGS)})"
            )
        if "env" in tags:
            raise ValueError("must not set env: the env tag comes from seedance-gpu:env")
        for key, value in tags.items():
            # AWS tag limits: keys up to 128 characters, values up to 256; aws: is reserved.
            if not 1 <= len(key) <= 128 or key.lower().startswith("aws:") or len(value) > 256:
                raise ValueError(f"tag {key!r} breaks AWS tag rules (key 1-128 chars, not aws:*, value <= 256 chars)")
            if not re.fullmatch(r"[\w .:/=+\-@]*", key + value):
                raise ValueError(f"tag {key!r} has characters AWS does not allow in tags")
        return tags

    @model_validator(mode="after")
    def _network_fits_region(self) -> StackConfig:
        zones = regions()[self.region].zone_names
        if self.network.az_count > len(zones):
            raise FieldError(
                "network.az_count",
                self.network.az_count,
                f"{self.region} has {len(zones)} Availability Zones: allowed 2 to {len(zones)}",
            )
        try:
            plan_subnets(
                self.network.vpc_cidr,
                list(zones[: self.network.az_count]),
                self.network.private_subnet_prefix,
                self.network.public_subnet_prefix,
            )
        except ValueError as error:
            raise FieldError("network.vpc_cidr", self.network.vpc_cidr, str(error)) from None
        return self

    @model_validator(mode="after")
    def _service_range_outside_the_vpc(self) -> StackConfig:
        vpc, services = ipaddress.ip_network(self.network.vpc_cidr), ipaddress.ip_network(self.cluster.service_cidr)
        if vpc.overlaps(services):
            raise FieldError(
                "cluster.service_cidr",
                self.cluster.service_cidr,
                f"overlaps the VPC's {vpc}: EKS needs "
                "the Service range outside the VPC; allowed: a private range apart from it, such as "
                "172.20.0.0/16 for a 10.x VPC",
            )
        return self

    @model_validator(mode="after")
    def _bucket_names_fit(self) -> StackConfig:
        # The model bucket is `<cluster>-models-<12-digit account id>`: S3 allows 3 to 63 lowercase letters,
        # digits, dots and hyphens.
        longest = MAX_BUCKET_NAME - len(f"-models-{'0' * 12}")
        if not re.fullmatch(rf"[a-z0-9][a-z0-9-]{{0,{longest - 1}}}", self.cluster_name):
            raise FieldError(
                "cluster.name",
                self.cluster_name,
                f"names the model bucket <name>-models-<account id>; "
                f"allowed: lowercase letters, digits and hyphens, at most {longest} characters",
            )
        return self

    @model_validator(mode="after")
    def _deploy_path(self) -> StackConfig:
        # Checked here, not in ClusterConfig, so that a stack without a cluster key gets this message.
        if not self.cluster.public_endpoint_cidrs and not self.cluster.deployer_cidrs:
            raise FieldError(
                "cluster.deployer_cidrs",
                [],
                "the API endpoint is private and nothing may reach it, yet "
                "the same `pulumi up` installs Kubernetes objects; allowed: the private CIDRs of the "
                "runner (deployer_cidrs), or public CIDRs (public_endpoint_cidrs)",
            )
        return self

    @model_validator(mode="after")
    def _deployers_routed_back(self) -> StackConfig:
        # A rule on the API's security group is not a path: replies to a deployer outside the VPC need a
        # route, and the private route tables send everything else to the NAT gateway.
        outside = self.network.outside_vpc(self.cluster.deployer_cidrs)
        for index, cidr in enumerate(self.cluster.deployer_cidrs):
            if cidr in outside and self.network.transit_gateway_id is None:
                raise FieldError(
                    f"cluster.deployer_cidrs[{index}]",
                    cidr,
                    f"is outside the VPC ({self.network.vpc_cidr}) and nothing "
                    "routes back to it; allowed: set network.transit_gateway_id (the stack attaches "
                    "the VPC and routes it), a runner inside the VPC, or a first run through "
                    "public_endpoint_cidrs (docs/fresh-account.md)",
                )
        return self

    @model_validator(mode="after")
    def _budget_tag_exists(self) -> StackConfig:
        if self.budget.filter_tag not in self.resource_tags:
            raise FieldError(
                "budget.filter_tag",
                self.budget.filter_tag,
                f"must be one of the stack's tags: {', '.join(sorted(self.resource_tags))}",
            )
        return self

    @model_validator(mode="after")
    def _endpoints_fit(self) -> StackConfig:
        zones = self.endpoints.interface_az_count
        if zones is not None and zones > self.network.az_count:
            raise FieldError(
                "endpoints.interface_az_count",
                zones,
                f"the VPC has {self.network.az_count} private subnets: allowed 1 to {self.network.az_count}",
            )
        if self.s3_interface and self.endpoints.s3_interface_inbound_resolver_only and not self.endpoints.s3_gateway:
            raise FieldError(
                "endpoints.s3_gateway",
                False,
                "the S3 interface endpoint's inbound-resolver-only private "
                "DNS needs the S3 gateway endpoint: set s3_gateway true, or "
                "s3_interface_inbound_resolver_only false",
            )
        return self

    @property
    def s3_interface(self) -> bool:
        return self.endpoints.s3_interface if self.endpoints.s3_interface is not None else self.env != "dev"

    def endpoint_layout(self) -> EndpointLayout:
        interfaces = [
            *(["kms"] if self.endpoints.kms_interface else []),
            *(["s3"] if self.s3_interface else []),
            *self.endpoints.interface_services,
        ]
        return EndpointLayout(
            az_count=self.network.az_count,
            nat_gateways=self.network.az_count if self.network.nat_gateways == "per_az" else 1,
            s3_gateway=self.endpoints.s3_gateway,
            interface_services=tuple(interfaces),
            interface_az_count=self.endpoints.interface_az_count or self.network.az_count,
            s3_interface_inbound_only=self.endpoints.s3_interface_inbound_resolver_only,
        )

    @model_validator(mode="after")
    def _capacity_rules(self) -> StackConfig:
        if self.capacity.budget_breaker and self.env == "prod":
            raise FieldError("capacity.budget_breaker", True, "allowed in dev and staging only; prod keeps its caps")
        if self.capacity.source == "live" and self.env != "dev":
            raise FieldError(
                "capacity.source",
                "live",
                f"allowed in dev only; {self.env} deploys a reviewed lock (lock) or the snapshot",
            )
        names = [g.name for g in self.gpu_node_groups]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise FieldError(f"gpu_node_groups[{index}].name", name, "must be unique across the stack's groups")
        for index, group in enumerate(self.gpu_node_groups):
            reserved = [r.id for r in self.capacity.capacity_reservations if r.instance_type in group.instance_types]
            if group.placement_group and reserved:
                # The reservation holds capacity outside any placement group; a group's launches constrained to
                # one then fail with InsufficientInstanceCapacity while the reservation sits idle (AWS
                # ParallelCluster's PlacementGroupCapacityTypeValidator; terraform-aws-eks PR #3730).
                raise FieldError(
                    f"gpu_node_groups[{index}].placement_group",
                    True,
                    f"its types have On-Demand Capacity Reservations ({', '.join(reserved)}), which a cluster "
                    "placement group would keep it from using; allowed: false",
                )
        return self

    @model_validator(mode="after")
    def _tenants_fit(self) -> StackConfig:
        reserved = {
            "default",
            "kube-system",
            "kube-public",
            "kube-node-lease",
            "monitoring",
            "gpu-monitoring",
            "nvidia-device-plugin",
            self.storage.local.namespace,
            *(f"triton-{s.name}" for s in self.serving),
            *([self.storage.checkpoints.namespace] if self.storage.checkpoints else []),
        }
        check_tenants(self.tenants, [s.name for s in self.serving], reserved)
        platform = {arn: key for key, arn in self.cluster.principals()}
        people = {arn: tenant.name for tenant in self.tenants for arn in tenant.principal_arns}
        for index, serving in enumerate(self.serving):
            for role_index, arn in enumerate(serving.publisher_principal_arns):
                if arn in people:
                    raise FieldError(
                        f"serving[{index}].publisher_principal_arns[{role_index}]",
                        arn,
                        f"is team {people[arn]}'s people's role; allowed: a CI role only reviewed pipelines assume",
                    )
        pipelines = {arn: tenant.name for tenant in self.tenants for arn in tenant.publisher_principal_arns}
        groups = {g.name: g.workload_class for g in self.gpu_node_groups}
        for index, tenant in enumerate(self.tenants):
            for role_index, arn in enumerate(tenant.principal_arns):
                if arn in pipelines:  # people operate what serves; a pipeline that could would skip review
                    raise FieldError(
                        f"tenants[{index}].principal_arns[{role_index}]",
                        arn,
                        f"is team {pipelines[arn]}'s CI role (publisher_principal_arns); allowed: people's roles",
                    )
            for pool_index, pool in enumerate(tenant.pools):
                if groups.get(pool) not in tenant.priority_classes:
                    raise FieldError(
                        f"tenants[{index}].pools[{pool_index}]",
                        pool,
                        "is not a GPU group of a class the team has GPUs in; allowed: "
                        + (
                            ", ".join(g for g, k in groups.items() if k in tenant.priority_classes)
                            or "none (give the team GPUs first)"
                        ),
                    )
            for role_index, arn in enumerate(tenant.principal_arns):
                if arn in platform:  # EKS keeps one access entry per principal
                    raise FieldError(
                        f"tenants[{index}].principal_arns[{role_index}]",
                        arn,
                        f"is already in cluster.{platform[arn]}; allowed: a role of the team's own",
                    )
        return self

    @property
    def team_namespaces(self) -> list[str]:
        """Every namespace a team owns."""
        return [namespace for tenant in self.tenants for namespace in tenant.namespace_names]

    def operators_of(self, serving: TritonServingConfig) -> list[str]:
        """Who may assume a serving set's operator role (switch what serves, write no model file): the people
        of the teams that publish it, never a CI role (validated: no role is both)."""
        return list(dict.fromkeys(arn for t in self.tenants if serving.name in t.publishes for arn in t.principal_arns))

    @property
    def endpoints_with_tenants(self) -> EndpointsConfig:
        """The endpoints with the teams' data buckets admitted by the S3 endpoints' policy."""
        buckets = [*self.endpoints.s3_bucket_names, *(b for t in self.tenants for b in t.data_buckets)]
        return self.endpoints.model_copy(update={"s3_bucket_names": list(dict.fromkeys(buckets))})

    def serving_component(self, serving: TritonServingConfig) -> str:
        """The name of a serving set's component, which names its publisher role (publisher_role_name)."""
        return f"{self.cluster_name}-triton-{serving.name}"

    def publishers_of(self, serving: TritonServingConfig) -> list[str]:
        """Who may assume a serving set's publisher role: its configured principals and the CI roles of the
        teams that publish it, never a team's people (a published model runs as code in serving)."""
        teams = [arn for t in self.tenants if serving.name in t.publishes for arn in t.publisher_principal_arns]
        return list(dict.fromkeys([*serving.publisher_principal_arns, *teams]))

    @property
    def app_namespaces(self) -> list[str]:
        """Where applications run (the teams', Triton's, training's): the admins' namespaces."""
        return list(
            dict.fromkeys(
                [
                    *(n for t in self.tenants for n in t.namespace_names),
                    *(s.namespace for s in self.serving),
                    *([self.storage.checkpoints.namespace] if self.storage.checkpoints else []),
                ]
            )
        )

    @property
    def gang_pools(self) -> list[str]:
        """With queues, the multi-node (EFA) pools, whose flavors admit a job once the autoscaler took all its
        nodes as one ProvisioningRequest (components/tenancy/queues.py: `gang_check`)."""
        return [g.name for g in self.gpu_node_groups if g.efa] if self.queues.enabled else []

    @property
    def gang_topologies(self) -> dict[str, int]:
        """The multi-node pools whose types all report the same instance topology, with its depth: their
        flavors place a job's pods by network position (Kueue's Topology Aware Scheduling)."""
        groups = {g.name: g for g in self.gpu_node_groups}
        depths = {pool: shared_network_layers(groups[pool].instance_types) for pool in self.gang_pools}
        return {pool: depth for pool, depth in depths.items() if depth}

    def tenant_pools(self, tenant: TenantConfig) -> list[str]:
        """The GPU groups a team's pods may tolerate: its own list, or every group of a class it has GPUs in."""
        return tenant.pools or [g.name for g in self.gpu_node_groups if g.workload_class in tenant.priority_classes]

    def tenant_pool_classes(self, tenant: TenantConfig) -> dict[str, str]:
        """Each GPU group a team's pods may tolerate, with its workload class."""
        classes = {g.name: g.workload_class for g in self.gpu_node_groups}
        return {pool: classes[pool] for pool in self.tenant_pools(tenant)}

    def client_sets(self, tenant: TenantConfig) -> dict[str, list[str]]:
        """Per team namespace, the Triton namespaces whose inference ports it may call (it is their client)."""
        return {
            name: [f"triton-{s.name}" for s in self.serving if name in s.client_namespaces]
            for name in tenant.namespace_names
        }

    @model_validator(mode="after")
    def _history_has_a_node_in_its_zone(self) -> StackConfig:
        # An EBS volume stays in its zone, and the autoscaler cannot grow a multi-zone group into a given
        # zone: only a system node in every zone (the group balances across them) keeps Prometheus placeable.
        nodes, zones = self.cluster.system_nodes.min_size, self.network.az_count
        if self.monitoring.persistent and nodes < zones:
            raise FieldError(
                "cluster.system_nodes.min_size",
                nodes,
                f"Prometheus's history volume needs a system "
                f"node in each of the {zones} zones; allowed: >= {zones} (network.az_count), or "
                "monitoring.persistent: false",
            )
        return self

    @model_validator(mode="after")
    def _storage_fits(self) -> StackConfig:
        checkpoints = self.storage.checkpoints
        if checkpoints is not None:
            names = [g.name for g in self.gpu_node_groups]
            if checkpoints.node_group not in names:
                raise FieldError(
                    "storage.checkpoints.node_group",
                    checkpoints.node_group,
                    f"must name a GPU node group; this stack has: {', '.join(names) or 'none'}",
                )
            # A job loses up to one interval of work per interruption; at the class's whole tolerance a
            # single spot notice costs all it may lose, and two in a row more.
            group = next(g for g in self.gpu_node_groups if g.name == checkpoints.node_group)
            tolerance = group.workload().interruption_tolerance_seconds
            interval = checkpoints.profile.interval_seconds
            if interval > tolerance // 2:
                raise FieldError(
                    "storage.checkpoints.profile.interval_seconds",
                    interval,
                    f"is more than half the {group.workload_class} class's interruption tolerance "
                    f"({tolerance} s); allowed: 30 to {tolerance // 2}",
                )
            # A pre-provisioned volume lives in one zone and its PV pins the pods there: the autoscaler must be
            # able to start a node of their group in that zone, which a group spread over zones cannot promise.
            if checkpoints.preprovisioned_volumes and not group.single_zone:
                index = names.index(group.name)
                raise FieldError(
                    "storage.checkpoints.node_group",
                    checkpoints.node_group,
                    f"pre-provisioned volumes live in the stack's first zone, and group {group.name} "
                    f"spreads over every zone, so a node started from zero may land where no volume "
                    f"is; allowed: a group with single_zone: true (gpu_node_groups[{index}] or a "
                    "dedicated one), or preprovisioned_volumes: 0 (volumes made where the pod lands)",
                )
        return self

    @model_validator(mode="after")
    def _serving_fits(self) -> StackConfig:
        groups = {g.name: g for g in self.gpu_node_groups}
        for index, serving in enumerate(self.serving):
            key = f"serving[{index}]"
            if [s.name for s in self.serving].count(serving.name) > 1:
                raise FieldError(f"{key}.name", serving.name, "must be unique across the stack's model sets")
            group = groups.get(serving.node_group)
            if group is None or group.workload_class != "online":
                online = [g.name for g in self.gpu_node_groups if g.workload_class == "online"]
                raise FieldError(
                    f"{key}.node_group",
                    serving.node_group,
                    f"must name an online GPU node group; this stack has: {', '.join(online) or 'none'}",
                )
            types = [gpu_instance_type(t) for t in group.instance_types]
            fewest_type, fewest = min(allocatable_gpus(group).items(), key=lambda item: item[1])
            if serving.gpus > fewest:
                raise FieldError(
                    f"{key}.gpus",
                    serving.gpus,
                    f"group {group.name} may launch {fewest_type} with {fewest} GPU(s); allowed: 1 to {fewest}",
                )
            smallest = min(types, key=lambda t: (t.vcpus, t.memory_gib))
            # The kubelet, system daemons and the device plugin keep about a vCPU and 15 % of memory.
            if serving.cpu > smallest.vcpus - 1:
                raise FieldError(
                    f"{key}.cpu",
                    serving.cpu,
                    f"{smallest.name} has {smallest.vcpus} vCPUs; allowed: <= {smallest.vcpus - 1} per replica",
                )
            if serving.memory > smallest.memory_gib * USABLE_MEMORY:
                raise FieldError(
                    f"{key}.memory_gib",
                    serving.memory,
                    f"{smallest.name} has {smallest.memory_gib} GiB; "
                    f"allowed: <= {int(smallest.memory_gib * USABLE_MEMORY)} per replica",
                )
            warm_pool = self.warm_pool(serving)
            if warm_pool > serving.max_replicas:
                raise FieldError(
                    f"{key}.warm_pool", warm_pool, f"the warm pool is larger than max_replicas ({serving.max_replicas})"
                )
        return self

    def warm_pool(self, serving: TritonServingConfig) -> int:
        """Minimum ready replicas: configured, else 1 in dev and 2 elsewhere (the source's pre-warmed pool)."""
        return serving.warm_pool or (1 if self.env == "dev" else 2)

    @property
    def local_storage_groups(self) -> list[str]:
        return [g.name for g in self.gpu_node_groups if g.local_storage]

    @property
    def cluster_name(self) -> str:
        return self.cluster.name or f"seedance-{self.env}"

    def model_bucket_name(self, account_id: str) -> str:
        """Bucket names are global: the account keeps the stack's unique."""
        return f"{self.cluster_name}-models-{account_id}"

    @property
    def resource_tags(self) -> dict[str, str]:
        """The cost tags every resource carries."""
        return {**self.tags, "env": self.env}

    def usable_zones(self, available: Mapping[str, str]) -> list[str]:
        """The names of the first `az_count` zones, by zone ID, that the account can use now (`available`:
        name -> ID) and EKS accepts for control-plane subnets. Chosen by ID: names map to other physical
        zones in every account, IDs do not, so every account of the organisation uses the same zones."""
        usable = sorted((zone_id, name) for name, zone_id in available.items() if zone_id not in EKS_EXCLUDED_ZONE_IDS)
        if len(usable) < self.network.az_count:
            raise ConfigError(
                f"invalid config {PROJECT}:network.az_count = {self.network.az_count}: this account has "
                f"{len(usable)} zones in {self.region} that EKS accepts "
                f"({', '.join(f'{n} ({i})' for i, n in usable)}); allowed: 2 to {len(usable)}"
            )
        return [name for _zone_id, name in usable[: self.network.az_count]]


def _config_key(location: tuple[Any, ...]) -> str:
    if not location:
        return PROJECT
    head, *rest = location
    key = "aws:region" if head == "region" else f"{PROJECT}:{head}"
    for part in rest:
        key += f"[{part}]" if isinstance(part, int) else f".{part}"
    return key


def _field_at(location: tuple[Any, ...]) -> tuple[FieldInfo | None, Any]:
    """The field at a config location and the type of its value (list elements: the element type)."""
    model: Any = StackConfig
    info = None
    for part in location:
        if isinstance(part, int):
            model = next(iter(get_args(model)), None)
            continue
        fields = getattr(model, "model_fields", None)
        if fields is None or part not in fields:
            return None, None
        info = fields[part]
        model = info.annotation
    return info, model


def _allowed(error: ErrorDetails) -> str:
    """What the user may write instead, from pydantic's error context and the field's bounds."""
    context = error.get("ctx") or {}
    kind = error["type"]
    if kind == "extra_forbidden":
        _parent, model = _field_at(error["loc"][:-1])
        known = sorted(getattr(model, "model_fields", {}))
        if model is StackConfig:
            known = [k for k in known if k != "region"]
        return f"unknown key; allowed keys here: {', '.join(known)}"
    if kind == "missing":
        return "required key is missing"
    if kind == "literal_error":
        return f"allowed: {context.get('expected')}"
    info, _type = _field_at(error["loc"])
    bounds = {}
    for item in info.metadata if info else []:
        for name in ("ge", "gt", "le", "lt", "min_length", "max_length"):
            if getattr(item, name, None) is not None:
                bounds[name] = getattr(item, name)
    symbols = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "min_length": "length >=", "max_length": "length <="}
    message: str = error["msg"].removeprefix("Value error, ")
    if bounds and kind != "value_error":
        message += "; allowed: " + " and ".join(f"{symbols[k]} {v}" for k, v in bounds.items())
    if info and info.description and kind != "value_error":
        message += f" ({info.description})"
    return message


def _location(dotted: str) -> tuple[Any, ...]:
    """`a.b[2].c` -> ("a", "b", 2, "c")"""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"\.|\[|\]\.?", dotted) if p)


SHOWN_VALUE_LIMIT = 200


def _format_error(error: ValidationError) -> str:
    errors = error.errors()
    first = errors[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, FieldError):
        location = tuple(first["loc"]) + _location(cause.field)
        key, value, allowed = _config_key(location), cause.value, cause.allowed
    else:
        key, value, allowed = _config_key(first["loc"]), first.get("input"), _allowed(first)
    shown = "(missing)" if first["type"] == "missing" else clipped(json.dumps(value, default=str), SHOWN_VALUE_LIMIT)
    more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
    return f"invalid config {key} = {shown}: {allowed}{more}"


ENVIRONMENTS = ("dev", "staging", "prod")


def check_stack_env(config: StackConfig, stack: str) -> None:
    """A stack named after an environment is that environment: its policies, caps and defaults follow
    `env`, so a prod stack planned with a dev file would be held to dev's rules."""
    if stack in ENVIRONMENTS and config.env != stack:
        raise ConfigError(
            f"invalid config {PROJECT}:env = {json.dumps(config.env)}: the stack is {stack!r}; "
            f"allowed: {json.dumps(stack)} (a stack named after an environment is that environment)"
        )


def field_error(error: FieldError) -> ConfigError:
    """A stack-level check's finding (a derived value that does not fit) as the one-line config error."""
    key = _config_key(_location(error.field))
    return ConfigError(f"invalid config {key} = {json.dumps(error.value, default=str)}: {error.allowed}")


def parse_stack_config(region: Any, project_values: dict[str, Any]) -> StackConfig:
    """Validate raw values (project keys without their namespace) into a `StackConfig`."""
    if "region" in project_values:
        raise ConfigError(f"invalid config {PROJECT}:region: unknown key; the region is set as aws:region")
    try:
        return StackConfig.model_validate({"region": region, **project_values}, strict=True)
    except ValidationError as error:
        raise ConfigError(_format_error(error)) from None


def _decode(value: str) -> Any:
    # Pulumi delivers structured values as JSON text and scalars as plain strings.
    if value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def parse_config_values(values: dict[str, str]) -> StackConfig:
    """Validate the namespaced string values Pulumi hands a program (`aws:region`, `seedance-gpu:*`)."""
    prefix = f"{PROJECT}:"
    project_values = {k[len(prefix) :]: _decode(v) for k, v in values.items() if k.startswith(prefix)}
    return parse_stack_config(values.get("aws:region"), project_values)
