"""Carve a VPC CIDR into per-AZ private (node) and public (NAT) subnets. Pure."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


@dataclass(frozen=True)
class ZoneSubnets:
    zone: str
    private_cidr: str
    public_cidr: str


def plan_subnets(vpc_cidr: str, zones: list[str], private_prefix: int, public_prefix: int) -> list[ZoneSubnets]:
    """Private subnets from the start of the VPC range (under the VPC CNI every pod takes an
    address from them, so they are the large ones), then the small public subnets for NAT.

    Raises ValueError when the prefixes are inconsistent or the VPC range cannot hold them.
    """
    vpc = ipaddress.ip_network(vpc_cidr)
    if not vpc.prefixlen <= private_prefix <= public_prefix:
        raise ValueError(f"need VPC /{vpc.prefixlen} <= private /{private_prefix} <= public /{public_prefix}")
    private_size, public_size = 2 ** (32 - private_prefix), 2 ** (32 - public_prefix)
    needed = len(zones) * (private_size + public_size)
    # Public blocks start on a private-sized boundary, so they stay aligned to their own size.
    if needed > vpc.num_addresses:
        raise ValueError(
            f"{len(zones)} zones of /{private_prefix} private and /{public_prefix} public subnets "
            f"need {needed} addresses; {vpc_cidr} has {vpc.num_addresses}"
        )
    start = int(vpc.network_address)
    public_start = start + len(zones) * private_size
    return [
        ZoneSubnets(
            zone=zone,
            private_cidr=f"{ipaddress.ip_address(start + i * private_size)}/{private_prefix}",
            public_cidr=f"{ipaddress.ip_address(public_start + i * public_size)}/{public_prefix}",
        )
        for i, zone in enumerate(zones)
    ]
