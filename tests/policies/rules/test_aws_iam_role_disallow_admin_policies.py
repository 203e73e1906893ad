"""Administrator-class managed policies by name, and any other AWS-managed policy by its document in the
pinned copy: a policy dropped from the name list is still caught by what it allows."""

from policies.rules import aws_iam_role_disallow_admin_policies as admin
from tests.policies.spellings import resource


def _attachment(arn):
    return resource(
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment", {"role": "nodes", "policyArn": arn}, "attachment"
    )


def test_a_managed_policy_is_judged_by_its_document_when_not_by_its_name(monkeypatch):
    iam_full = _attachment("arn:aws:iam::aws:policy/IAMFullAccess")
    assert list(admin.check(iam_full, {})) == ["attachment: attaches IAMFullAccess"]
    monkeypatch.setattr(admin, "ADMIN_POLICIES", admin.ADMIN_POLICIES - {"IAMFullAccess"})
    (found,) = admin.check(iam_full, {})
    assert found.startswith("attachment: attaches IAMFullAccess, which allows iam:*, ") and found.endswith(
        "on every resource"
    )
    assert list(admin.check(_attachment("arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"), {})) == []
