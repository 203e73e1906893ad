"""Identities by what they can do and become: the managed-policy copy, the escalation sets, how an entity's
policies are gathered from every resource that grants them, and what passing roles makes of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policies.readers.iam import statement_of
from policies.readers.identity import (
    Roles,
    allowed,
    becomes,
    copy_source,
    escalation_methods,
    escalations,
    exfiltration,
    identities,
    managed_statements,
    reachable,
    reaches_any_name,
)
from tests.policies.spellings import HOME, resource

DATA = Path(__file__).resolve().parents[3] / "policies" / "data"


def _statements(*raw):
    return [statement_of(s, i) for i, s in enumerate(raw)]


def _allow(action, resources="*", **more):
    return {"Effect": "Allow", "Action": action, "Resource": resources, **more}


def test_the_copy_reads_a_managed_policy_by_its_arn_and_path_in_any_partition():
    worker = managed_statements("arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy")
    assert worker and "eks-auth:assumeroleforpodidentity" in worker[0].actions
    assert managed_statements("arn:aws-cn:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy")
    # The path is part of the ARN: without it IAM finds no such policy, and neither does the copy.
    assert managed_statements("arn:aws:iam::aws:policy/AmazonEBSCSIDriverPolicy") is None
    assert managed_statements("arn:aws:iam::aws:policy/SomethingNew") is None
    assert managed_statements(f"arn:aws:iam::{HOME}:policy/AmazonEKSWorkerNodePolicy") is None


def test_each_reference_file_says_where_it_comes_from_as_its_notice_does():
    source = copy_source()
    assert source["licence"] == "MIT" and source["commit"] in (DATA / "aws_managed_policies.NOTICE.md").read_text()
    assert "AdministratorAccess" in source["absent"]
    escalation = json.loads((DATA / "escalation_actions.json").read_text())["_source"]
    assert escalation["licence"] == "BSD-3-Clause"
    assert escalation["commit"] in (DATA / "escalation_actions.NOTICE.md").read_text()


def test_the_methods_hold_cloudsplainings_and_the_platforms_own():
    methods = escalation_methods()
    assert methods["CreateEC2WithExistingIP"] == ("iam:passrole", "ec2:runinstances")
    assert methods["RunCommandOnNodes"] == ("ssm:sendcommand",)
    assert all(action == action.lower() for actions in methods.values() for action in actions)


@pytest.mark.parametrize(
    "action, resources, method",
    [
        ("*", "arn:*", "AttachRolePolicy"),
        ("iam:*", f"arn:aws:iam::{HOME}:*", "CreateAccessKey"),
        (["iam:*Role*", "iam:*Policy*"], "*", "PutRolePolicy"),
        ("IAM:Attach*", "arn:aws:iam::*:role/*", "AttachRolePolicy"),
        ("iam:CreatePolicyVersion", f"arn:aws:iam::{HOME}:policy/one", "CreateNewPolicyVersion"),
        ("iam:Put?olePolicy", "arn:aws:iam::*:ROLE/*", "PutRolePolicy"),
        (
            ["iam:PassRole", "lambda:CreateFunction", "lambda:InvokeFunction"],
            "*",
            "PassExistingRoleToNewLambdaThenInvoke",
        ),
        ("ssm:Send*", f"arn:aws:ec2:us-east-1:{HOME}:instance/*", "RunCommandOnNodes"),
        ("eks:AssociateAccessPolicy", "*", "AssociateClusterAccessPolicy"),
    ],
)
def test_an_escalation_is_held_whatever_its_spelling_or_resource_and_not_when_denied(action, resources, method):
    """Scoped to one resource is still a way up (a policy version of one attached policy, a role of one
    name): as Cloudsplaining, the resource is not weighed. An unconditional Deny takes it away."""
    held = [name for name, _ in escalations(_statements(_allow(action, resources)))]
    assert method in held
    denied = _statements(_allow(action, resources), {"Effect": "Deny", "Action": "*", "Resource": "*"})
    assert escalations(denied) == []
    conditional = {
        "Effect": "Deny",
        "Action": "*",
        "Resource": "*",
        "Condition": {"Bool": {"aws:ViaAWSService": "true"}},
    }
    assert method in [name for name, _ in escalations(_statements(_allow(action, resources), conditional))]


def test_harmless_actions_and_passrole_alone_escalate_nothing():
    assert escalations(_statements(_allow(["s3:*", "iam:PassRole", "iam:Get*", "ec2:Describe*"]))) == []
    # All but IAM, on instances, is still lambda's and SSM's ways up.
    held = dict(escalations(_statements({"Effect": "Allow", "NotAction": "iam:*", "Resource": "x"})))
    assert "EditExistingLambdaFunctionWithRole" in held and "AttachRolePolicy" not in held


def test_allowed_counts_conditions_and_resources_as_not_narrowing():
    conditioned = _allow("ssm:SendCommand", "x", Condition={"StringEquals": {"aws:ResourceTag/team": "a"}})
    assert allowed(_statements(conditioned), "ssm:sendcommand")
    scoped_deny = {"Effect": "Deny", "Action": "ssm:SendCommand", "Resource": "arn:aws:ec2:*:*:instance/i-1"}
    assert allowed(_statements(conditioned, scoped_deny), "ssm:sendcommand")


@pytest.mark.parametrize(
    "pattern, service, reaches",
    [
        ("*", "s3", True),
        ("arn:aws:s3:::*/*", "s3", True),
        ("arn:*:s3:::*", "s3", True),
        ("arn:aws:s3:::models/video/*", "s3", False),
        ("arn:aws:s3:::models*", "s3", True),
        ("arn:aws:s3:::*X/*", "s3", True),
        (f"arn:aws:ssm:*:{HOME}:parameter/*", "ssm", True),
        ("arn:aws:ssm:*:*:parameter/*/*", "ssm", True),
        (f"arn:aws:ssm:us-east-1:{HOME}:parameter/", "ssm", True),
        (f"arn:aws:ssm:us-east-1:{HOME}:parameter/triton/*", "ssm", False),
        ("arn:aws-cn:secretsmanager:cn-north-1:*:secret:*", "secretsmanager", True),
        (f"arn:aws:secretsmanager:*:{HOME}:secret:*/*", "secretsmanager", True),
        (f"arn:aws:secretsmanager:*:{HOME}:secret:a*", "secretsmanager", True),
        (f"arn:aws:secretsmanager:us-east-1:{HOME}:secret:db-*", "secretsmanager", False),
        (f"arn:aws:secretsmanager:us-east-1:{HOME}:secret:seedance/prod/grafana-admin-??????", "secretsmanager", False),
    ],
)
def test_a_data_pattern_reaches_any_name_unless_it_names_a_store_as_the_platform_does(pattern, service, reaches):
    """A positive reading: a bucket by its whole name, a parameter by a first segment, a secret by a name up
    to a separator; a set of patterns each with a wildcard in the name (`*X/*`, `a*`) covers every store."""
    assert reaches_any_name(pattern, service) is reaches


def test_exfiltration_names_the_action_and_the_pattern_that_reaches_any_name():
    assert exfiltration(_statements(_allow("s3:Get*", "arn:aws:s3:::*/*"))) == [
        ("s3:getobject", "arn:aws:s3:::*/*"),
        ("s3:getobjectversion", "arn:aws:s3:::*/*"),
    ]
    assert exfiltration(_statements(_allow("s3:GetObject", "arn:aws:s3:::models/*"))) == []
    found = exfiltration(_statements({"Effect": "Allow", "Action": "ssm:GetParameter", "NotResource": "x"}))
    assert found == [("ssm:getparameter", "every resource but x")]


def _role(name, service="ec2.amazonaws.com", **props):
    trust = {"Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]}
    return resource("aws:iam/role:Role", {"name": name, "assumeRolePolicy": json.dumps(trust), **props}, name)


def _inline(role, *statements, name=None):
    document = json.dumps({"Statement": list(statements)})
    return resource("aws:iam/rolePolicy:RolePolicy", {"role": role, "policy": document}, name or f"{role}-policy")


def _of(found, name):
    return next(i for i in found if i.name == name)


def test_an_entity_holds_every_policy_whatever_resource_grants_it():
    plan = [
        _role("nodes", managedPolicyArns=["arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"]),
        resource(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            {"role": "nodes", "policyArn": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly"},
            "pull",
        ),
        _inline("nodes", _allow("s3:ListBucket", "arn:aws:s3:::models")),
        resource(
            "aws:iam/policy:Policy",
            {"name": "extras", "policy": json.dumps({"Statement": [_allow("sqs:*")]})},
            "extras",
        ),
        resource(
            "aws:iam/policyAttachment:PolicyAttachment",
            {
                "roles": [f"arn:aws:iam::{HOME}:role/nodes"],
                "users": ["ops"],
                "policyArn": f"arn:aws:iam::{HOME}:policy/extras",
            },
            "extras-everywhere",
        ),
        resource("aws:iam/group:Group", {"name": "admins"}, "admins"),
        resource(
            "aws:iam/groupPolicy:GroupPolicy",
            {"group": "admins", "policy": json.dumps({"Statement": [_allow("iam:CreateAccessKey")]})},
            "keys",
        ),
        resource("aws:iam/user:User", {"name": "ops"}, "ops"),
        resource("aws:iam/groupMembership:GroupMembership", {"group": "admins", "users": ["ops"]}, "members"),
        resource(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            {"role": "nodes", "policyArn": "arn:aws:iam::aws:policy/SomethingNew"},
            "new",
        ),
    ]
    found = identities(plan)
    nodes = _of(found, "nodes")
    assert [label for label, _ in nodes.policies] == [
        "AWS-managed AmazonEKSWorkerNodePolicy",
        "nodes-policy",
        "AWS-managed AmazonEC2ContainerRegistryPullOnly",
        "policy extras",
    ]
    assert [arn for _, arn in nodes.unknown_arns] == ["arn:aws:iam::aws:policy/SomethingNew"]
    ops = _of(found, "ops")
    assert ops.giving("iam:createaccesskey") == ["keys (group admins)"] and ops.giving("sqs:sendmessage")
    # A customer policy attached to something is judged with it, not on its own as well.
    assert not [i for i in found if i.kind == "policy"]


def test_a_customer_policy_attached_to_nothing_in_the_plan_is_judged_on_its_own():
    plan = [
        resource(
            "aws:iam/policy:Policy", {"name": "loose", "policy": json.dumps({"Statement": [_allow("iam:*")]})}, "loose"
        )
    ]
    (loose,) = identities(plan)
    assert loose.kind == "policy" and escalations(loose.statements())


def test_a_role_it_can_pass_to_compute_it_creates_is_a_role_it_becomes():
    nodes = _role("nodes")
    breaker = _role("breaker", "lambda.amazonaws.com")
    scoped = _inline("breaker", _allow("iam:PassRole", f"arn:aws:iam::{HOME}:role/nodes"), _allow("ec2:RunInstances"))
    found = identities([nodes, breaker, scoped])
    roles = Roles([i for i in found if i.kind == "role"], [HOME])
    became = becomes(_of(found, "breaker"), roles)
    assert [r.name for r in became.roles] == ["nodes"] and not became.any_role and not became.outside
    # Passing is becoming, whatever runs the role (compute of many services takes one), and so is assuming.
    alone = identities([nodes, breaker, _inline("breaker", _allow("iam:PassRole", "*"))])
    assert becomes(_of(alone, "breaker"), roles).any_role
    assuming = identities(
        [nodes, breaker, _inline("breaker", _allow("sts:AssumeRole", f"arn:aws:iam::{HOME}:role/nodes"))]
    )
    assert [r.name for r in becomes(_of(assuming, "breaker"), roles).roles] == ["nodes"]
    wide = identities([nodes, breaker, _inline("breaker", _allow(["iam:PassRole", "ec2:RunInstances"]))])
    assert becomes(_of(wide, "breaker"), roles).any_role
    elsewhere = identities(
        [
            nodes,
            breaker,
            _inline("breaker", _allow("iam:PassRole", f"arn:aws:iam::{HOME}:role/admin"), _allow("ec2:RunInstances")),
        ]
    )
    assert becomes(_of(elsewhere, "breaker"), roles).outside == (f"arn:aws:iam::{HOME}:role/admin",)


def test_what_it_becomes_is_followed_through_the_roles_it_reaches():
    plan = [
        _role("a", "lambda.amazonaws.com"),
        _role("b", "lambda.amazonaws.com"),
        _role("c"),
        _inline(
            "a",
            _allow("iam:PassRole", f"arn:aws:iam::{HOME}:role/b"),
            _allow(["lambda:CreateFunction", "lambda:InvokeFunction"]),
        ),
        _inline("b", _allow("iam:PassRole", f"arn:aws:iam::{HOME}:role/c"), _allow("ec2:RunInstances")),
    ]
    found = identities(plan)
    roles = Roles([i for i in found if i.kind == "role"], [HOME])
    assert [r.name for r in reachable(_of(found, "a"), roles).roles] == ["b", "c"]


def test_a_role_only_services_assume_is_told_from_one_a_person_or_pod_enters():
    found = identities([_role("nodes"), _role("people", "ec2.amazonaws.com")])
    assert _of(found, "nodes").services_only
    person = {
        "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{HOME}:role/ci"}, "Action": "sts:AssumeRole"}
        ]
    }
    publisher = resource(
        "aws:iam/role:Role", {"name": "publisher", "assumeRolePolicy": json.dumps(person)}, "publisher"
    )
    assert not identities([publisher])[0].services_only
