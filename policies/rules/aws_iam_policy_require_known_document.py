"""Every policy attached by ARN is one the gate can read: an AWS-managed policy the pinned copy holds
(policies/data/aws_managed_policies.json.gz, at the path its ARN gives), or a customer policy this plan
makes. Any other is judged by no rule, so what it allows is unknown: mandatory in prod, the positive
model; elsewhere it says what prod would refuse."""

from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.identity import IDENTITY_TYPES, copy_source, identities, is_aws_managed


def check(resources, config):
    if not of_types(resources, *IDENTITY_TYPES):
        return
    copy = f"in the gate's copy of AWS's managed policies ({copy_source()['committed'][:10]})"
    for identity in identities(resources):
        for urn, arn in identity.unknown_arns:
            where = copy if is_aws_managed(arn) else "a policy this plan makes"
            yield urn, f"{identity.kind} {identity.name}: {arn} is not {where}, so what it allows is unknown"


RULE = Rule(
    name="aws-iam-policy-require-known-document",
    description="Every policy attached by ARN is an AWS-managed policy the gate's pinned copy holds or a "
    "customer policy the plan makes.",
    severity="high",
    remediation="Attach a managed policy the copy holds, or declare the policy in the stack; when AWS adds or "
    "changes one the platform needs, regenerate the copy (scripts/generate_iam_reference.py).",
    topics=("security", "iam"),
    check_stack=check,
    standards=("CIS Controls v8 2.5 (allowlist authorized software)", "EKS BPG: IAM - least-privileged access"),
)
