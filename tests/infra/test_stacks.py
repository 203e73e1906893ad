"""Each stack's offline plan: the resources the foundation must declare, secured by default."""

import json

from seedance_client.engine import Secret
from tests.stacks import stack_config

EXPECTED_TYPES = {
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "aws:ec2/natGateway:NatGateway",
    "aws:eks/cluster:Cluster",
    "aws:eks/addon:Addon",
    "aws:kms/key:Key",
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
    "kubernetes:helm.sh/v3:Release",
    "pulumi:providers:kubernetes",
    "aws:eks/nodeGroup:NodeGroup",
}
ADDONS = {"vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent", "aws-ebs-csi-driver"}


def test_stack_declares_the_foundation(stack_plan):
    assert EXPECTED_TYPES <= {r.type for r in stack_plan.resources}
    assert {r.inputs["addonName"] for r in stack_plan.of_type("aws:eks/addon:Addon")} == ADDONS
    (key,) = stack_plan.of_type("aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    (release,) = [
        r for r in stack_plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "nvidia-device-plugin"
    ]
    assert release.inputs["values"]["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_every_resource_is_inside_a_component(stack_plan):
    urns = {r.urn for r in stack_plan.resources}
    top = [r for r in stack_plan.resources if r.parent not in urns]
    assert top and all(r.type.startswith("seedance:") for r in top)


def test_no_subnet_maps_public_ips(stack_plan):
    subnets = stack_plan.of_type("aws:ec2/subnet:Subnet")
    assert subnets and all(s.inputs["mapPublicIpOnLaunch"] is False for s in subnets)


def test_cluster_is_private_encrypted_and_logged(stack_plan):
    (cluster,) = stack_plan.of_type("aws:eks/cluster:Cluster")
    vpc_config = cluster.inputs["vpcConfig"]
    assert vpc_config["endpointPrivateAccess"] is True  # nodes always join privately
    # The public endpoint, when on, admits only the listed CIDRs; staging and prod keep it off.
    assert not vpc_config["endpointPublicAccess"] or vpc_config["publicAccessCidrs"]
    if stack_plan.stack != "dev":
        assert vpc_config["endpointPublicAccess"] is False
    assert cluster.inputs["encryptionConfig"]["resources"] == ["secrets"]
    (key,) = stack_plan.of_type("aws:kms/key:Key")
    assert cluster.inputs["encryptionConfig"]["provider"]["keyArn"].startswith("arn:aws:kms:")
    assert cluster.inputs["accessConfig"]["authenticationMode"] == "API"
    assert "audit" in cluster.inputs["enabledClusterLogTypes"]


def test_ebs_csi_driver_runs_with_its_own_irsa_role(stack_plan):
    (addon,) = [a for a in stack_plan.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "aws-ebs-csi-driver"]
    assert ":role/" in addon.inputs["serviceAccountRoleArn"]
    roles = [r for r in stack_plan.of_type("aws:iam/role:Role") if r.name.endswith("ebs-csi-role")]
    trust = json.loads(roles[0].inputs["assumeRolePolicy"])
    conditions = trust["Statement"][0]["Condition"]["StringEquals"]
    assert "system:serviceaccount:kube-system:ebs-csi-controller-sa" in conditions.values()


def test_every_launch_template_requires_imdsv2_and_encrypts(stack_plan):
    templates = stack_plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert len(templates) == 1 + len(stack_config(stack_plan.stack).gpu_node_groups)  # system nodes, each GPU group
    for template in templates:
        assert template.inputs["metadataOptions"]["httpTokens"] == "required"
        assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
        assert template.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"


def test_kubeconfig_is_secret_in_outputs_and_provider(stack_plan):
    assert isinstance(stack_plan.outputs["kubeconfig"], Secret)
    (provider,) = stack_plan.of_type("pulumi:providers:kubernetes")
    assert isinstance(provider.inputs["kubeconfig"], Secret)
    assert set(stack_plan.outputs) >= {
        "region",
        "vpc_id",
        "private_subnet_ids",
        "cluster_name",
        "cluster_endpoint",
        "oidc_provider_arn",
        "kms_key_arn",
    }


def test_nat_layout_and_zones_follow_the_stack(plan_of):
    dev, prod = plan_of("dev"), plan_of("prod")
    assert len(dev.of_type("aws:ec2/natGateway:NatGateway")) == 1
    assert len(prod.of_type("aws:ec2/natGateway:NatGateway")) == 3
    assert len(dev.outputs["private_subnet_ids"]) == 2 and len(prod.outputs["private_subnet_ids"]) == 3
    assert dev.outputs["region"] == "us-west-2" and prod.outputs["region"] == "us-east-1"


def test_subnets_are_in_availability_zones_never_a_local_zone(stack_plan):
    """The offline account has an opted-in Local Zone whose ID sorts first, as use1-atl2-az1 does: the
    program asks for availability zones only (zone-type), so none of its subnets lands there."""
    zones = {s.inputs["availabilityZone"] for s in stack_plan.of_type("aws:ec2/subnet:Subnet")}
    assert zones and not any("-atl-" in zone for zone in zones)


def test_every_aws_resource_with_tags_carries_the_cost_tags(stack_plan):
    tagged = [r for r in stack_plan.resources if r.type.startswith("aws:") and "tags" in r.inputs]
    assert len(tagged) > 20
    for resource in tagged:
        tags = resource.inputs["tags"]
        keys = {t["key"] for t in tags} if isinstance(tags, list) else set(tags)  # ASGs tag with a list
        assert {"team", "cost-center", "env"} <= keys, resource.urn


def test_the_deployer_can_reach_the_api_it_installs_objects_through(stack_plan):
    """One `pulumi up` creates the cluster and then talks to its API: the network it runs from must be
    let in, on the public endpoint by CIDR or on the private one through the cluster security group,
    before the Kubernetes provider is used."""
    (cluster,) = stack_plan.of_type("aws:eks/cluster:Cluster")
    vpc = cluster.inputs["vpcConfig"]
    public = vpc.get("endpointPublicAccess") and vpc.get("publicAccessCidrs")
    rules = [
        r
        for r in stack_plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if cluster.urn in r.dependencies
    ]  # rules on the cluster's own security group
    private = [r for r in rules if (r.inputs["fromPort"], r.inputs["toPort"]) == (443, 443)]
    assert public or private, "neither the public endpoint nor the private one admits the deployer"
    (provider,) = stack_plan.of_type("pulumi:providers:kubernetes")
    assert {r.urn for r in private} <= set(provider.dependencies)


def test_declared_network_policies_are_enforced(stack_plan):
    """A NetworkPolicy does nothing unless the CNI enforces it: the VPC CNI's network policy agent."""
    assert stack_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    (cni,) = [a for a in stack_plan.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "vpc-cni"]
    assert json.loads(cni.inputs["configurationValues"])["enableNetworkPolicy"] == "true"


def test_egress_through_nat_is_seen_by_the_flow_logs(stack_plan):
    """Rejects only, VPC-wide, would never show what left for the internet: each NAT gateway's subnet logs
    all its traffic into the same encrypted group."""
    logs = stack_plan.of_type("aws:ec2/flowLog:FlowLog")
    (vpc_log,) = [log for log in logs if log.inputs.get("vpcId")]
    assert vpc_log.inputs["trafficType"] == stack_config(stack_plan.stack).network.flow_logs.upper() == "REJECT"
    nat_subnets = {g.inputs["subnetId"] for g in stack_plan.of_type("aws:ec2/natGateway:NatGateway")}
    assert {log.inputs["subnetId"] for log in logs if log.inputs.get("trafficType") == "ALL"} == nat_subnets
    assert {log.inputs["logDestination"] for log in logs} == {vpc_log.inputs["logDestination"]}
