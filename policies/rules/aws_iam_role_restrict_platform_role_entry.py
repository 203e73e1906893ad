"""The only ways into the platform's roles are the ones the stack config names. Every role the platform's
plan declares is a platform role (Triton's model roles, the publishers, the node roles, the controllers'),
and so is the deployer the config names:

- a trust policy lets in, of people and pipelines, only the principals the config names for that role (a
  serving set's publishers for its publisher role, nobody for any other);
- a web-identity (IRSA) trust names, by StringEquals, service accounts of the platform's own namespaces
  only, never a team's, through the plan's own cluster's OIDC provider (an EKS issuer, not a look-alike or
  another cluster's);
- a role a service assumes trusts that one service, one the program runs (EC2 nodes, EKS, Lambda, flow log
  delivery), and no person, pipeline or pod besides: no role trusts EKS Pod Identity, and neither the plan
  nor an add-on makes a Pod Identity association;
- what the plan runs as a role runs as one of its own that trusts that compute alone: a Lambda function,
  an EventBridge target, an instance profile (a node role only), a launch template's instance profile (one
  the plan makes); no EventBridge target runs commands on instances;
- only the plan's node roles join the cluster as nodes (an access entry of a node type);
- no identity of the plan may assume a platform role, and only a role that AWS services alone assume may
  pass one, a node role only (the budget breaker starts nodes).

Judged with the stack config (`seedance check`, the pack under `pulumi preview` of this project); a team's
plan, checked against a contract, names no platform role."""

import json
import re

from components.plan.resources import (
    CODEBUILD_PROJECT,
    ECS_TASK_DEFINITION,
    EKS_ACCESS_ENTRY,
    EKS_ADDON,
    EKS_POD_IDENTITY_ASSOCIATION,
    EVENT_TARGET,
    HELM_RELEASE,
    K8S_SERVICE_ACCOUNT,
    LAMBDA_FUNCTION,
    LAUNCH_TEMPLATE,
    SFN_STATE_MACHINE,
    listed,
)
from components.plan.resources import IAM_INSTANCE_PROFILE as INSTANCE_PROFILE
from components.plan.resources import IAM_OIDC_PROVIDER as OIDC_PROVIDER
from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.iam import wildcard_match
from policies.readers.identity import IDENTITY_TYPES, Roles, allowed, granted, identities, reaches_any_role
from policies.rules._helpers import home_accounts

NODE_SERVICE = "ec2.amazonaws.com"
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
# The services the program's roles trust (components/common/iam.py: service_assume_role_policy's callers).
# S3: replication between the plan's buckets (aws-s3-bucket-restrict-replication judges where to).
ROLE_SERVICES = frozenset(
    {NODE_SERVICE, "eks.amazonaws.com", "lambda.amazonaws.com", "vpc-flow-logs.amazonaws.com", "s3.amazonaws.com"}
)
# Compute that runs as a role: where it names the role, and the one service that role must trust.
RUNS_AS = {
    LAMBDA_FUNCTION: ("role", "lambda.amazonaws.com"),
    EVENT_TARGET: ("roleArn", "events.amazonaws.com"),
    INSTANCE_PROFILE: ("role", NODE_SERVICE),
    SFN_STATE_MACHINE: ("roleArn", "states.amazonaws.com"),
    ECS_TASK_DEFINITION: ("taskRoleArn", "ecs-tasks.amazonaws.com"),
    CODEBUILD_PROJECT: ("serviceRole", "codebuild.amazonaws.com"),
}
# Access entry types that join system:nodes.
NODE_ENTRY_TYPES = frozenset({"EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX", "HYBRID_LINUX"})
# StringLike with no wildcard in its values matches as StringEquals does (a wildcard is refused below).
EXACT = frozenset({"stringequals", "stringlike"})
EKS_ISSUER = re.compile(r"oidc\.eks\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/id/[0-9A-F]+")


def _services(role):
    return {p.value.lower() for s in role.trust if s.allow for p in (s.principals or ()) if p.kind == "service"}


def _node_role(role) -> bool:
    return role.services_only and _services(role) == {NODE_SERVICE}


