"""Nobody outside the stack's accounts is let in: no trust, key, bucket, queue, topic, repository, secret or
function policy, nor a KMS grant or a RAM share's principal, lets in an outside caller, however the grant is
spelled (`*` under a condition that names someone else, another account's root, an OIDC trust without an
exact `sub` and `aud`, or to a namespace's `default` service account (every pod there that names none), or to
a subject of another identity provider than an EKS cluster's (a CI system's) that the config does not name,
a service with no source condition, NotPrincipal, a network origin alone: the plan's endpoint or VPC names
where a request comes from, so any caller there, an anonymous pod's included, gets in, and through an
endpoint it always holds; an encryption context the caller supplies names a caller only for a service that
sets it), and an endpoint lets outside credentials only read through it."""

from components.plan.resources import (
    KMS_GRANT,
    LAMBDA_PERMISSION,
    POLICY_DOCUMENTS,
    RAM_PRINCIPAL_ASSOCIATION,
)
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.iam import (
    ENDPOINT_KEYS,
    VPC_KEYS,
    Condition,
    Home,
    PolicyDocumentError,
    Principal,
    Statement,
    account_of,
    keeps_data_home,
    outside_grants,
    parse,
)
from policies.rules._helpers import home_accounts

# What lets a caller in besides a policy document.
GRANTS = (LAMBDA_PERMISSION, KMS_GRANT, RAM_PRINCIPAL_ASSOCIATION)
NETWORK_KEYS = frozenset({*ENDPOINT_KEYS, *VPC_KEYS, "aws:sourceip", "aws:vpcsourceip"})
# What an outside caller may do through one of the stack's endpoints: read, never write out.
READ_PREFIXES = ("get", "list", "describe", "head")


def lambda_permission(props) -> Statement:
    """A Lambda permission as the statement Lambda adds to the function's policy."""
    principal = str(props.get("principal") or "")
    kind = "*" if principal == "*" else "service" if principal.endswith(".amazonaws.com") else "aws"
    conditions = [
        Condition("stringequals", key, (str(props[name]),))
        for name, key in (("sourceAccount", "aws:sourceaccount"), ("principalOrgId", "aws:principalorgid"))
        if props.get(name)
    ]
    if props.get("sourceArn"):
        conditions.append(Condition("arnlike", "aws:sourcearn", (str(props["sourceArn"]),)))
    return Statement(
        "permission",
        True,
        (Principal(kind, principal),),
        actions=(str(props.get("action")).lower(),),
        conditions=tuple(conditions),
    )


def kms_grant(props) -> Statement:
    """A KMS grant as the statement it amounts to: its grantee (and its retiring principal, who may retire
    it) allowed the grant's operations on the key, under its encryption-context constraints (which name no
    caller, so they narrow nothing here)."""
    principals = tuple(
        Principal("service" if p.endswith(".amazonaws.com") else "aws", p)
        for p in (str(props.get(k) or "") for k in ("granteePrincipal", "retiringPrincipal"))
        if p
    )
    operations = tuple(f"kms:{str(o).lower()}" for o in props.get("operations") or [])
    return Statement("grant", True, principals, actions=operations)


def _shared_with_home(principal: str, home: Home) -> bool:
    """Whether a RAM share's principal is home: one of its accounts (by id or an IAM ARN in it), or its
    organisation or an OU in it (`arn:aws:organizations::<management>:organization/o-x`, `.../ou/o-x/ou-y`).
    Anything else, a service principal included, is someone the stack cannot vouch for."""
    if principal in home.principals or account_of(principal) in home.accounts:
        return True
    if principal.startswith("arn:aws:organizations::"):
        path = principal.split(":", 5)[-1].split("/")
        return len(path) >= 2 and path[0] in ("organization", "ou") and path[1] in home.organisations
    return False


