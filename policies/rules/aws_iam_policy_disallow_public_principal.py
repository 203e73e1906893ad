"""No role, key, bucket, queue or topic grants anyone: a trust policy with `AWS: *` lets every AWS account
assume the role, and a key, bucket, queue or topic policy with `Principal: *` and no condition naming the
callers is public."""

from components.plan.resources import POLICY_DOCUMENTS
from policies.framework import Rule
from policies.rules._documents import document, open_to_anyone, statements


def check(resource, config):
    found = document(resource)
    if found is None:
        return
    kind, policy = found
    for sid, statement in statements(policy):
        if not open_to_anyone(statement):
            continue
        if kind == "trust":
            yield f"{resource.name}: trust statement {sid} lets any AWS account assume the role"
        else:
            actions = statement.get("Action", "?")
            yield f"{resource.name}: statement {sid} allows {actions} to anyone (Principal *, no condition on who)"


RULE = Rule(
    name="aws-iam-policy-disallow-public-principal",
    description="Trust, key, bucket, queue and topic policies never allow `*` without a condition naming the "
                "callers (aws:SourceArn, aws:SourceAccount, aws:PrincipalAccount, aws:PrincipalOrgID, ...).",
    severity="critical",
    remediation="Name the principals (account root, role ARNs, a service with aws:SourceArn/aws:SourceAccount), "
                "or add a condition that ties `*` to this account or organisation.",
    topics=("security", "iam"),
    check_resource=check,
    resource_types=frozenset(POLICY_DOCUMENTS),
    standards=("CIS EKS 5.2.1 (dedicated, scoped identities)", "EKS BPG: IAM - least-privileged access"),
)
