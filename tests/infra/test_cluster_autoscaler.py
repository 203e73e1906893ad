"""The cluster autoscaler in each stack's plan: it finds every GPU group and may resize only this cluster's."""

import json

from seedance.cli import main
from seedance.offline_cloud import OFFLINE_ACCOUNT_ID
from tests.stacks import stack_config
from tests.policy_evaluation import Request, allows
from tests.stacks import bad_stack

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
        arn = (f"arn:aws:autoscaling:{region}:{OFFLINE_ACCOUNT_ID}:autoScalingGroup:0-1:"
               f"autoScalingGroupName/{asg.name}-abc")
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


def test_unknown_minor_needs_an_explicit_autoscaler_release(tmp_path, capsys):
    stack_file = bad_stack(tmp_path, ["seedance-gpu:cluster", "kubernetes_version"], "1.30")
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    assert "seedance-gpu:cluster.autoscaler.image_tag = null: no checked autoscaler release for Kubernetes 1.30" \
        in capsys.readouterr().err
