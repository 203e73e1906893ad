"""A service acting for another account cannot use this stack's roles, key or topic: each service trust
and each service grant names the source (aws:SourceAccount and aws:SourceArn), as the EKS, VPC and
Budgets guides write them."""

import json

import pytest

from seedance.offline_cloud import OFFLINE_ACCOUNT_ID
from tests.policy_evaluation import Request, allows

OTHER = "444455556666"


def _role(plan, suffix):
    (role,) = [r for r in plan.of_type("aws:iam/role:Role") if r.name.endswith(suffix)]
    return json.loads(role.inputs["assumeRolePolicy"])


@pytest.mark.parametrize(
    "suffix, ours, theirs",
    [
        (
            "cluster-role",
            "arn:aws:eks:us-east-1:{a}:cluster/seedance-prod",
            "arn:aws:eks:us-east-1:{a}:cluster/seedance-prod",
        ),
        (
            "flow-logs-role",
            "arn:aws:ec2:us-east-1:{a}:vpc-flow-log/fl-0abc",
            "arn:aws:ec2:us-east-1:{a}:vpc-flow-log/fl-0abc",
        ),
    ],
)
def test_service_roles_act_only_for_this_accounts_resource(plan_of, suffix, ours, theirs):
    trust = _role(plan_of("prod"), suffix)
    mine = {"aws:SourceAccount": OFFLINE_ACCOUNT_ID, "aws:SourceArn": ours.format(a=OFFLINE_ACCOUNT_ID)}
    assert allows(trust, Request("sts:AssumeRole", "*", mine))
    assert not allows(
        trust, Request("sts:AssumeRole", "*", {"aws:SourceAccount": OTHER, "aws:SourceArn": theirs.format(a=OTHER)})
    )
    assert not allows(trust, Request("sts:AssumeRole", "*", {}))


def test_only_this_accounts_budgets_publish_and_decrypt(plan_of):
    prod = plan_of("prod")
    (topic,) = prod.of_type("aws:sns/topicPolicy:TopicPolicy")
    (key,) = prod.of_type("aws:kms/key:Key")
    budget = f"arn:aws:budgets::{OFFLINE_ACCOUNT_ID}:budget/seedance-prod-budget-monthly"

    def budgets_statements(document):  # the evaluator models no principals: take Budgets' own statements
        return {
            "Statement": [
                s
                for s in json.loads(document)["Statement"]
                if s.get("Principal") == {"Service": "budgets.amazonaws.com"}
            ]
        }

    for policy, action in (
        (budgets_statements(topic.inputs["policy"]), "SNS:Publish"),
        (budgets_statements(key.inputs["policy"]), "kms:GenerateDataKey"),
    ):
        resource = topic.inputs["arn"] if action == "SNS:Publish" else "*"
        assert allows(
            policy, Request(action, resource, {"aws:SourceAccount": OFFLINE_ACCOUNT_ID, "aws:SourceArn": budget})
        )
        assert not allows(policy, Request(action, resource, {"aws:SourceAccount": OFFLINE_ACCOUNT_ID}))
