"""Who holds which Kubernetes access: no hidden creator grant, the deployer by an entry of its own,
admins and viewers by EKS's admin and view policies, cluster-admin only for break-glass roles."""

import json

import pytest

from components.cluster.access import CLUSTER_ADMIN, access_grants
from components.cluster.config import ClusterConfig
from components.stack.config import ConfigError, parse_config_values
from seedance.offline_cloud import OFFLINE_ACCOUNT_ID, OFFLINE_DEPLOYER_ROLE
from tests.stacks import stack_config

DEPLOYER = f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/{OFFLINE_DEPLOYER_ROLE}"


def test_no_cluster_admin_hides_in_the_cluster(stack_plan):
    (cluster,) = stack_plan.of_type("aws:eks/cluster:Cluster")
    assert cluster.inputs["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is False
    # The flag counts at creation only, and a change replaces the cluster: existing clusters keep theirs.
    assert "accessConfig.bootstrapClusterCreatorAdminPermissions" in cluster.ignore_changes


def test_cluster_admin_goes_to_the_deployer_and_break_glass_only(stack_plan):
    config = stack_config(stack_plan.stack).cluster
    granted = {}
    teams = {arn for tenant in stack_config(stack_plan.stack).tenants for arn in tenant.principal_arns}
    for association in stack_plan.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation"):
        assert association.inputs["principalArn"] not in teams  # tests/infra/test_tenant_isolation.py
        if association.inputs["policyArn"].endswith("/AmazonEKSAdminPolicy"):  # scoped: same file
            assert association.inputs["accessScope"]["type"] == "namespace"
            continue
        assert association.inputs["accessScope"] == {"type": "cluster"}
        granted.setdefault(association.inputs["principalArn"], set()).add(
            association.inputs["policyArn"].rsplit("/", 1)[1]
        )
    admins = {arn for arn, policies in granted.items() if CLUSTER_ADMIN in policies}
    assert admins == {DEPLOYER, *config.break_glass_principal_arns}
    assert all(granted[arn] == {"AmazonEKSViewPolicy"} for arn in config.admin_principal_arns)  # + admin, scoped
    assert all(granted[arn] == {"AmazonEKSViewPolicy"} for arn in config.viewer_principal_arns)
    (provider,) = stack_plan.of_type("pulumi:providers:kubernetes")
    deployer = [
        a.urn
        for a in stack_plan.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
        if a.inputs["principalArn"] == DEPLOYER
    ]
    assert deployer and set(deployer) <= set(provider.dependencies)  # objects install once the deployer may


def test_a_deployer_also_listed_holds_one_entry_with_both_policies():
    config = ClusterConfig(deployer_cidrs=["10.0.200.0/24"], admin_principal_arns=[DEPLOYER])
    (grant,) = access_grants(config, DEPLOYER, ["team-a"])
    assert grant.policies == ("AmazonEKSAdminPolicy", "AmazonEKSViewPolicy", CLUSTER_ADMIN)
    assert grant.scope("AmazonEKSAdminPolicy") == ("team-a",) and grant.scope(CLUSTER_ADMIN) is None


def test_a_principal_in_two_lists_is_refused_naming_the_key():
    arn = "arn:aws:iam::111122223333:role/ops"
    values = {
        "aws:region": "us-east-1",
        "seedance-gpu:env": "dev",
        "seedance-gpu:tags": '{"team": "a", "cost-center": "b"}',
        "seedance-gpu:budget": '{"monthly_usd": 10, "alert_emails": ["a@b.io"]}',
        "seedance-gpu:cluster": json.dumps(
            {"deployer_cidrs": ["10.0.200.0/24"], "admin_principal_arns": [arn], "viewer_principal_arns": [arn]}
        ),
    }
    with pytest.raises(
        ConfigError,
        match=r"seedance-gpu:cluster.viewer_principal_arns\[0\] = .*is already in "
        r"cluster.admin_principal_arns",
    ):
        parse_config_values(values)


def test_a_named_deployer_is_the_one_given_cluster_admin_whoever_previews(tmp_path):
    """A preview runs as a read-only role; with cluster.deployer_role_arn set, its plan keeps the deployer's
    entry as it is instead of moving cluster-admin to whoever ran it."""
    import json as json_

    from seedance.cli import main
    from tests.stacks import bad_stack

    named = "arn:aws:iam::123456789012:role/ci-deployer"
    stack_file = bad_stack(tmp_path, ["seedance-gpu:cluster", "deployer_role_arn"], named)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file), "--json", str(tmp_path / "p.json")]) == 0
    resources = json_.loads((tmp_path / "p.json").read_text())["resources"]
    admins = {
        r["inputs"]["principalArn"]
        for r in resources
        if r["type"] == "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
        and r["inputs"]["policyArn"].endswith("/" + CLUSTER_ADMIN)
    }
    assert admins == {named}