def home_of(resources, config) -> Home:
    """Home: the accounts and organisations the config names (`seedance check` fills them from the stack
    config), else the account the cluster's nodes run in (the account of the node roles' access entries);
    the roles of other accounts the stack config names."""
    return Home(
        accounts=home_accounts(resources, config["home_accounts"]),
        principals=frozenset(config["home_principals"]),
        federated_subjects=frozenset(config["home_federated_subjects"]),
        organisations=frozenset(config["home_organisations"]),
    )


def _writes(actions) -> bool:
    return any(not a.split(":", 1)[-1].startswith(READ_PREFIXES) for a in actions)


def findings(resource, home):
    if resource.type == RAM_PRINCIPAL_ASSOCIATION:
        principal = str(resource.props.get("principal"))
        if not _shared_with_home(principal, home):
            yield (
                f"{resource.name}: shares {resource.props.get('resourceShareArn')} with {principal}, outside "
                "the stack's accounts and organisations"
            )
        return
    if resource.type == LAMBDA_PERMISSION:
        statements, kind = [lambda_permission(resource.props)], "resource"
    elif resource.type == KMS_GRANT:
        statements, kind = [kms_grant(resource.props)], "resource"
    else:
        key, kind = POLICY_DOCUMENTS[resource.type]
        if kind == "identity":
            return  # names no principal: what it grants is aws-iam-role-disallow-admin-policies' to judge
        text = resource.props.get(key)
        if not text:
            return
        try:
            statements = parse(text)
        except PolicyDocumentError as error:
            yield f"{resource.name}: {key} is not a policy document AWS accepts ({error})"
            return
    for grant in outside_grants(statements, home, trust=kind == "trust"):
        statement = grant.statement
        if kind == "endpoint" and (
            keeps_data_home(statement, home) or not (statement.not_action or _writes(statement.actions))
        ):
            continue  # outside credentials may read through it, or reach home resources only
        network = (
            " (a network origin names no caller)" if any(c.key in NETWORK_KEYS for c in statement.conditions) else ""
        )
        if kind == "trust":
            yield f"{resource.name}: trust statement {grant.sid} lets {grant.who} assume the role{network}"
        else:
            yield f"{resource.name}: statement {grant.sid} allows {grant.what} to {grant.who}{network}"


def check(resources, config):
    home = home_of(resources, config)
    for resource in of_types(resources, *POLICY_DOCUMENTS, *GRANTS):
        for message in findings(resource, home):
            yield resource.urn, message


RULE = Rule(
    name="aws-iam-policy-disallow-public-principal",
    description="No trust or resource policy lets in a caller outside the stack's accounts and organisations; "
    "OIDC trust names an exact service account (`sub`) and audience (`aud`).",
    severity="critical",
    remediation="Name home principals (account root, role ARNs), tie `*` or a service to home with a condition "
    "that fails closed (StringEquals/ArnLike on aws:PrincipalAccount, aws:PrincipalOrgID, "
    "aws:SourceAccount, aws:SourceArn), and give OIDC trust StringEquals on `<issuer>:sub` and `:aud`.",
    topics=("security", "iam"),
    config={
        "home_accounts": {"type": "array", "items": {"type": "string", "pattern": r"^\d{12}$"}, "default": []},
        "home_principals": {"type": "array", "items": {"type": "string"}, "default": []},
        # "<issuer>:<sub>" of each CI identity let in through another identity provider than the cluster's,
        # e.g. "token.actions.githubusercontent.com:repo:org/models:ref:refs/heads/main".
        "home_federated_subjects": {"type": "array", "items": {"type": "string"}, "default": []},
        "home_organisations": {"type": "array", "items": {"type": "string"}, "default": []},
    },
    check_stack=check,
    standards=(
        "CIS EKS 5.2.1 (dedicated, scoped identities)",
        "EKS BPG: IAM - least-privileged access",
        "IAM User Guide: cross-service confused deputy prevention",
        "EKS User Guide: IAM roles for service accounts (sub and aud conditions)",
        "CIS EKS 4.1.5 (default service accounts not actively used)",
    ),
)
