"""The network slice of the stack config: the VPC and its private endpoints. Pure."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from components.common.log_retention import valid_retention
from components.common.validation import S3_BUCKET_NAME, all_match, parse_cidr

InterfaceService = Literal["ecr.api", "ecr.dkr", "sts", "ec2", "logs", "sqs"]


class NetworkConfig(BaseModel):
    """Network layout of one stack."""

    model_config = ConfigDict(extra="forbid")

    vpc_cidr: str = Field("10.0.0.0/16", description="IPv4 range of the VPC, private (RFC 1918), /16 to /24.")
    az_count: int = Field(3, ge=2, le=6, description="Availability Zones to spread subnets over (EKS needs 2).")
    nat_gateways: Literal["single", "per_az"] = Field(
        "per_az", description="One NAT gateway for all zones (cheap, one zone's outage cuts egress) or one per zone."
    )
    private_subnet_prefix: int = Field(19, ge=16, le=24, description="Prefix length of each private (node) subnet.")
    public_subnet_prefix: int = Field(24, ge=20, le=28, description="Prefix length of each public (NAT) subnet.")
    transit_gateway_id: str | None = Field(
        None,
        pattern=r"^tgw-[0-9a-zA-Z]{8,17}$",
        description="A Transit Gateway the deployer's network reaches: the "
        "stack attaches the VPC to it and routes every deployer CIDR outside the VPC through it, from every private "
        "route table, in the same run (the VPC cannot be attached before the run that creates it).",
    )
    flow_logs: Literal["reject", "all", "off"] = Field(
        "reject",
        description="VPC flow logs to CloudWatch Logs: reject logs rejected traffic VPC-wide and all "
        "traffic of the NAT gateways' subnets (what leaves for the internet), at a fraction of "
        "the ingestion cost of all traffic on GPU-sized S3 transfers; all; or off.",
    )
    flow_log_retention_days: int = Field(30, description="Retention of the flow log group, days (a CloudWatch value).")
    flow_log_gb_month: float = Field(
        5.0,
        ge=0,
        le=100_000,
        description="Flow-log ingestion assumed for the estimate, "
        "GB per month (rejects only are small; all traffic is far more).",
    )

    def outside_vpc(self, cidrs: list[str]) -> list[str]:
        """The networks a route must carry back to: those not inside the VPC itself (IPv4, as both are)."""
        vpc = ipaddress.IPv4Network(self.vpc_cidr)
        return [cidr for cidr in cidrs if not ipaddress.IPv4Network(cidr).subnet_of(vpc)]

    @field_validator("flow_log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return valid_retention(value)

    @field_validator("vpc_cidr")
    @classmethod
    def _private_range(cls, value: str) -> str:
        network = parse_cidr(value, "10.0.0.0/16")
        if not 16 <= network.prefixlen <= 24:
            raise ValueError("prefix length must be between /16 and /24 (the VPC limits)")
        if not network.is_private:
            raise ValueError("must be a private (RFC 1918) range")
        return str(network)


class EndpointsConfig(BaseModel):
    """VPC endpoints of one stack (config `seedance-gpu:endpoints`)."""

    model_config = ConfigDict(extra="forbid")

    s3_gateway: bool = Field(True, description="S3 gateway endpoint on every private route table (free).")
    s3_interface: bool | None = Field(
        None, description="S3 interface endpoint with private DNS; default on in staging and prod, off in dev."
    )
    s3_interface_inbound_resolver_only: bool = Field(
        True,
        description="Private DNS of the S3 interface endpoint answers only Route 53 inbound-resolver clients "
        "(on-premises), so in-VPC S3 traffic keeps using the free gateway. Needs s3_gateway.",
    )
    kms_interface: bool = Field(True, description="KMS interface endpoint with private DNS.")
    interface_services: list[InterfaceService] = Field(
        [], description="Further interface endpoints for a private cluster (image pulls and API calls off NAT)."
    )
    interface_az_count: int | None = Field(
        None, ge=1, le=6, description="Zones that get interface endpoint network interfaces; default every zone."
    )
    s3_bucket_names: list[str] = Field(
        [],
        description="Buckets of other accounts this account's principals may read and write through the S3 "
        "endpoints (this account's own buckets are always reachable by its principals).",
    )
    s3_public_read_buckets: list[str] = Field(
        [],
        description="Third-party buckets the nodes read anonymously through the S3 gateway, besides ECR, "
        "registry.k8s.io and the Amazon Linux repositories (e.g. a registry's blob store).",
    )

    @field_validator("interface_services")
    @classmethod
    def _unique(cls, values: list[str]) -> list[str]:
        if len(set(values)) != len(values):
            raise ValueError("lists a service twice")
        return values

    @field_validator("s3_bucket_names", "s3_public_read_buckets")
    @classmethod
    def _bucket_names(cls, values: list[str]) -> list[str]:
        return all_match(values, S3_BUCKET_NAME, "an S3 bucket name")
