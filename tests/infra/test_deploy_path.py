"""The deployer reaches the private API on the first run: every private route table routes back to every
deployer network outside the VPC (through the stack's Transit Gateway attachment), routes are resources
of their own (an inline list would remove the others), and the Kubernetes provider waits for them."""

import ipaddress

from seedance.cli import main
from tests.stacks import bad_stack, stack_config

ROUTE, TABLE = "aws:ec2/route:Route", "aws:ec2/routeTable:RouteTable"


def test_every_private_route_table_routes_back_to_every_deployer(stack_plan):
    config = stack_config(stack_plan.stack)
    vpc = ipaddress.ip_network(config.network.vpc_cidr)
    outside = [c for c in config.cluster.deployer_cidrs if not ipaddress.ip_network(c).subnet_of(vpc)]
    tables = [t for t in stack_plan.of_type(TABLE) if "-private-rt-" in t.name]
    routes = stack_plan.of_type(ROUTE)
    assert tables and all(not t.inputs.get("routes") for t in tables)  # no inline routes to overwrite others
    for table in tables:
        mine = [r for r in routes if r.inputs["routeTableId"] == table.id]
        assert any(r.inputs["destinationCidrBlock"] == "0.0.0.0/0" and r.inputs.get("natGatewayId") for r in mine)
        for cidr in outside:
            assert any(
                r.inputs["destinationCidrBlock"] == cidr
                and r.inputs.get("transitGatewayId") == config.network.transit_gateway_id
                for r in mine
            ), (stack_plan.stack, table.name, cidr)
    if outside:
        (provider,) = stack_plan.of_type("pulumi:providers:kubernetes")
        waited = set(provider.dependencies)
        assert {r.urn for r in routes if r.inputs["destinationCidrBlock"] in outside} <= waited
        assert any("vpcAttachment:VpcAttachment" in urn for urn in waited)


def test_a_deployer_outside_the_vpc_without_a_way_back_is_refused(tmp_path, capsys):
    document_path = bad_stack(tmp_path, ["seedance-gpu:network", "transit_gateway_id"], None, stack="prod")
    assert main(["plan", "--stack", "prod", "--stack-file", str(document_path)]) == 2
    err = capsys.readouterr().err
    assert 'seedance-gpu:cluster.deployer_cidrs[0] = "10.100.0.0/24": is outside the VPC' in err
    assert "network.transit_gateway_id" in err and "public_endpoint_cidrs" in err