def _trust(role, config, providers, given):
    entrants = config["role_entrants"].get(role.name, [])
    services = _services(role)
    for service in sorted(services - ROLE_SERVICES):
        if service == POD_IDENTITY_SERVICE:
            yield f"role {role.name} trusts EKS Pod Identity: any service account associated with it later becomes it"
        else:
            yield f"role {role.name} trusts {service}: the program runs no role for it; what it runs becomes the role"
    if len(services) > 1:
        yield f"role {role.name} trusts {', '.join(sorted(services))}: a role is assumed by one service"
    for statement in role.trust:
        if not statement.allow:
            continue
        for principal in statement.principals or ():
            if principal.kind in ("aws", "*") and principal.value not in entrants:
                named = ", ".join(entrants) or "nobody"
                yield f"role {role.name} lets {principal.value} assume it; the config names {named} for it"
            elif principal.kind == "federated":
                yield from _service_accounts(role, statement, principal.value, config, providers, given)
            elif principal.kind not in ("aws", "*", "service"):
                yield f"role {role.name} lets {principal.kind} {principal.value} assume it"
    if services & ROLE_SERVICES and not role.services_only:
        yield (
            f"role {role.name} trusts {', '.join(sorted(services))} as well as people, pipelines or pods: whatever "
            "that service runs with the role becomes it"
        )


IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
ANY_ACCOUNT = "*"


ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+")


def claims(resources, roles):
    """Which service accounts the plan gives each role to: (namespace, name) of a ServiceAccount annotated
    with its ARN; (namespace, any) of a Helm release whose values name it (the chart's accounts) or an EKS
    add-on's `serviceAccountRoleArn` (kube-system)."""
    given: dict[str, set[tuple[str, str]]] = {}

    def give(arn, namespace, name):
        role = roles.referred(str(arn)) if str(arn).startswith("arn:") else None
        if role is not None:
            given.setdefault(role.name, set()).add((str(namespace), str(name)))

    for account in of_types(resources, K8S_SERVICE_ACCOUNT):
        metadata = account.props.get("metadata") or {}
        arn = (metadata.get("annotations") or {}).get(IRSA_ANNOTATION)
        if arn:
            give(arn, metadata.get("namespace") or "default", metadata.get("name"))
    for release in of_types(resources, HELM_RELEASE):
        for arn in ROLE_ARN.findall(json.dumps(release.props.get("values") or {})):
            give(arn, release.props.get("namespace") or "default", ANY_ACCOUNT)
    for addon in of_types(resources, EKS_ADDON):
        if addon.props.get("serviceAccountRoleArn"):
            give(addon.props["serviceAccountRoleArn"], "kube-system", ANY_ACCOUNT)
    return given


def _service_accounts(role, statement, provider, config, providers, given):
    issuer = provider.split(":oidc-provider/", 1)[-1]
    if provider not in providers or not EKS_ISSUER.fullmatch(issuer):
        yield f"role {role.name} trusts {provider}: not the OIDC provider of the plan's cluster"
    subjects = [
        value
        for c in statement.conditions
        if c.key == f"{issuer.lower()}:sub"
        for value in (c.values if c.operator in EXACT and not c.if_exists and c.qualifier is None else ["*"])
    ]
    if not subjects:
        yield f"role {role.name} lets any identity of {provider} assume it"
    for subject in subjects:
        parts = subject.split(":")
        namespace = parts[2] if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"] else None
        if namespace not in config["platform_namespaces"] or any(c in subject for c in "*?$"):
            yield (
                f"role {role.name} lets {subject} assume it: only the platform's own service accounts, by "
                f"StringEquals ({', '.join(config['platform_namespaces'])}), may"
            )
        elif not {(namespace, parts[3]), (namespace, ANY_ACCOUNT)} & given.get(role.name, set()):
            yield (
                f"role {role.name} lets {subject} assume it, but nothing in the plan gives that service account the "
                "role (an annotated ServiceAccount, a release's values, an add-on)"
            )


def _callers(identity, roles, outside_roles):
    statements = identity.statements()
    held = granted(statements)
    for action, verb in (("sts:assumerole", "assume"), ("iam:passrole", "pass")):
        grants = allowed(statements, action) if action in held else []
        if not grants:
            continue
        patterns = [r for s in grants for r in (s.resources if not s.not_resource else ["*"])]
        if any(map(reaches_any_role, patterns)):
            yield f"{identity.kind} {identity.name} may {verb} roles of any name, the platform's among them"
            continue
        # A role only AWS services assume may pass node roles: the budget breaker starts nodes.
        reached = {
            role.name: None
            for pattern in patterns
            for role in roles.named_by(pattern)
            if not (verb == "pass" and _node_role(role) and identity.services_only)
        }
        reached |= {
            arn.rsplit("/", 1)[-1]: None for arn in outside_roles if any(wildcard_match(p, arn) for p in patterns)
        }
        if reached:
            yield f"{identity.kind} {identity.name} may {verb} the platform roles {', '.join(reached)}"


