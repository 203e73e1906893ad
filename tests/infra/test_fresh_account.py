"""What a fresh AWS account lacks on the first `pulumi up`, and how each stack copes with it."""

import json
from functools import partial

import seedance.cli
from components.common.iam import autoscaling_role_arn
from seedance.cli import offline_plan
from seedance.offline_cloud import OFFLINE_ACCOUNT_ID, OfflineCloud
from tests.stacks import REPO

KEY = "aws:kms/key:Key"
SERVICE_LINKED_ROLE = "aws:iam/serviceLinkedRole:ServiceLinkedRole"


def aws_principals(document):
    for statement in document["Statement"]:
        principal = statement.get("Principal", {})
        values = principal.get("AWS", []) if isinstance(principal, dict) else []
        yield from [values] if isinstance(values, str) else values


def test_key_policy_names_only_principals_that_exist_before_the_key(stack_plan):
    """KMS rejects a key policy that names a principal it cannot find (MalformedPolicyDocumentException):
    every principal is the account itself or a role the key waits for."""
    created = {r.inputs["awsServiceName"]: r for r in stack_plan.of_type(SERVICE_LINKED_ROLE)}
    for key in stack_plan.of_type(KEY):
        for principal in aws_principals(json.loads(key.inputs["policy"])):
            if principal.endswith(":root"):
                continue
            service = principal.split("/aws-service-role/")[1].split("/")[0]
            assert service in created, f"{key.name} names {principal}, which a fresh account does not have"
            assert created[service].urn in key.dependencies
            # The role is the account's: destroying a stack must not take it from the others.
            assert created[service].retain_on_delete


def test_an_account_that_has_the_role_is_not_asked_to_create_it(monkeypatch):
    existing = autoscaling_role_arn("aws", OFFLINE_ACCOUNT_ID)
    monkeypatch.setattr(seedance.cli, "OfflineCloud", partial(OfflineCloud, existing_roles=(existing,)))
    plan, _ = offline_plan("dev", REPO / "infra", None)
    assert not plan.of_type(SERVICE_LINKED_ROLE)
    (key,) = plan.of_type(KEY)
    assert existing in aws_principals(json.loads(key.inputs["policy"]))


def test_the_deployer_permissions_table_covers_every_service_the_stacks_use(plan_of):
    documented = (REPO / "docs" / "fresh-account.md").read_text()
    used = {
        r.type.split(":")[1].split("/")[0]
        for stack in ("dev", "staging", "prod")
        for r in plan_of(stack).resources
        if r.type.startswith("aws:")
    }
    assert [m for m in sorted(used) if f"`{m}`" not in documented] == []
