"""What a month of AWS-bound traffic costs through NAT, and through the stack's VPC endpoints. Pure.

Paths, with the prices of the bundled snapshot:
- through NAT: NAT processing per GB, plus cross-AZ transfer (charged on both sides) for the share
  of traffic that leaves its zone to reach a NAT gateway in another one (a single NAT gateway);
- S3 through the gateway endpoint: free, in every zone;
- through an interface endpoint: per GB processed, plus the endpoint's AZ-hours whatever it
  carries, plus cross-AZ transfer for zones without an endpoint network interface;
- image pulls from ECR fetch their layers from S3, so they ride the S3 path; pulls from registries
  outside AWS (Docker Hub, nvcr.io) always go through NAT.
NAT gateway hours are shown apart: endpoints do not remove NAT, which the nodes still need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from components.common.tables import table
from components.pricing.prices import HOURS_PER_MONTH, UnitPrice

# Which interface endpoint carries each kind of traffic (S3 is handled apart: gateway first).
TRAFFIC_ENDPOINTS = {"kms_gb": "kms", "sts_gb": "sts", "logs_gb": "logs", "ecr_gb": "ecr.dkr"}


class EgressTraffic(BaseModel):
    """Monthly GB from the nodes to AWS services and registries (config `egress_traffic`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    s3_gb: float = Field(0, ge=0, le=1e9, description="Reads and writes of S3 objects (datasets, checkpoints, models).")
    ecr_image_pull_gb: float = Field(0, ge=0, le=1e9, description="Image layers pulled from ECR (served from S3).")
    public_image_pull_gb: float = Field(0, ge=0, le=1e9, description="Images pulled from registries outside AWS.")
    kms_gb: float = Field(0, ge=0, le=1e9, description="KMS API traffic.")
    sts_gb: float = Field(0, ge=0, le=1e9, description="STS API traffic (IRSA token exchanges).")
    logs_gb: float = Field(0, ge=0, le=1e9, description="CloudWatch Logs ingestion from the nodes.")
    ecr_gb: float = Field(0, ge=0, le=1e9, description="ECR registry calls and manifests (layers come from S3).")


@dataclass(frozen=True)
class EndpointLayout:
    """The endpoints a stack has, as the plan declares them."""

    az_count: int
    nat_gateways: int
    s3_gateway: bool
    interface_services: tuple[str, ...]  # e.g. ("kms", "s3", "ecr.api", "ecr.dkr")
    interface_az_count: int
    s3_interface_inbound_only: bool = True  # in-VPC S3 traffic keeps using the gateway


@dataclass(frozen=True)
class EgressLine:
    traffic: str
    gb: float
    via_nat_usd: float
    via_endpoints_usd: float
    path: str
    endpoint: str | None = None  # the interface endpoint that carries it, if any
    through_nat: bool = False  # this stack sends it through its NAT gateways


@dataclass
class EgressReport:
    lines: list[EgressLine]
    endpoint_hours_usd: dict[str, float]
    nat_hours_usd: float
    notes: list[str] = field(default_factory=list)
    price_sources: list[str] = field(default_factory=list)

    @property
    def nat_gb(self) -> float:
        """What this stack's NAT gateways process a month."""
        return sum(line.gb for line in self.lines if line.through_nat)

    @property
    def via_nat_usd(self) -> float:
        return sum(line.via_nat_usd for line in self.lines)

    @property
    def with_endpoints_usd(self) -> float:
        return sum(line.via_endpoints_usd for line in self.lines) + sum(self.endpoint_hours_usd.values())

    @property
    def saving_usd(self) -> float:
        return self.via_nat_usd - self.with_endpoints_usd


def _cross_az_share(serving_zones: int, az_count: int) -> float:
    """Share of evenly spread traffic whose zone has no local gateway or endpoint interface."""
    return max(0, az_count - serving_zones) / az_count


def egress_report(traffic: EgressTraffic, layout: EndpointLayout, prices: dict[str, UnitPrice]) -> EgressReport:
    nat_gb = prices["nat_gateway_gb"].usd
    endpoint_gb = prices["interface_endpoint_gb"].usd
    cross_az = 2 * prices["cross_az_gb_each_way"].usd  # charged leaving one zone and entering the other
    nat_cross = _cross_az_share(layout.nat_gateways, layout.az_count)
    endpoint_cross = _cross_az_share(layout.interface_az_count, layout.az_count)

    # Each line in cents, so that the totals and the notes add up to what the table shows.
    def via_nat(gb: float) -> float:
        return round(gb * (nat_gb + nat_cross * cross_az), 2)

    def via_interface(gb: float) -> float:
        return round(gb * (endpoint_gb + endpoint_cross * cross_az), 2)

    lines = []
    s3_gb = traffic.s3_gb + traffic.ecr_image_pull_gb
    if layout.s3_gateway:
        s3_path, s3_cost = "S3 gateway endpoint (free)", 0.0
    elif "s3" in layout.interface_services:
        s3_path, s3_cost = "S3 interface endpoint", via_interface(s3_gb)
    else:
        s3_path, s3_cost = "NAT", via_nat(s3_gb)
    s3_endpoint = "s3" if s3_path == "S3 interface endpoint" else None
    lines.append(
        EgressLine(
            "S3 (incl. ECR image layers)", s3_gb, via_nat(s3_gb), s3_cost, s3_path, s3_endpoint, s3_path == "NAT"
        )
    )
    lines.append(
        EgressLine(
            "image pulls from outside AWS",
            traffic.public_image_pull_gb,
            via_nat(traffic.public_image_pull_gb),
            via_nat(traffic.public_image_pull_gb),
            "NAT (no endpoint serves them; mirror into ECR to save this)",
            through_nat=True,
        )
    )
    for name, service in TRAFFIC_ENDPOINTS.items():
        gb = getattr(traffic, name)
        if service in layout.interface_services:
            lines.append(
                EgressLine(service, gb, via_nat(gb), via_interface(gb), f"{service} interface endpoint", service)
            )
        else:
            lines.append(EgressLine(service, gb, via_nat(gb), via_nat(gb), "NAT (no endpoint)", through_nat=True))

    hour = round(prices["interface_endpoint_az_hour"].usd * HOURS_PER_MONTH * layout.interface_az_count, 2)
    endpoint_hours = {service: hour for service in layout.interface_services}
    notes = []
    if "s3" in layout.interface_services and layout.s3_gateway and layout.s3_interface_inbound_only:
        notes.append(
            f"the S3 interface endpoint costs ${hour:,.2f}/month and carries no in-VPC traffic (the free "
            "gateway does): it pays only for on-premises or DNS-resolver clients; it costs more than it saves here"
        )
    for line in lines:
        saved = line.via_nat_usd - line.via_endpoints_usd
        if line.endpoint in endpoint_hours and saved < endpoint_hours[line.endpoint]:
            notes.append(
                f"the {line.endpoint} interface endpoint saves ${saved:,.2f} in traffic but costs "
                f"${endpoint_hours[line.endpoint]:,.2f}/month in AZ-hours (kept for keeping the calls private)"
            )
    nat_hours = layout.nat_gateways * HOURS_PER_MONTH * prices["nat_gateway_hour"].usd
    sources = sorted({f"{p.source}, {p.observed_at:%Y-%m-%d}" for p in prices.values()})
    return EgressReport(lines, endpoint_hours, nat_hours, notes, sources)


def report_lines(report: EgressReport) -> list[str]:
    """The report as a table and its notes, for `seedance plan` and the stack's reports."""
    rows = [
        [line.traffic, round(line.gb), line.via_nat_usd, line.via_endpoints_usd, line.path] for line in report.lines
    ]
    rows += [[f"{service} endpoint AZ-hours", None, 0.0, usd, ""] for service, usd in report.endpoint_hours_usd.items()]
    rows.append(
        ["total", None, report.via_nat_usd, report.with_endpoints_usd, f"saving ${report.saving_usd:,.2f}/month"]
    )
    lines = table(["traffic", "GB/month", "via NAT $", "this stack $", "path"], rows)
    lines.append(f"NAT gateway hours (kept either way): ${report.nat_hours_usd:,.2f}/month")
    lines += [f"note: {note}" for note in report.notes]
    lines += [f"prices: {source}" for source in report.price_sources]
    return [f"  {line}" for line in lines]
