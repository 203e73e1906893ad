"""Every IAM policy document in every stack's plan, linted by parliament (a linter nobody here wrote).

Parliament reads every document as an identity policy. The findings below are its known false
positives for documents of another kind, each with the reason; any other finding fails the test. Its
community auditors (privilege escalation, credentials exposure, permissions management) judge what an
identity may do, so they run on identity policies only: on resource and endpoint policies every one of
their findings would be one more "identity policies still decide", and they take twenty seconds a stack.
"""

import json

import parliament

from components.plan.resources import POLICY_DOCUMENTS

GRANT_ACTIONS = {"kms:creategrant", "kms:revokegrant", "kms:listgrants"}

# (document kind, parliament issue) -> why it does not apply to that kind of document.
NOT_APPLICABLE = {
    ("trust", "MALFORMED"): "a trust policy has no Resource: the role it is attached to is the resource",
    ("trust", "UNKNOWN_FEDERATION_SOURCE"): "EKS OIDC providers are per cluster; parliament knows only public IdPs",
    ("resource", "RESOURCE_STAR"): "in a key policy `*` is the key itself; in endpoint, queue and topic policies "
    "the conditions narrow it (tests/infra/test_private_endpoints.py evaluates them)",
    ("endpoint", "RESOURCE_STAR"): "an endpoint policy's `*` is narrowed by its conditions "
    "(tests/infra/test_private_endpoints.py evaluates them)",
}


def accepted_identity_finding(finding) -> bool:
    """EBS CSI creates, lists and revokes grants on the stack key for the volumes it attaches (its
    documented KMS policy), only for AWS resources (kms:GrantIsForAWSResource). The budget breaker updates
    launch-template groups, for which Auto Scaling checks that the caller may use the template
    (ec2:RunInstances on it; the instances launch as Auto Scaling's service-linked role) and pass its
    instance profile's role (iam:PassRole on the GPU node roles only, to EC2 only)."""
    actions = set((finding.location or {}).get("actions", []))
    if finding.issue == "RESOURCE_MISMATCH":
        return all(item.get("action") == "ec2:RunInstances" for item in finding.detail)
    # RunInstances on any resource, but only from the groups' own templates (ec2:LaunchTemplate), which fix
    # the instance profile; PassRole of the GPU node roles only: the role cannot launch another identity.
    if finding.issue == "RESOURCE_STAR":
        return finding.detail == ["ec2:RunInstances"]
    if finding.issue == "PRIVILEGE_ESCALATION":
        return set(finding.location.get("actions", [])) == {"iam:passrole", "ec2:runinstances"}
    return finding.issue == "PERMISSIONS_MANAGEMENT_ACTIONS" and actions <= GRANT_ACTIONS | {"iam:passrole"}


def accepted_key_policy_finding(finding) -> bool:
    """CloudWatch Logs' key-policy statement as the CloudWatch Logs guide writes it: ArnLike on
    kms:EncryptionContext:aws:logs:arn (a string key holding an ARN), over actions that include DescribeKey."""
    text = f"{finding.detail} {finding.location}"
    return finding.issue in ("MISMATCHED_TYPE", "UNKNOWN_CONDITION_FOR_ACTION") and (
        "kms:EncryptionContext:aws:logs:arn" in text or "ArnLike requires a value of type Arn" in text
    )


def unexplained_findings(plan):
    found = []
    for resource in plan.resources:
        if resource.type not in POLICY_DOCUMENTS:
            continue
        key, kind = POLICY_DOCUMENTS[resource.type]
        document = resource.inputs.get(key)
        if not document:
            continue
        community = kind == "identity"
        for finding in parliament.analyze_policy_string(document, include_community_auditors=community).findings:
            if (kind, finding.issue) in NOT_APPLICABLE:
                continue
            if kind == "identity" and accepted_identity_finding(finding):
                continue
            if resource.type == "aws:kms/key:Key" and accepted_key_policy_finding(finding):
                continue
            found.append(f"{resource.name} ({kind}): {finding.issue} {finding.detail} {finding.location}")
    return found


def test_every_policy_document_passes_parliament(stack_plan):
    assert unexplained_findings(stack_plan) == []


def test_the_lint_catches_a_write_action_on_every_resource(plan_of):
    """The harness itself: a handler policy that completes lifecycle actions on `*` is reported."""
    plan = plan_of("dev")
    (policy,) = [r for r in plan.of_type("aws:iam/rolePolicy:RolePolicy") if "interruptions" in r.name]
    document = json.loads(policy.inputs["policy"])
    document["Statement"].append({"Effect": "Allow", "Action": "autoscaling:CompleteLifecycleAction", "Resource": "*"})
    bad = type(policy)(**{**policy.__dict__, "inputs": {**policy.inputs, "policy": json.dumps(document)}})
    broken = type(plan)(project=plan.project, stack=plan.stack, resources=[bad], outputs={})
    assert any("RESOURCE_STAR" in line for line in unexplained_findings(broken))
