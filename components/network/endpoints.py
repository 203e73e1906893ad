"""`PrivateEndpoints`: S3 and KMS (and optionally more) VPC endpoints, so AWS-bound traffic never
pays NAT processing or crosses zones to reach a NAT gateway."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.common.iam import account_endpoint_policy, kms_endpoint_policy, s3_endpoint_policy, sts_endpoint_policy
from components.network.config import EndpointsConfig
from components.network.security_groups import https_from


class PrivateEndpoints(pulumi.ComponentResource):
    endpoint_ids: pulumi.Output[dict]

    def __init__(
        self,
        name: str,
        config: EndpointsConfig,
        *,
        s3_interface: bool,
        region: str,
        vpc_id: pulumi.Input[str],
        vpc_cidr: str,
        private_subnet_ids: pulumi.Output[list[str]],
        private_route_table_ids: pulumi.Input[list[str]],
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:network:PrivateEndpoints", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(tags)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        account = aws.get_caller_identity_output(opts=invoke).account_id
        partition = aws.get_partition_output(opts=invoke).partition
        ids: dict[str, pulumi.Output[str]] = {}

        def service_name(service: str) -> str:
            return f"com.amazonaws.{region}.{service}"

        s3_policy = pulumi.Output.all(partition, account).apply(
            lambda v: json.dumps(
                s3_endpoint_policy(v[0], v[1], region, config.s3_bucket_names, config.s3_public_read_buckets)
            )
        )
        gateway = None
        if config.s3_gateway:
            gateway = aws.ec2.VpcEndpoint(
                f"{name}-s3-gateway",
                vpc_id=vpc_id,
                service_name=service_name("s3"),
                vpc_endpoint_type="Gateway",
                route_table_ids=private_route_table_ids,
                policy=s3_policy,
                tags={**tags, "Name": f"{name}-s3-gateway"},
                opts=child,
            )
            ids["s3_gateway"] = gateway.id

        interfaces = []
        if config.kms_interface:
            kms_policy = pulumi.Output.all(kms_key_arn, account).apply(
                lambda v: json.dumps(kms_endpoint_policy(v[0], v[1]))
            )
            interfaces.append(("kms", kms_policy))
        policies = {"sts": sts_endpoint_policy}  # the others: this account's principals only

        def endpoint_policy(service: str) -> pulumi.Output[str]:
            return account.apply(lambda a: json.dumps(policies.get(service, account_endpoint_policy)(a)))

        interfaces += [(service, endpoint_policy(service)) for service in config.interface_services]
        if interfaces or s3_interface:
            ids.update(
                self._interface_endpoints(
                    name,
                    config,
                    interfaces,
                    s3_interface,
                    s3_policy,
                    gateway,
                    service_name,
                    vpc_id,
                    vpc_cidr,
                    private_subnet_ids,
                    tags,
                )
            )
        self.endpoint_ids = pulumi.Output.all(**ids)
        self.register_outputs({"endpoint_ids": self.endpoint_ids})

    def _interface_endpoints(
        self,
        name,
        config,
        interfaces,
        s3_interface,
        s3_policy,
        gateway,
        service_name,
        vpc_id,
        vpc_cidr,
        private_subnet_ids,
        tags,
    ) -> dict[str, pulumi.Output[str]]:
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-interface-endpoints",
            vpc_id=vpc_id,
            description="HTTPS from inside the VPC to its interface endpoints",
            tags={**tags, "Name": f"{name}-interface-endpoints"},
            opts=child,
        )
        https_from(f"{name}-https-from-vpc", group.id, vpc_cidr, "HTTPS from the VPC only", tags, child)
        zones = config.interface_az_count
        subnets = private_subnet_ids.apply(lambda all_ids: all_ids[:zones] if zones else all_ids)

        def interface(service: str, policy, *, depends_on=(), dns_options=None) -> aws.ec2.VpcEndpoint:
            return aws.ec2.VpcEndpoint(
                f"{name}-{service.replace('.', '-')}",
                vpc_id=vpc_id,
                service_name=service_name(service),
                vpc_endpoint_type="Interface",
                private_dns_enabled=True,
                dns_options=dns_options,
                subnet_ids=subnets,
                security_group_ids=[group.id],
                policy=policy,
                tags={**tags, "Name": f"{name}-{service}"},
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)),
            )

        ids = {service: interface(service, policy).id for service, policy in interfaces}
        if s3_interface:
            # Private DNS on an S3 interface endpoint needs the gateway endpoint to exist first.
            ids["s3_interface"] = interface(
                "s3",
                s3_policy,
                depends_on=[gateway] if gateway else [],
                dns_options=aws.ec2.VpcEndpointDnsOptionsArgs(
                    private_dns_only_for_inbound_resolver_endpoint=config.s3_interface_inbound_resolver_only
                ),
            ).id
        return ids
