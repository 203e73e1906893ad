"""The mandatory gate checks security, not only cost: the prod plan passes, and the prod plan edited to
break each of fifteen controls (alone, and all at once) fails `seedance check --env prod` with a
mandatory violation naming the control's rule."""

from __future__ import annotations

import json
import re

import pytest

from components.plan.resources import PlanResource
from policies.framework import run_rules
from policies.rules import ALL_RULES
from seedance.cli import main
from tests.stacks import REPO, stack_config


def _one(resources, type_, name_part=""):
    return next(r for r in resources if r["type"] == type_ and name_part in r["name"])


def _add_statement(resource, key, statement):
    policy = json.loads(resource["inputs"][key])
    policy["Statement"].append(statement)
    resource["inputs"][key] = json.dumps(policy)


def _public_api(rs):
    _one(rs, "aws:eks/cluster:Cluster")["inputs"]["vpcConfig"].update(
        endpointPublicAccess=True, publicAccessCidrs=["0.0.0.0/0"]
    )


def _no_secrets_encryption(rs):
    del _one(rs, "aws:eks/cluster:Cluster")["inputs"]["encryptionConfig"]


def _no_control_plane_logs(rs):
    _one(rs, "aws:eks/cluster:Cluster")["inputs"]["enabledClusterLogTypes"] = []


def _key_for_anyone(rs):
    _add_statement(
        _one(rs, "aws:kms/key:Key"),
        "policy",
        {"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*"},
    )


def _rotation_off(rs):
    _one(rs, "aws:kms/key:Key")["inputs"]["enableKeyRotation"] = False


def _public_bucket(rs):
    _one(rs, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")["inputs"]["blockPublicPolicy"] = False


def _trust_anyone(rs):
    role = _one(rs, "aws:iam/role:Role", "triton")
    role["inputs"]["assumeRolePolicy"] = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
        }
    )


def _no_hop_limit(rs):
    del _one(rs, "aws:ec2/launchTemplate:LaunchTemplate")["inputs"]["metadataOptions"]["httpPutResponseHopLimit"]


def _privileged_host_pod(rs):
    spec = _one(rs, "kubernetes:apps/v1:Deployment", "triton")["inputs"]["spec"]["template"]["spec"]
    spec["hostNetwork"] = True
    spec["containers"][0]["securityContext"] = {"privileged": True}
    spec["volumes"].append({"name": "host", "hostPath": {"path": "/"}})


def _node_port(rs):
    _one(rs, "kubernetes:core/v1:Service", "triton")["inputs"]["spec"]["type"] = "NodePort"


def _allow_all_network_policy(rs):
    _one(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "video-ml")["inputs"]["spec"].setdefault(
        "ingress", []
    ).append({})


def _wildcard_cluster_role(rs):
    _one(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")["inputs"]["rules"] = [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    ]


def _public_queue(rs):
    _add_statement(
        _one(rs, "aws:sqs/queuePolicy:QueuePolicy"),
        "policy",
        {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "*"},
    )


def _public_topic(rs):
    _add_statement(
        _one(rs, "aws:sns/topicPolicy:TopicPolicy"),
        "policy",
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "SNS:Publish", "Resource": "*"},
    )


def _cluster_admin_binding(rs):
    _one(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")["inputs"]["roleRef"]["name"] = (
        "cluster-admin"
    )


