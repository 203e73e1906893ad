"""The cluster slice of the stack config: the control plane, system nodes, the autoscaler and the
descheduler. Pure."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from components.cluster.versions import VERSIONS
from components.common.log_retention import valid_retention
from components.common.validation import IAM_ROLE_ARN, FieldError, all_match, parse_cidr

AddonName = Literal["vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent", "aws-ebs-csi-driver"]


class SystemNodesConfig(BaseModel):
    """A small on-demand managed node group for cluster services (CoreDNS, CSI controllers, adapters)."""

    model_config = ConfigDict(extra="forbid")

    instance_types: list[str] = Field(["m7i.large"], min_length=1, description="EC2 types for system nodes.")
    min_size: int = Field(
        3,
        ge=1,
        le=10,
        description="Fewest system nodes: one in each zone (the default three), "
        "for CoreDNS and for Prometheus's history volume, which stays in its zone.",
    )
    desired_size: int = Field(3, ge=1, le=10, description="System nodes at creation; the autoscaler owns it later.")
    max_size: int = Field(4, ge=1, le=20, description="Most system nodes.")
    disk_size_gib: int = Field(50, ge=20, le=500, description="gp3 root volume per system node, GiB.")

    @field_validator("instance_types")
    @classmethod
    def _instance_type_names(cls, values: list[str]) -> list[str]:
        return all_match(values, r"[a-z][a-z0-9-]*\.[a-z0-9]+", "an EC2 instance type name such as m7i.large")

    @model_validator(mode="after")
    def _sizes_ordered(self) -> SystemNodesConfig:
        if not self.min_size <= self.desired_size <= self.max_size:
            raise ValueError(
                f"need min_size <= desired_size <= max_size, got {self.min_size}, {self.desired_size}, {self.max_size}"
            )
        return self


class ClusterAutoscalerConfig(BaseModel):
    """The cluster autoscaler (config `seedance-gpu:cluster.autoscaler`)."""

    model_config = ConfigDict(extra="forbid")

    chart_version: str | None = Field(
        None,
        pattern=r"^\d+\.\d+\.\d+$",
        description="cluster-autoscaler Helm chart; default: the one the version table gives the cluster's minor.",
    )
    image_tag: str | None = Field(
        None,
        pattern=r"^v\d+\.\d+\.\d+$",
        description="Autoscaler image; default: the release matching the cluster's minor "
        f"({', '.join(f'{v.minor}: {v.autoscaler_image}' for v in VERSIONS.values())}).",
    )
    scale_down_unneeded_minutes: int = Field(
        10, ge=1, le=1440, description="How long a node stays unneeded before it is removed."
    )
    max_node_provision_minutes: int = Field(
        15, ge=5, le=60, description="How long a new node may take to register (GPU AMIs boot slowly)."
    )

    def image_for(self, kubernetes_version: str) -> str:
        return self.image_tag or VERSIONS[kubernetes_version].autoscaler_image

    def chart_for(self, kubernetes_version: str) -> str:
        return self.chart_version or VERSIONS[kubernetes_version].autoscaler_chart


# RFC 1918, RFC 6598 shared (carrier NAT), loopback and link-local: addresses no request on the internet has.
NOT_INTERNET_SOURCES = tuple(
    ipaddress.IPv4Network(block)
    for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16")
)
PRINCIPAL_LISTS = ("break_glass_principal_arns", "admin_principal_arns", "viewer_principal_arns")


class ClusterConfig(BaseModel):
    """The EKS control plane of one stack."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        None, description="EKS cluster name; default seedance-<env>.", pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$"
    )
    kubernetes_version: str = Field(
        "1.35",
        description="EKS Kubernetes version: one of the version table's "
        f"({', '.join(VERSIONS)}; components/cluster/versions.py).",
    )
    public_endpoint_cidrs: list[str] = Field(
        [], description="CIDRs allowed to reach the API server publicly; empty keeps the endpoint private only."
    )
    deployer_cidrs: list[str] = Field(
        [],
        description="Private CIDRs that `pulumi up` runs from (a runner network routed to this VPC by peering, "
        "VPN or Transit Gateway, or a subnet of this VPC): allowed to the private API endpoint on 443. "
        "The same run installs Kubernetes objects, so a stack needs these or public_endpoint_cidrs.",
    )
    admin_principal_arns: list[str] = Field(
        [],
        description="IAM roles or users of the day-to-day administrators: EKS's admin access policy "
        "(AmazonEKSAdminPolicy) in the application namespaces (teams', Triton's, training's) and "
        "AmazonEKSViewPolicy elsewhere; not cluster-admin.",
    )
    viewer_principal_arns: list[str] = Field(
        [], description="IAM roles or users that may read the cluster (AmazonEKSViewPolicy; no Secrets)."
    )
    deployer_role_arn: str | None = Field(
        None,
        pattern=f"^{IAM_ROLE_ARN}$",
        description="The role `pulumi up` runs as, "
        "given cluster-admin by an access entry of its own; default: the role of whoever runs the program (set it "
        "when previews run as another, read-only role, or they show the entry changing).",
    )
    break_glass_principal_arns: list[str] = Field(
        [],
        description="IAM roles or users given cluster-admin (AmazonEKSClusterAdminPolicy) for emergencies; "
        "assuming them should page someone. The deployer gets it by its own entry.",
    )
    control_plane_logs: list[Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]] = Field(
        ["api", "audit", "authenticator"], description="Control-plane log types sent to CloudWatch."
    )
    log_retention_days: int = Field(30, description="Retention of the control-plane log group, days.")
    control_plane_log_gb_month: float = Field(
        10.0,
        ge=0,
        le=100_000,
        description="Control-plane log ingestion assumed for the estimate, GB per month (audit logs dominate).",
    )
    system_nodes: SystemNodesConfig = Field(default_factory=SystemNodesConfig)
    addon_versions: dict[AddonName, str] = Field(
        {}, description="Pinned add-on versions; an add-on left out gets EKS's default for the cluster version."
    )
    device_plugin_version: str = Field(
        "0.17.1", pattern=r"^\d+\.\d+\.\d+$", description="NVIDIA k8s-device-plugin Helm chart version."
    )
    node_termination_handler_version: str = Field(
        "0.27.6", pattern=r"^\d+\.\d+\.\d+$", description="aws-node-termination-handler Helm chart version."
    )
    service_cidr: str = Field(
        "172.20.0.0/16", description="Kubernetes Service range; fixed at creation, outside the VPC."
    )
    autoscaler: ClusterAutoscalerConfig = Field(default_factory=ClusterAutoscalerConfig)

    @field_validator("service_cidr")
    @classmethod
    def _service_range(cls, value: str) -> str:
        network = parse_cidr(value, "172.20.0.0/16")
        if not network.is_private or not 12 <= network.prefixlen <= 24:
            raise ValueError("must be a private range from /12 to /24 (EKS's limits)")
        return str(network)

    @field_validator("kubernetes_version")
    @classmethod
    def _supported_version(cls, value: str) -> str:
        if value not in VERSIONS:
            # Older minors are past extended support (EKS refuses them); newer ones are not in the table yet.
            raise ValueError(
                "allowed: "
                + ", ".join(
                    f'"{v.minor}" (standard support to {v.end_of_standard:%Y-%m-%d}, '
                    f"extended to {v.end_of_extended:%Y-%m-%d})"
                    for v in VERSIONS.values()
                )
            )
        return value

    @field_validator("public_endpoint_cidrs")
    @classmethod
    def _no_open_endpoint(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                network = ipaddress.IPv4Network(value)
            except ValueError:
                raise ValueError(f"{value!r} is not an IPv4 CIDR") from None
            if network.prefixlen == 0:
                raise ValueError("0.0.0.0/0 would expose the API server to the internet; list your CIDRs")
            if any(network.overlaps(block) for block in NOT_INTERNET_SOURCES):
                # The public endpoint sees the address a request leaves its network from (a NAT's public one):
                # a private range here admits no one, and its owner meant the private endpoint.
                raise ValueError(
                    f"{value} is not an internet address range (private, shared, loopback or "
                    "link-local): the private endpoint takes those, in deployer_cidrs"
                )
        return values

    @field_validator("deployer_cidrs")
    @classmethod
    def _private_deployers(cls, values: list[str]) -> list[str]:
        for value in values:
            network = parse_cidr(value, "10.100.0.0/24")
            if not network.is_private or network.prefixlen < 8:
                raise ValueError(
                    f"{value} must be a private range of /8 or smaller: the private endpoint "
                    "is reached over the VPC's routes (public CIDRs go in public_endpoint_cidrs)"
                )
        return values

    @field_validator("admin_principal_arns", "viewer_principal_arns", "break_glass_principal_arns")
    @classmethod
    def _iam_principals(cls, values: list[str]) -> list[str]:
        return all_match(values, r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+", "an IAM role or user ARN")

    @model_validator(mode="after")
    def _one_access_level_each(self) -> ClusterConfig:
        # EKS keeps one access entry per principal: two lists naming it would declare it twice.
        seen: dict[str, str] = {}
        for key in PRINCIPAL_LISTS:
            for index, arn in enumerate(getattr(self, key)):
                if arn in seen:
                    raise FieldError(
                        f"{key}[{index}]",
                        arn,
                        f"is already in cluster.{seen[arn]}; allowed: one access level per principal",
                    )
                seen[arn] = key
        return self

    @property
    def api_service_ip(self) -> str:
        """The `kubernetes` Service's address: the first of the Service range (what pods dial for the API)."""
        return str(ipaddress.ip_network(self.service_cidr)[1])

    def principals(self) -> list[tuple[str, str]]:
        """(config key, ARN) of every principal given an access entry."""
        return [(key, arn) for key in PRINCIPAL_LISTS for arn in getattr(self, key)]

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return valid_retention(value)


class SchedulingConfig(BaseModel):
    """Cluster-wide scheduling helpers (config `seedance-gpu:scheduling`)."""

    model_config = ConfigDict(extra="forbid")

    descheduler: bool = Field(False, description="Run the Descheduler with the source's settings.")
    descheduler_chart_version: str | None = Field(
        None,
        pattern=r"^\d+\.\d+\.\d+$",
        description="Its Helm chart version; default: the release matching the "
        f"cluster's minor ({', '.join(f'{v.minor}: {v.descheduler_chart}' for v in VERSIONS.values())}).",
    )
    cpu_threshold: int = Field(35, ge=1, le=100, description="Nodes below this CPU % are under-used (source: 35).")
    memory_threshold: int = Field(
        45, ge=1, le=100, description="Nodes below this memory % are under-used (source: 45)."
    )
    pod_lifetime_hours: int = Field(72, ge=1, le=8760, description="Pods older than this are evicted (source: 72).")
    lifetime_exempt_namespaces: list[str] = Field(
        ["kube-system"],
        description="Namespaces whose pods may run longer; the stack's training namespace "
        "(storage.checkpoints.namespace) is always among them.",
    )


DESCHEDULING_INTERVAL = "10m"


def target_thresholds(config: SchedulingConfig) -> dict[str, int]:
    """Above these, LowNodeUtilization moves pods off a node (well above the under-use thresholds)."""
    return {"cpu": min(100, config.cpu_threshold * 2), "memory": min(100, config.memory_threshold + 30)}


def rebalance_summary(config: SchedulingConfig) -> str:
    """What runs when node utilisation spreads (the alert says it)."""
    if not config.descheduler:
        return (
            "nothing automatic: scheduling.descheduler is off in this stack; the cluster autoscaler removes "
            "under-used nodes once their pods fit elsewhere"
        )
    return (
        f"the descheduler's LowNodeUtilization, every {DESCHEDULING_INTERVAL}: pods leave nodes above "
        f"{target_thresholds(config)['cpu']}% CPU for nodes below {config.cpu_threshold}% (and the cluster "
        "autoscaler removes nodes left under-used)"
    )


def chart_version(config: SchedulingConfig, kubernetes_version: str) -> str:
    return config.descheduler_chart_version or VERSIONS[kubernetes_version].descheduler_chart
