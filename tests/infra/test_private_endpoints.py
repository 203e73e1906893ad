"""VPC endpoints in each stack's offline plan: private, policy-limited, in the right order."""

import json

import pytest

from seedance.cli import main
from seedance.offline_cloud import OFFLINE_ACCOUNT_ID
from tests.policy_evaluation import Request, allows
from tests.stacks import bad_stack

ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"


def endpoints(plan):
    region = plan.outputs["region"]
    return {
        r.inputs["serviceName"].removeprefix(f"com.amazonaws.{region}.") + "/" + r.inputs["vpcEndpointType"]: r
        for r in plan.of_type(ENDPOINT)
    }


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
    (rule,) = [
        r
        for r in stack_plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if "interface" in r.name or "https-from-vpc" in r.name
    ]
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


def s3_requests(region, account, model_bucket):
    """What must pass the S3 endpoints (the cluster working) and what must not (data leaving)."""
    ours = {"aws:PrincipalAccount": account, "aws:ResourceAccount": account}
    foreign = {"aws:PrincipalAccount": account, "aws:ResourceAccount": "999999999999"}
    must_pass = {
        "node pulls an ECR image layer (presigned by ECR)": Request(
            "s3:GetObject",
            f"arn:aws:s3:::prod-{region}-starport-layer-bucket/sha256/ab",
            {"aws:ResourceAccount": "602401143452"},
        ),
        "node pulls a registry.k8s.io image (anonymous redirect)": Request(
            "s3:GetObject", f"arn:aws:s3:::prod-registry-k8s-io-{region}/containers/images/sha256:ab"
        ),
        "node pulls the Prometheus image from quay.io (presigned)": Request(
            "s3:GetObject",
            "arn:aws:s3:::quayio-production-s3/sha256/ab/abcdef",
            {"aws:ResourceAccount": "111111111111"},
        ),
        "node installs an AL2023 package": Request(
            "s3:GetObject", f"arn:aws:s3:::al2023-repos-{region}-de612dc2/core/mirrors/latest/x86_64/repodata"
        ),
        "Triton reads its models": Request(
            "s3:GetObject", f"arn:aws:s3:::{model_bucket}/seedance/video/1/model.plan", ours
        ),
        "a training job reads a dataset bucket of this account": Request(
            "s3:GetObject", "arn:aws:s3:::ml-datasets-prod/shard-0001.tar", ours
        ),
        "a training job lists a dataset bucket of this account": Request(
            "s3:ListBucket", "arn:aws:s3:::ml-datasets-prod", ours
        ),
        "a job writes a checkpoint to this account's bucket": Request(
            "s3:PutObject", f"arn:aws:s3:::{model_bucket}/ckpt/step-100", ours
        ),
    }
    must_not_pass = {
        "our role writes to another account's bucket (exfiltration)": Request(
            "s3:PutObject", "arn:aws:s3:::attacker-bucket/dump.tar", foreign
        ),
        "anyone writes to the ECR layer bucket": Request(
            "s3:PutObject", f"arn:aws:s3:::prod-{region}-starport-layer-bucket/x", foreign
        ),
        "another account's principal reads our models": Request(
            "s3:GetObject",
            f"arn:aws:s3:::{model_bucket}/seedance/video/1/model.plan",
            {"aws:PrincipalAccount": "999999999999", "aws:ResourceAccount": account},
        ),
        "anonymous read of an arbitrary foreign bucket": Request(
            "s3:GetObject", "arn:aws:s3:::attacker-bucket/payload"
        ),
    }
    return must_pass, must_not_pass


def test_s3_endpoints_serve_the_cluster_and_keep_data_in(stack_plan):
    region, bucket = stack_plan.outputs["region"], stack_plan.outputs["model_repository_bucket"]
    must_pass, must_not_pass = s3_requests(region, OFFLINE_ACCOUNT_ID, bucket)
    for name, endpoint in endpoints(stack_plan).items():
        if not name.startswith("s3/"):
            continue
        policy = json.loads(endpoint.inputs["policy"])
        assert [what for what, r in must_pass.items() if not allows(policy, r)] == [], name
        assert [what for what, r in must_not_pass.items() if allows(policy, r)] == [], name


def test_sts_endpoint_lets_every_irsa_role_be_assumed(plan_of):
    """AssumeRoleWithWebIdentity is unsigned: no aws:PrincipalAccount. With private DNS, every IRSA
    role (VPC CNI, EBS CSI, termination handler, Triton) is assumed through this endpoint."""
    for stack in ("staging", "prod"):
        plan = plan_of(stack)
        policy = json.loads(endpoints(plan)["sts/Interface"].inputs["policy"])
        roles = [r for r in plan.of_type("aws:iam/role:Role") if "Federated" in r.inputs["assumeRolePolicy"]]
        assert roles
        for role in roles:
            arn = f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/{role.inputs.get('name') or role.name}"
            ours = {"aws:ResourceAccount": OFFLINE_ACCOUNT_ID}  # and no principal keys: the call is unsigned
            assert allows(policy, Request("sts:AssumeRoleWithWebIdentity", arn, ours)), role.name
        assert allows(policy, Request("sts:GetCallerIdentity", "*", {"aws:PrincipalAccount": OFFLINE_ACCOUNT_ID}))
        foreign_role = "arn:aws:iam::999999999999:role/exfil"
        assert not allows(
            policy, Request("sts:AssumeRoleWithWebIdentity", foreign_role, {"aws:ResourceAccount": "999999999999"})
        )
        assert not allows(policy, Request("sts:AssumeRole", foreign_role, {"aws:PrincipalAccount": "999999999999"}))


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


@pytest.mark.parametrize(
    "endpoints_config, expected",
    [
        (
            {"interface_services": ["ecr.api", "s3-control"]},
            'seedance-gpu:endpoints.interface_services[1] = "s3-control"',
        ),
        (
            {"interface_az_count": 0},
            "seedance-gpu:endpoints.interface_az_count = 0: Input should be greater than or equal to 1",
        ),
        ({"interface_az_count": 3}, "seedance-gpu:endpoints.interface_az_count = 3: the VPC has 2 private subnets"),
    ],
)
def test_bad_endpoint_config_exits_2_naming_the_key(tmp_path, capsys, endpoints_config, expected):
    stack_file = bad_stack(tmp_path, ["seedance-gpu:endpoints"], endpoints_config)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1
