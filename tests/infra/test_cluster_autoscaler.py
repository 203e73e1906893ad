"""The cluster autoscaler in each stack's plan: it finds every GPU group and may resize only this cluster's."""

import json

import pytest

from components.cluster.versions import VERSIONS
from seedance.cli import main
from seedance.offline_cloud import OFFLINE_ACCOUNT_ID
from tests.policy_evaluation import Request, allows
from tests.stacks import REPO, bad_stack, stack_config

ASG = "aws:autoscaling/group:Group"


def autoscaler(plan):
    (release,) = [r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "cluster-autoscaler"]
    (policy,) = [r for r in plan.of_type("aws:iam/rolePolicy:RolePolicy") if r.name.endswith("-autoscaler-policy")]
    (role,) = [r for r in plan.of_type("aws:iam/role:Role") if r.name.endswith("-autoscaler-role")]
    return release, json.loads(policy.inputs["policy"]), json.loads(role.inputs["assumeRolePolicy"])


def test_autoscaler_discovers_and_may_resize_every_gpu_group(stack_plan):
    release, policy, trust = autoscaler(stack_plan)
    values = release.inputs["values"]
    cluster = stack_plan.outputs["cluster_name"]
    assert values["autoDiscovery"]["clusterName"] == cluster and values["cloudProvider"] == "aws"
    # The chart discovers groups carrying both tags (its default autoDiscovery.tags).
    discovery = ("k8s.io/cluster-autoscaler/enabled", f"k8s.io/cluster-autoscaler/{cluster}")
    region = stack_plan.outputs["region"]
    for asg in stack_plan.of_type(ASG):
        tags = {t["key"]: t["value"] for t in asg.inputs["tags"]}
        assert all(key in tags for key in discovery), asg.name
        arn = (
            f"arn:aws:autoscaling:{region}:{OFFLINE_ACCOUNT_ID}:autoScalingGroup:0-1:"
            f"autoScalingGroupName/{asg.name}-abc"
        )
        context = {f"aws:ResourceTag/{k}": v for k, v in tags.items()}
        for action in ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"):
            assert allows(policy, Request(action, arn, context)), (asg.name, action)
    other = {"aws:ResourceTag/k8s.io/cluster-autoscaler/someone-else": "owned"}
    foreign = f"arn:aws:autoscaling:{region}:{OFFLINE_ACCOUNT_ID}:autoScalingGroup:0-1:autoScalingGroupName/theirs"
    assert not allows(policy, Request("autoscaling:SetDesiredCapacity", foreign, other))
    assert allows(policy, Request("autoscaling:DescribeAutoScalingGroups", "*"))
    # IRSA: the chart's service account is the one the role trusts.
    subject = next(iter(trust["Statement"][0]["Condition"]["StringEquals"].values()))
    account = values["rbac"]["serviceAccount"]
    assert subject == f"system:serviceaccount:{release.inputs['namespace']}:{account['name']}"
    assert account["annotations"]["eks.amazonaws.com/role-arn"].startswith("arn:aws:iam::")


def test_autoscaler_matches_the_cluster_minor_and_runs_on_system_nodes(stack_plan):
    release, _, _ = autoscaler(stack_plan)
    values = release.inputs["values"]
    minor = stack_config(stack_plan.stack).cluster.kubernetes_version
    assert values["image"]["tag"].startswith(f"v{minor}.")
    (system,) = stack_plan.of_type("aws:eks/nodeGroup:NodeGroup")
    assert values["nodeSelector"].items() <= system.inputs["labels"].items()
    # Triton's emptyDirs would otherwise keep every online node forever.
    assert values["extraArgs"]["skip-nodes-with-local-storage"] is False


@pytest.mark.parametrize("minor", ["1.30", "1.31", "1.37"])
def test_a_minor_outside_the_version_table_is_refused_with_the_table(tmp_path, capsys, minor):
    """1.30 and 1.31 are past extended support (EKS refuses them); 1.37 is not in the table yet."""
    stack_file = bad_stack(tmp_path, ["seedance-gpu:cluster", "kubernetes_version"], minor)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert f'seedance-gpu:cluster.kubernetes_version = "{minor}": allowed:' in err
    assert all(f'"{v}" (standard support to' in err for v in VERSIONS)


@pytest.mark.parametrize("minor", sorted(VERSIONS))
def test_every_minor_of_the_table_plans_with_its_own_add_ons(tmp_path, capsys, plan_of, minor):
    """The autoscaler image and chart and the descheduler chart follow the table, for every minor."""
    from seedance.cli import offline_plan

    stack_file = bad_stack(tmp_path, ["seedance-gpu:cluster", "kubernetes_version"], minor, stack="prod")
    plan, _header = offline_plan("prod", REPO / "infra", stack_file)
    releases = {r.inputs["chart"]: r.inputs for r in plan.of_type("kubernetes:helm.sh/v3:Release")}
    assert releases["cluster-autoscaler"]["values"]["image"]["tag"] == VERSIONS[minor].autoscaler_image
    assert releases["cluster-autoscaler"]["version"] == VERSIONS[minor].autoscaler_chart
    assert releases["descheduler"]["version"] == VERSIONS[minor].descheduler_chart
    (cluster,) = plan.of_type("aws:eks/cluster:Cluster")
    assert cluster.inputs["version"] == minor
