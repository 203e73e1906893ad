"""No role the stack creates is an administrator: no AWS-managed policy that grants all actions or all of
IAM (AdministratorAccess, PowerUserAccess, IAMFullAccess, ...) is attached, by an attachment resource or
the role's own list, and no inline or customer policy allows every action (or every IAM action, or all but
a few by NotAction) on every resource, or an IAM action that attaches or writes policies (or credentials) on
IAM entities of any name (`iam:*Role*` on `*`, `iam:*` on `arn:aws:iam::<account>:*`, `*` on `arn:*`). A
node or a pod holding it owns the account. Users and groups are held to the same: the program creates
none, and one with an administrator policy is a standing key to the account."""

from components.plan.resources import IAM_POLICY_ATTACHMENTS as ATTACHMENTS
from components.plan.resources import IAM_ROLE as ROLE
from components.plan.resources import POLICY_DOCUMENTS
from policies.framework import Rule
from policies.readers.iam import PolicyDocumentError, admin_grant, parse
from policies.readers.identity import managed_statements

# AWS-managed policies that grant all actions, all of IAM, or the means to make any role (the two
# service-flavoured administrators: "Grants account administrative permissions", their descriptions say).
ADMIN_POLICIES = frozenset(
    {
        "AdministratorAccess",
        "PowerUserAccess",
        "IAMFullAccess",
        "AWSCloudFormationFullAccess",
        "AmazonEC2FullAccess",
        "AWSLambda_FullAccess",
        "AdministratorAccess-Amplify",
        "AdministratorAccess-AWSElasticBeanstalk",
    }
)


def _managed(arn) -> str | None:
    name = str(arn).rsplit("/", 1)[-1]
    return name if str(arn).startswith("arn:aws:iam::aws:policy/") and name in ADMIN_POLICIES else None


def check(resource, config):
    if resource.type in ATTACHMENTS:
        arns = [resource.props.get("policyArn")]
    elif resource.type == ROLE:
        arns = list(resource.props.get("managedPolicyArns") or [])  # its inline policies are documents: below
    else:
        arns = []
    for arn in arns:
        if _managed(arn):
            yield f"{resource.name}: attaches {_managed(arn)}"
            continue
        # Any other AWS-managed policy by its document (the pinned copy): AWS may widen one by a new version.
        for statement in managed_statements(str(arn)) or ():
            how = admin_grant(statement)
            if how:
                yield f"{resource.name}: attaches {str(arn).rsplit('/', 1)[-1]}, which allows {statement.what()} {how}"
    documents = [
        p.get("policy")
        for p in resource.props.get("inlinePolicies") or []
        if resource.type == ROLE and isinstance(p, dict)
    ]
    entry = POLICY_DOCUMENTS.get(resource.type)
    if entry and entry[1] == "identity":
        documents.append(resource.props.get(entry[0]))
    for document in (d for d in documents if d):
        try:
            statements = parse(document)
        except PolicyDocumentError:
            continue  # aws-iam-policy-disallow-public-principal names documents AWS refuses
        for statement in statements:
            how = admin_grant(statement)
            if how:
                yield f"{resource.name}: statement {statement.sid} allows {statement.what()} {how}"


RULE = Rule(
    name="aws-iam-role-disallow-admin-policies",
    description="No role gets an administrator-class AWS-managed policy or an identity policy allowing every "
    "action (or all of IAM) on every resource.",
    severity="critical",
    remediation="Attach the service's own scoped policy (AmazonEKSWorkerNodePolicy, "
    "AmazonEC2ContainerRegistryPullOnly, ...) or list the actions and resources the role needs.",
    topics=("security", "iam"),
    check_resource=check,
    resource_types=frozenset(
        {*ATTACHMENTS, ROLE, *(t for t, (_, kind) in POLICY_DOCUMENTS.items() if kind == "identity")}
    ),
    standards=("CIS EKS 5.2.1 (dedicated, scoped identities)", "EKS BPG: IAM - least-privileged access"),
)
