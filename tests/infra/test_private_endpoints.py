"""VPC endpoints in each stack's offline plan: private, policy-limited, in the right order."""

import json

import pytest

from seedance.cli import main
from tests.seedance.test_cli import bad_stack

ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"


def endpoints(plan):
    region = plan.outputs["region"]
    return {r.inputs["serviceName"].removeprefix(f"com.amazonaws.{region}.") + "/" + r.inputs["vpcEndpointType"]: r
            for r in plan.of_type(ENDPOINT)}


def test_gateway_on_every_private_route_table(stack_plan):
    gateway = endpoints(stack_plan)["s3/Gateway"]
    private_tables = [r for r in stack_plan.of_type("aws:ec2/routeTable:RouteTable") if "-private-rt-" in r.name]
    ids = gateway.inputs["routeTableIds"]
    assert len(ids) == len(set(ids)) == len(private_tables) == len(stack_plan.outputs["private_subnet_ids"])
    assert all(i.startswith("rtb-") for i in ids)


def test_kms_interface_with_private_dns_in_every_private_subnet(stack_plan):
    kms = endpoints(stack_plan)["kms/Interface"]
    assert kms.inputs["privateDnsEnabled"] is True
    assert kms.inputs["subnetIds"] == stack_plan.outputs["private_subnet_ids"]


def test_interface_endpoints_accept_https_from_the_vpc_only(stack_plan):
    (rule,) = stack_plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    (vpc,) = stack_plan.of_type("aws:ec2/vpc:Vpc")
    assert rule.inputs["cidrIpv4"] == vpc.inputs["cidrBlock"]
    assert (rule.inputs["fromPort"], rule.inputs["toPort"], rule.inputs["ipProtocol"]) == (443, 443, "tcp")


def test_no_endpoint_policy_is_a_wildcard(stack_plan):
    for endpoint in stack_plan.of_type(ENDPOINT):
        for statement in json.loads(endpoint.inputs["policy"])["Statement"]:
            unrestricted = statement.get("Resource") == "*" and "Condition" not in statement
            assert not unrestricted, endpoint.name
    kms = json.loads(endpoints(stack_plan)["kms/Interface"].inputs["policy"])["Statement"][0]
    assert kms["Resource"] == stack_plan.outputs["kms_key_arn"]
    s3 = json.loads(endpoints(stack_plan)["s3/Gateway"].inputs["policy"])["Statement"]
    assert s3[0]["Resource"].endswith("-starport-layer-bucket/*")  # ECR layers keep working


def test_s3_interface_in_staging_and_prod_after_the_gateway(plan_of):
    assert "s3/Interface" not in endpoints(plan_of("dev"))
    for stack in ("staging", "prod"):
        found = endpoints(plan_of(stack))
        interface, gateway = found["s3/Interface"], found["s3/Gateway"]
        assert interface.inputs["privateDnsEnabled"] is True
        assert interface.inputs["dnsOptions"]["privateDnsOnlyForInboundResolverEndpoint"] is True
        assert gateway.urn in interface.dependencies


def test_every_endpoint_carries_the_cost_tags(stack_plan):
    for endpoint in stack_plan.of_type(ENDPOINT):
        assert {"team", "cost-center", "env"} <= set(endpoint.inputs["tags"])


def test_plan_output_shows_the_egress_saving(capsys):
    assert main(["plan", "--stack", "prod"]) == 0
    out = capsys.readouterr().out
    assert "Egress to AWS services, per month" in out and "saving $" in out
    assert "S3 interface endpoint costs $21.90/month" in out


@pytest.mark.parametrize("endpoints_config, expected", [
    ({"interface_services": ["ecr.api", "s3-control"]}, "seedance-gpu:endpoints.interface_services[1] = \"s3-control\""),
    ({"interface_az_count": 0}, "seedance-gpu:endpoints.interface_az_count = 0: Input should be greater than or equal to 1"),
    ({"interface_az_count": 3}, "seedance-gpu:endpoints.interface_az_count = 3: the VPC has 2 private subnets"),
])
def test_bad_endpoint_config_exits_2_naming_the_key(tmp_path, capsys, endpoints_config, expected):
    stack_file = bad_stack(tmp_path, ["seedance-gpu:endpoints"], endpoints_config)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1
