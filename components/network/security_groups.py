"""Security group rules the components share."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws


def https_from(
    name: str,
    security_group_id: pulumi.Input[str],
    cidr: str,
    description: str,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.vpc.SecurityGroupIngressRule:
    """TCP 443 into the group from one CIDR (interface endpoints, the Kubernetes API)."""
    return aws.vpc.SecurityGroupIngressRule(
        name,
        security_group_id=security_group_id,
        cidr_ipv4=cidr,
        ip_protocol="tcp",
        from_port=443,
        to_port=443,
        description=description,
        tags=dict(tags),
        opts=opts,
    )