# (control, tampering, the rule that must name it)
CONTROLS = [
    ("public API endpoint", _public_api, "aws-eks-cluster-restrict-public-endpoint"),
    ("no secrets encryption", _no_secrets_encryption, "aws-eks-cluster-require-secrets-encryption"),
    ("no control-plane logs", _no_control_plane_logs, "aws-eks-cluster-require-control-plane-logs"),
    ("key policy Principal *", _key_for_anyone, "aws-iam-policy-disallow-public-principal"),
    ("key rotation off", _rotation_off, "aws-kms-key-require-rotation"),
    ("public bucket", _public_bucket, "aws-s3-bucket-disallow-public-access"),
    # Anyone is outside the accounts, and nobody the config names for the role.
    (
        "trust AWS *",
        _trust_anyone,
        ("aws-iam-policy-disallow-public-principal", "aws-iam-role-restrict-platform-role-entry"),
    ),
    ("launch template without hop limit", _no_hop_limit, "aws-ec2-instance-launch-require-imdsv2"),
    (
        "privileged hostNetwork pod with hostPath /",
        _privileged_host_pod,
        "kubernetes-pod-enforce-pod-security-standards",
    ),
    ("NodePort Service", _node_port, "kubernetes-service-disallow-node-port"),
    ("allow-all NetworkPolicy", _allow_all_network_policy, "kubernetes-networkpolicy-disallow-allow-all"),
    ("wildcard ClusterRole", _wildcard_cluster_role, "kubernetes-rbac-role-disallow-escalation"),
    ("public SQS policy", _public_queue, "aws-iam-policy-disallow-public-principal"),
    ("public SNS policy", _public_topic, "aws-iam-policy-disallow-public-principal"),
    ("cluster-admin binding", _cluster_admin_binding, "kubernetes-rbac-binding-disallow-escalating-roles"),
]


def gate(plan, tmp_path, capsys) -> tuple[int, str]:
    """`seedance check --env prod` over the plan: its exit code and what it printed."""
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(plan))
    capsys.readouterr()
    code = main(["check", "--plan", str(path), "--env", "prod"])
    return code, capsys.readouterr().out


def check(plan, tmp_path, capsys):
    code, out = gate(plan, tmp_path, capsys)
    return code, set(re.findall(r"\[mandatory\] ([a-z0-9-]+):", out))


def _rules(rule: str | tuple[str, ...]) -> set[str]:
    return {rule} if isinstance(rule, str) else set(rule)


def tampered(plan, *tamperings):
    copy = json.loads(json.dumps(plan))
    for tamper in tamperings:
        tamper(copy["resources"])
    return copy


def test_the_prod_plan_passes_every_mandatory_rule(prod_plan, tmp_path, capsys):
    assert check(prod_plan, tmp_path, capsys) == (0, set())


@pytest.mark.parametrize("control, tamper, rule", CONTROLS, ids=[c[0] for c in CONTROLS])
def test_each_control_broken_alone_fails_the_gate_naming_it(prod_plan, tmp_path, capsys, control, tamper, rule):
    code, named = check(tampered(prod_plan, tamper), tmp_path, capsys)
    assert code == 1 and named == _rules(rule), (control, named)


def test_all_fifteen_broken_at_once_are_all_named(prod_plan, tmp_path, capsys):
    code, named = check(tampered(prod_plan, *[c[1] for c in CONTROLS]), tmp_path, capsys)
    assert code == 1 and named == {name for c in CONTROLS for name in _rules(c[2])}


def test_a_public_endpoint_where_allowed_still_names_its_networks():
    """Dev may keep a public endpoint (its config allows one), for named CIDRs only."""
    (rule,) = [r for r in ALL_RULES if r.name == "aws-eks-cluster-restrict-public-endpoint"]
    enforcement = json.loads((REPO / "policies" / "config" / "dev.json").read_text())
    cluster = PlanResource(
        urn="urn:c", type="aws:eks/cluster:Cluster", name="c", props={"vpcConfig": {"endpointPublicAccess": True}}
    )
    named = PlanResource(
        urn="urn:n",
        type="aws:eks/cluster:Cluster",
        name="n",
        props={
            "vpcConfig": {
                "endpointPublicAccess": True,
                "publicAccessCidrs": stack_config("dev").cluster.public_endpoint_cidrs,
            }
        },
    )
    assert [v.urn for v in run_rules([rule], [cluster, named], enforcement)] == ["urn:c"]


def test_every_security_rule_names_the_standard_it_enforces_and_the_guide_maps_it():
    guide = (REPO / "docs" / "security.md").read_text()
    for rule in ALL_RULES:
        if "security" in rule.topics:
            assert rule.standards, rule.name
            assert f"`{rule.name}`" in guide, rule.name
            assert all(standard in guide for standard in rule.standards), rule.name
