"""`Network`: a VPC over N Availability Zones with private node subnets and NAT egress."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.common.iam import flow_log_delivery_policy, service_assume_role_policy
from components.network.config import NetworkConfig
from components.network.subnets import plan_subnets
from components.plan.resources import EXPECTED_GB_TAG


class Network(pulumi.ComponentResource):
    """Private subnets (no public IPs) for nodes, public subnets only for NAT gateways."""

    vpc_id: pulumi.Output[str]
    vpc_cidr: str
    zones: list[str]
    private_subnet_ids: pulumi.Output[list[str]]
    private_route_table_ids: pulumi.Output[list[str]]

    def __init__(
        self,
        name: str,
        config: NetworkConfig,
        *,
        zones: list[str],
        cluster_name: str,
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        nat_gb_month: float = 0.0,
        deployer_cidrs: list[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`nat_gb_month`: the data each NAT gateway is expected to process a month (the egress model's).
        `deployer_cidrs`: networks outside the VPC that `pulumi up` runs from; routed through the
        configured Transit Gateway."""
        super().__init__("seedance:network:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        layout = plan_subnets(config.vpc_cidr, zones, config.private_subnet_prefix, config.public_subnet_prefix)
        cluster_tag = {f"kubernetes.io/cluster/{cluster_name}": "shared"}

        vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=config.vpc_cidr,
            enable_dns_support=True,
            enable_dns_hostnames=True,  # needed for private DNS on interface endpoints
            tags={**tags, "Name": f"{name}-vpc"},
            opts=child,
        )
        # The default security group allows all traffic between members: strip it of every rule.
        aws.ec2.DefaultSecurityGroup(f"{name}-default-sg", vpc_id=vpc.id, tags=dict(tags), opts=child)
        igw = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc.id, tags={**tags, "Name": f"{name}-igw"}, opts=child)

        public_rt = aws.ec2.RouteTable(
            f"{name}-public-rt",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags={**tags, "Name": f"{name}-public"},
            opts=child,
        )
        nat_ids: list[pulumi.Output[str]] = []
        nat_subnets: dict[str, aws.ec2.Subnet] = {}  # zone -> the public subnet its NAT gateway is in
        private_subnets: list[aws.ec2.Subnet] = []
        private_rts: list[aws.ec2.RouteTable] = []
        for index, zone in enumerate(layout):
            public = aws.ec2.Subnet(
                f"{name}-public-{zone.zone}",
                vpc_id=vpc.id,
                availability_zone=zone.zone,
                cidr_block=zone.public_cidr,
                map_public_ip_on_launch=False,  # only the NAT gateways' Elastic IPs are public
                tags={**tags, **cluster_tag, "Name": f"{name}-public-{zone.zone}", "kubernetes.io/role/elb": "1"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zone.zone}", subnet_id=public.id, route_table_id=public_rt.id, opts=child
            )
            if config.nat_gateways == "per_az" or index == 0:
                eip = aws.ec2.Eip(f"{name}-nat-{zone.zone}", domain="vpc", tags=dict(tags), opts=child)
                nat = aws.ec2.NatGateway(
                    f"{name}-nat-{zone.zone}",
                    allocation_id=eip.allocation_id,
                    subnet_id=public.id,
                    tags={**tags, "Name": f"{name}-nat-{zone.zone}", EXPECTED_GB_TAG: f"{nat_gb_month:g}"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[igw]),
                )
                nat_ids.append(nat.id)
                nat_subnets[zone.zone] = public

            private = aws.ec2.Subnet(
                f"{name}-private-{zone.zone}",
                vpc_id=vpc.id,
                availability_zone=zone.zone,
                cidr_block=zone.private_cidr,
                map_public_ip_on_launch=False,
                tags={
                    **tags,
                    **cluster_tag,
                    "Name": f"{name}-private-{zone.zone}",
                    "kubernetes.io/role/internal-elb": "1",
                },
                opts=child,
            )
            # One private route table per zone even with a single NAT: endpoints attach to each,
            # and moving to per-zone NAT later only changes a route.
            # Routes are resources of their own, never inline: an inline list owns the table and would
            # remove every route added beside it (the deploy path's, the endpoints').
            private_rt = aws.ec2.RouteTable(
                f"{name}-private-rt-{zone.zone}",
                vpc_id=vpc.id,
                tags={**tags, "Name": f"{name}-private-{zone.zone}"},
                opts=child,
            )
            aws.ec2.Route(
                f"{name}-private-{zone.zone}-default",
                route_table_id=private_rt.id,
                destination_cidr_block="0.0.0.0/0",
                nat_gateway_id=nat_ids[-1],
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone.zone}", subnet_id=private.id, route_table_id=private_rt.id, opts=child
            )
            private_subnets.append(private)
            private_rts.append(private_rt)

        if config.flow_logs != "off":
            self._flow_logs(name, config, vpc.id, nat_subnets, kms_key_arn, tags)
        self.deploy_path = self._deploy_path(
            name, config, vpc, private_subnets, [z.zone for z in layout], private_rts, deployer_cidrs or [], tags
        )
        self.vpc_id = vpc.id
        self.vpc_cidr = config.vpc_cidr
        self.zones = [z.zone for z in layout]
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private_subnets])
        self.private_route_table_ids = pulumi.Output.all(*[rt.id for rt in private_rts])
        self.register_outputs(
            {
                "vpc_id": self.vpc_id,
                "private_subnet_ids": self.private_subnet_ids,
                "private_route_table_ids": self.private_route_table_ids,
            }
        )

    def _deploy_path(
        self,
        name: str,
        config: NetworkConfig,
        vpc: aws.ec2.Vpc,
        subnets: list[aws.ec2.Subnet],
        zones: list[str],
        route_tables: list[aws.ec2.RouteTable],
        deployer_cidrs: list[str],
        tags: Mapping[str, str],
    ) -> list[pulumi.Resource]:
        """The way back from every private route table to every deployer network outside the VPC: the VPC's
        Transit Gateway attachment and one route per table and network. What the Kubernetes provider
        waits for: without it the private API answers nobody."""
        outside = config.outside_vpc(deployer_cidrs)
        if not outside or config.transit_gateway_id is None:
            return []
        attachment = aws.ec2transitgateway.VpcAttachment(
            f"{name}-tgw",
            transit_gateway_id=config.transit_gateway_id,
            vpc_id=vpc.id,
            subnet_ids=[s.id for s in subnets],
            tags={**tags, "Name": f"{name}-tgw"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        routes = [
            aws.ec2.Route(
                f"{name}-private-{zone}-to-deployer-{n}",
                route_table_id=table.id,
                destination_cidr_block=cidr,
                transit_gateway_id=config.transit_gateway_id,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[attachment]),
            )
            for zone, table in zip(zones, route_tables)
            for n, cidr in enumerate(outside)
        ]
        return [attachment, *routes]

    def _flow_logs(
        self,
        name: str,
        config: NetworkConfig,
        vpc_id: pulumi.Output[str],
        nat_subnets: dict[str, aws.ec2.Subnet],
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
    ) -> None:
        """Flow logs into an encrypted log group with a retention, delivered by a role that may write
        to that group only. With rejects only VPC-wide, the NAT gateways' subnets log all their traffic:
        what leaves for the internet is seen, at a fraction of all the VPC's traffic (S3 goes through
        the gateway endpoint, not NAT)."""
        child = pulumi.ResourceOptions(parent=self)
        group = aws.cloudwatch.LogGroup(
            f"{name}-flow-logs",
            name=f"/aws/vpc/{name}/flow-logs",
            retention_in_days=config.flow_log_retention_days,
            kms_key_id=kms_key_arn,
            tags={**tags, EXPECTED_GB_TAG: f"{config.flow_log_gb_month:g}"},
            opts=child,
        )
        # The VPC guide's confused-deputy conditions; the flow log's ID is unknown before it exists.
        account_region = group.arn.apply(lambda arn: arn.split(":"))
        role = aws.iam.Role(
            f"{name}-flow-logs-role",
            tags=dict(tags),
            opts=child,
            assume_role_policy=account_region.apply(
                lambda a: json.dumps(
                    service_assume_role_policy(
                        "vpc-flow-logs.amazonaws.com", a[4], f"arn:{a[1]}:ec2:{a[3]}:{a[4]}:vpc-flow-log/*"
                    )
                )
            ),
        )
        aws.iam.RolePolicy(
            f"{name}-flow-logs-delivery",
            role=role.id,
            opts=child,
            policy=group.arn.apply(lambda arn: json.dumps(flow_log_delivery_policy(arn))),
        )
        aws.ec2.FlowLog(
            f"{name}-flow-log",
            vpc_id=vpc_id,
            traffic_type=config.flow_logs.upper(),
            log_destination_type="cloud-watch-logs",
            log_destination=group.arn,
            iam_role_arn=role.arn,
            max_aggregation_interval=600,
            tags={**tags, "Name": f"{name}-flow-log"},
            opts=child,
        )
        if config.flow_logs == "reject":
            for zone, subnet in nat_subnets.items():
                aws.ec2.FlowLog(
                    f"{name}-public-{zone}-flow-log",
                    subnet_id=subnet.id,
                    traffic_type="ALL",
                    log_destination_type="cloud-watch-logs",
                    log_destination=group.arn,
                    iam_role_arn=role.arn,
                    max_aggregation_interval=600,
                    tags={**tags, "Name": f"{name}-public-{zone}-flow-log"},
                    opts=child,
                )