def _compute(resources, roles):
    """What the plan runs as a role, and node identities in the cluster."""
    for resource in of_types(resources, *RUNS_AS):
        field, service = RUNS_AS[resource.type]
        reference = resource.props.get(field)
        if resource.type == EVENT_TARGET:
            if resource.props.get("runCommandTargets") or ":document/" in str(resource.props.get("arn")):
                yield resource.urn, f"{resource.name}: runs commands on instances, as whatever role they hold"
        if not reference:
            continue
        role = roles.referred(str(reference))
        if role is None or not role.services_only or _services(role) != {service}:
            yield (
                resource.urn,
                (f"{resource.name}: runs as {reference}, which is not a role of the plan that {service} alone assumes"),
            )
        elif resource.type == INSTANCE_PROFILE and not _node_role(role):
            yield resource.urn, f"{resource.name}: gives nodes {reference}, which is not a node role"
    for function in of_types(resources, LAMBDA_FUNCTION):
        for layer in listed(function.props.get("layers") or []):
            account = str(layer).split(":")[4] if str(layer).count(":") >= 4 else None
            if account not in roles.accounts:
                yield function.urn, f"{function.name}: runs layer {layer}, code of another account, as its role"
    profiles = {str(n) for p in of_types(resources, INSTANCE_PROFILE) for n in (p.props.get("name"), p.id, p.name) if n}
    for template in of_types(resources, LAUNCH_TEMPLATE):
        for profile in listed(template.props.get("iamInstanceProfile") or []):
            named = str((profile or {}).get("arn") or (profile or {}).get("name") or "").rsplit("/", 1)[-1]
            if named not in profiles:
                yield (
                    template.urn,
                    f"{template.name}: launches nodes as {named}, an instance profile the plan does not make",
                )
    for entry in of_types(resources, EKS_ACCESS_ENTRY):
        if str(entry.props.get("type") or "STANDARD") in NODE_ENTRY_TYPES:
            role = roles.referred(str(entry.props.get("principalArn")))
            if role is None or not _node_role(role):
                yield (
                    entry.urn,
                    (
                        f"{entry.name}: joins {entry.props.get('principalArn')} to the cluster as a node; only the "
                        "plan's node roles are nodes"
                    ),
                )


def check(resources, config):
    if not config["from_stack_config"]:
        return
    for association in of_types(resources, EKS_POD_IDENTITY_ASSOCIATION):
        props = association.props
        yield (
            association.urn,
            (
                f"{association.name}: gives {props.get('roleArn')} to {props.get('namespace')}/"
                f"{props.get('serviceAccount')}; the config names no Pod Identity association"
            ),
        )
    for addon in of_types(resources, EKS_ADDON):
        if addon.props.get("podIdentityAssociations"):
            yield addon.urn, f"{addon.name}: makes Pod Identity associations; the config names none"
    if not of_types(resources, *IDENTITY_TYPES):
        return
    found = identities(resources)
    accounts = sorted(home_accounts(resources, config["home_accounts"])) or ["000000000000"]
    roles = Roles([i for i in found if i.kind == "role" and i.declared], accounts)
    issuers = [str(p.props.get("url")).removeprefix("https://") for p in of_types(resources, OIDC_PROVIDER)]
    eks_issuers = [issuer for issuer in issuers if EKS_ISSUER.fullmatch(issuer)]
    if len(eks_issuers) > 1:  # the platform registers its own cluster's issuer only
        yield None, f"the plan registers {len(eks_issuers)} EKS clusters' OIDC issuers; a cluster's is its own alone"
    providers = {f"arn:aws:iam::{account}:oidc-provider/{issuer}" for issuer in eks_issuers for account in accounts}
    given = claims(resources, roles)
    for role in roles.all:
        for message in _trust(role, config, providers, given):
            yield role.urn, message
    for identity in found:
        for message in _callers(identity, roles, config["platform_roles"]):
            yield identity.urn, message
    yield from _compute(resources, roles)


RULE = Rule(
    name="aws-iam-role-restrict-platform-role-entry",
    description="Only the principals the stack config names can become a platform role: by trust, by "
    "service account, by Pod Identity, by what runs as it, by assuming or passing it.",
    severity="critical",
    remediation="Name publishers in the serving set's `publisher_principal_arns` (or the team's); give pods "
    "roles with IRSA in the platform's namespaces; run compute as a role of the plan that its service alone "
    "assumes; grant no identity sts:AssumeRole or iam:PassRole on the platform's roles.",
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
