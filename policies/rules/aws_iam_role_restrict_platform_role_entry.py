"""The only ways into the platform's roles are the ones the stack config names. Every role the platform's
plan declares is a platform role (Triton's model roles, the publishers, the node roles, the controllers'),
and so is the deployer the config names:

- a trust policy lets in, of people and pipelines, only the principals the config names for that role (a
  serving set's publishers for its publisher role, nobody for any other);
- a web-identity (IRSA) trust names service accounts of the platform's own namespaces only, never a team's;
- no role trusts EKS Pod Identity (`pods.eks.amazonaws.com`), and the plan makes no Pod Identity
  association: either gives a role to any service account someone associates later;
- no identity of the plan may assume a platform role, and only a role that AWS services alone assume may
  pass one, and only a node role (one only EC2 assumes: the budget breaker starts nodes).

Judged with the stack config (`seedance check`, the pack under `pulumi preview` of this project); a team's
plan, checked against a contract, names no platform role."""

from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.iam import wildcard_match
from policies.readers.identity import IDENTITY_TYPES, allowed, identities, reaches_any_role
from policies.rules._helpers import home_accounts

POD_IDENTITY_ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
NODE_SERVICE = "ec2.amazonaws.com"


def _subjects(statement):
    """The `:sub` values a web-identity statement's conditions name (any operator: a pattern names many)."""
    return [v for c in statement.conditions if c.key.endswith(":sub") for v in c.values]


def _trust(role, config):
    entrants = config["role_entrants"].get(role.name, [])
    for statement in role.trust:
        if not statement.allow:
            continue
        for principal in statement.principals or ():
            if principal.kind in ("aws", "*") and principal.value not in entrants:
                named = ", ".join(entrants) or "nobody"
                yield f"role {role.name} lets {principal.value} assume it; the config names {named} for it"
            elif principal.kind == "service" and principal.value.lower() == POD_IDENTITY_SERVICE:
                yield (
                    f"role {role.name} trusts EKS Pod Identity: any service account associated with it later becomes it"
                )
            elif principal.kind == "federated":
                yield from _service_accounts(role, statement, config)


def _service_accounts(role, statement, config):
    subjects = _subjects(statement)
    if not subjects:
        yield f"role {role.name} lets any identity of {statement.principals[0].value} assume it"
    for subject in subjects:
        parts = subject.split(":")
        namespace = parts[2] if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"] else None
        if namespace not in config["platform_namespaces"] or "*" in subject or "?" in subject:
            yield (
                f"role {role.name} lets {subject} assume it: only the platform's own service accounts "
                f"({', '.join(config['platform_namespaces'])}) may"
            )


def _node_role(role) -> bool:
    principals = [p for s in role.trust if s.allow for p in (s.principals or ())]
    return bool(principals) and all(p.kind == "service" and p.value == NODE_SERVICE for p in principals)


def _reached(patterns, targets):
    return [name for name, (matches, _) in targets.items() if any(map(matches, patterns))]


def _callers(identity, targets):
    statements = identity.statements()
    for action, verb in (("sts:assumerole", "assume"), ("iam:passrole", "pass")):
        grants = allowed(statements, action)
        patterns = [r for s in grants for r in (s.resources if not s.not_resource else ["*"])]
        if any(map(reaches_any_role, patterns)):
            yield f"{identity.kind} {identity.name} may {verb} roles of any name, the platform's among them"
            continue
        # A role only AWS services assume may pass node roles: the budget breaker starts nodes.
        reached = [
            name
            for name in _reached(patterns, targets)
            if not (verb == "pass" and targets[name][1] and identity.services_only)
        ]
        if reached:
            yield f"{identity.kind} {identity.name} may {verb} the platform roles {', '.join(reached)}"


def check(resources, config):
    if not config["from_stack_config"]:
        return
    for association in of_types(resources, POD_IDENTITY_ASSOCIATION):
        props = association.props
        yield (
            association.urn,
            (
                f"{association.name}: gives {props.get('roleArn')} to {props.get('namespace')}/"
                f"{props.get('serviceAccount')}; the config names no Pod Identity association"
            ),
        )
    if not of_types(resources, *IDENTITY_TYPES):
        return
    found = identities(resources)
    roles = [i for i in found if i.kind == "role" and i.declared]
    accounts = sorted(home_accounts(resources, config["home_accounts"])) or ["000000000000"]
    # Each platform role: whether a Resource pattern names it, and whether it is a node role.
    targets = {r.name: (lambda p, r=r: r.matched_by(p, accounts), _node_role(r)) for r in roles}
    targets |= {
        arn.rsplit("/", 1)[-1]: (lambda p, a=arn: wildcard_match(p, a), False) for arn in config["platform_roles"]
    }
    for role in roles:
        for message in _trust(role, config):
            yield role.urn, message
    for identity in found:
        for message in _callers(identity, targets):
            yield identity.urn, message


RULE = Rule(
    name="aws-iam-role-restrict-platform-role-entry",
    description="Only the principals the stack config names can become a platform role: by trust, by "
    "service account, by Pod Identity, by assuming or passing it.",
    severity="critical",
    remediation="Name publishers in the serving set's `publisher_principal_arns` (or the team's); give pods "
    "roles with IRSA in the platform's namespaces; grant no identity sts:AssumeRole or iam:PassRole on the "
    "platform's roles.",
    topics=("security", "iam"),
    config={
        "from_stack_config": {"type": "boolean", "default": False},
        "role_entrants": {"type": "object", "default": {}},
        "platform_namespaces": {"type": "array", "items": {"type": "string"}, "default": []},
        "platform_roles": {"type": "array", "items": {"type": "string"}, "default": []},
        "home_accounts": {"type": "array", "items": {"type": "string", "pattern": r"^\d{12}$"}, "default": []},
    },
    check_stack=check,
    standards=(
        "CIS EKS 5.2.1 (dedicated, scoped identities)",
        "EKS BPG: IAM - least-privileged access",
        "EKS User Guide: IAM roles for service accounts (sub and aud conditions)",
    ),
)
