"""IAM identities by what they can do and become, whatever resource grants it.

Each role, user and group of a plan is read with every policy it holds: inline (`inlinePolicies`, role, user
and group policies), attached by ARN (`managedPolicyArns`, the attachment resources, a customer policy the
plan makes) and AWS-managed ones by their documents, from a pinned copy of AWS's managed policies
(policies/data/aws_managed_policies.json.gz: an ARN the copy does not hold is unknown, never assumed
harmless). What they allow is judged against Cloudsplaining's privilege-escalation methods and
data-exfiltration actions (policies/data/escalation_actions.json) and the platform's own ways up
(`PLATFORM_ESCALATIONS`). Pure: the rules read plan resources through it.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.plan.resources import (
    IAM_CUSTOMER_POLICY,
    IAM_GROUP,
    IAM_GROUP_MEMBERSHIP,
    IAM_GROUP_POLICY,
    IAM_GROUP_POLICY_ATTACHMENT,
    IAM_POLICY_ATTACHMENT,
    IAM_ROLE,
    IAM_ROLE_POLICY,
    IAM_ROLE_POLICY_ATTACHMENT,
    IAM_USER,
    IAM_USER_GROUP_MEMBERSHIP,
    IAM_USER_POLICY,
    IAM_USER_POLICY_ATTACHMENT,
    PlanResource,
    listed,
)
from components.plan.unknowns import of_types
from policies.readers.iam import PolicyDocumentError, Statement, loaded, names_action, parse, wildcard_match

DATA = Path(__file__).resolve().parents[1] / "data"

# Ways up that Cloudsplaining's list does not carry, each alone enough (pathfinding.cloud and the services'
# API references): commands, a shell, a State Manager association or a serial console on a node run as its
# instance role (which reads every pod's service-account token there); an access entry, its update or an
# access policy association is cluster access granted by IAM alone; a Pod Identity association or a node
# group gives a role to pods or nodes the caller controls; a Lambda function's configuration (its layers,
# its environment) is its code; an existing CodeBuild project's or CloudFormation stack's run takes the
# caller's buildspec or template under the project's or stack's role; a new launch template version is
# booted by the next scale-out (a group on `$Latest`, the cluster autoscaler's).
PLATFORM_ESCALATIONS = {
    "RunCommandOnNodes": ("ssm:sendcommand",),
    "StartSessionOnNodes": ("ssm:startsession",),
    "StateManagerAssociationOnNodes": ("ssm:createassociation",),
    "AutomationAsItsRole": ("ssm:startautomationexecution",),
    "SerialConsoleOnNodes": ("ec2-instance-connect:sendserialconsolesshpublickey",),
    "CreateClusterAccessEntry": ("eks:createaccessentry",),
    "UpdateClusterAccessEntry": ("eks:updateaccessentry",),
    "AssociateClusterAccessPolicy": ("eks:associateaccesspolicy",),
    "PassRoleToPodIdentityAssociation": ("iam:passrole", "eks:createpodidentityassociation"),
    "UpdatePodIdentityAssociation": ("eks:updatepodidentityassociation",),
    "PassRoleToNewNodeGroup": ("iam:passrole", "eks:createnodegroup"),
    "UpdateLambdaFunctionConfiguration": ("lambda:updatefunctionconfiguration",),
    "StartBuildWithOverrides": ("codebuild:startbuild",),
    "StartBuildBatchWithOverrides": ("codebuild:startbuildbatch",),
    "UpdateCodeBuildProject": ("codebuild:updateproject",),
    "UpdateCloudFormationStack": ("cloudformation:updatestack",),
    "NewLaunchTemplateVersion": ("ec2:createlaunchtemplateversion",),
    # Out rather than up: a snapshot of a volume shared with another account carries its data away.
    "ShareVolumeSnapshots": ("ec2:createsnapshot", "ec2:modifysnapshotattribute"),
}
# Reads of data beyond Cloudsplaining's five: an object's older versions, a parameter's history (its values,
# SecureStrings decrypted), secrets in a batch.
PLATFORM_EXFILTRATION = ("s3:getobjectversion", "ssm:getparameterhistory", "secretsmanager:batchgetsecretvalue")
# Pulumi's auto-name: the logical name, a dash and seven random hex digits (what a role without a `name`
# gets; a preview under the engine knows only the logical name).
AUTO_NAME = re.compile(r"(.+)-[0-9a-f]{7}")
MANAGED_ARN = re.compile(r"arn:aws(?:-cn|-us-gov|-iso|-iso-b)?:iam::aws:policy/(.+)")


@functools.cache
def _managed_copy() -> dict[str, Any]:
    return json.loads(gzip.decompress((DATA / "aws_managed_policies.json.gz").read_bytes()))


@functools.cache
def _reference() -> dict[str, Any]:
    return json.loads((DATA / "escalation_actions.json").read_text())


def copy_source() -> dict[str, Any]:
    """Where the managed-policy copy comes from (repository, commit, date, licence, what it lacks)."""
    return _managed_copy()["_source"]


def is_aws_managed(arn: str) -> bool:
    return MANAGED_ARN.fullmatch(arn) is not None


@functools.cache
def managed_statements(arn: str) -> tuple[Statement, ...] | None:
    """The statements of an AWS-managed policy's default version, by its ARN in any partition; None when
    the copy does not hold it under that path (a path is part of the ARN: `service-role/AmazonEBSCSIDriverPolicy`)."""
    found = MANAGED_ARN.fullmatch(arn)
    if found is None:
        return None
    path = found.group(1)
    entry = _managed_copy()["policies"].get(path.rsplit("/", 1)[-1])
    if entry is None or entry["arn"].split(":policy/", 1)[1] != path:
        return None
    return tuple(parse(entry["document"]))


@functools.cache
def escalation_methods() -> dict[str, tuple[str, ...]]:
    """Every method's action set, lower case: Cloudsplaining's, then the platform's own."""
    methods = {name: tuple(actions) for name, actions in _reference()["privilege_escalation"].items()}
    return methods | PLATFORM_ESCALATIONS


@functools.cache
def exfiltration_actions() -> tuple[str, ...]:
    return tuple(dict.fromkeys([*(a.lower() for a in _reference()["data_exfiltration"]), *PLATFORM_EXFILTRATION]))


def _revokes(statement: Statement) -> bool:
    """A Deny that takes its actions away whatever the request: every resource, no condition."""
    return (
        not statement.allow
        and not statement.conditions
        and not statement.not_resource
        and "*" in statement.resources
        and statement.principals is None
    )


def allowed(statements: Sequence[Statement], action: str) -> list[Statement]:
    """The Allow statements that give an action (on any resource, under any condition: a condition or a
    resource the gate cannot weigh never narrows what it counts), none when an unconditional Deny on every
    resource takes it away."""
    if any(_revokes(s) and names_action(s, action) for s in statements):
        return []
    return [s for s in statements if s.allow and names_action(s, action)]


@functools.cache
def _judged_actions() -> frozenset[str]:
    """Every action a judgement here asks about: the methods', the exfiltration set's, assuming a role."""
    methods = {a for actions in escalation_methods().values() for a in actions}
    return frozenset({*methods, *exfiltration_actions(), "sts:assumerole"})


@functools.lru_cache(maxsize=8192)
def _named_by(pattern: str) -> frozenset[str]:
    """The judged actions an Action pattern names (patterns repeat across a plan's roles: each is matched once)."""
    return frozenset(a for a in _judged_actions() if wildcard_match(pattern, a))


@functools.lru_cache(maxsize=16384)
def _statement_actions(statement: Statement) -> frozenset[str]:
    named = frozenset().union(*map(_named_by, statement.actions))
    return _judged_actions() - named if statement.not_action else named


def granted(statements: Sequence[Statement]) -> frozenset[str]:
    """The judged actions the statements allow (as `allowed` counts them)."""
    allows = frozenset().union(*(_statement_actions(s) for s in statements if s.allow))
    revoked = frozenset().union(*(_statement_actions(s) for s in statements if _revokes(s)))
    return allows - revoked


def escalations(statements: Sequence[Statement]) -> list[tuple[str, tuple[str, ...]]]:
    """The escalation methods whose every action the statements allow together."""
    held = granted(statements)
    return [(name, actions) for name, actions in escalation_methods().items() if held.issuperset(actions)]


# A role name no stack chooses: a pattern that matches it reaches roles of any name.
_PROBE = "seedance-probe-7e3a"
_WILD = re.compile(r"[*?$]")
# Where a data store's ARN names the store: a bucket, a parameter path, a secret.
_NAMED_AFTER = {"s3": ":::", "ssm": ":parameter/", "secretsmanager": ":secret:"}


def _of_service(pattern: str, service: str) -> bool:
    """Whether a Resource pattern may name a resource of the service: an ARN that spells another service out
    (an instance's, for SSM parameters) cannot."""
    fields = pattern.split(":")
    return len(fields) < 3 or bool(_WILD.search(fields[2])) or fields[2].lower() == service


def reaches_any_name(pattern: str, service: str) -> bool:
    """Whether a Resource pattern may reach the service's data whatever its name. A positive reading: it
    names its stores as the platform does, spelled out up to a `/` or `-` before any wildcard (a bucket
    `arn:aws:s3:::models/video/*`, parameters `parameter/seedance/*` or `parameter/AmazonCloudWatch-*`, secrets
    `secret:db-password-??????`), or it is taken to reach every one: `*`, `arn:aws:s3:::*X/*`,
    `arn:aws:s3:::models*`, `parameter/*/*`, the root `parameter/`, `secret:a*`."""
    if not _of_service(pattern, service):
        return False
    _, found, name = pattern.partition(_NAMED_AFTER[service])
    literal = _WILD.split(name, 1)[0]
    return not found or not literal or (literal != name and not literal.endswith(("/", "-")))


def exfiltration(statements: Sequence[Statement]) -> list[tuple[str, str]]:
    """(action, resource) for each data-reading action allowed on resources of any name."""
    found = []
    held = granted(statements)
    for action in (a for a in exfiltration_actions() if a in held):
        service = action.split(":", 1)[0]
        for statement in allowed(statements, action):
            if statement.not_resource:
                found.append((action, "every resource but " + ", ".join(statement.resources)))
                break
            reach = [r for r in statement.resources if reaches_any_name(r, service)]
            if reach:
                found.append((action, reach[0]))
                break
    return found


@dataclass
class Identity:
    """A role, user or group (or a customer policy the plan attaches to none) with every policy it holds,
    each as (label, statements), and the ARNs attached to it that the gate cannot read."""

    kind: str  # "role", "user", "group", "policy"
    name: str
    urn: str | None  # the entity's resource, else the first resource that grants it something
    declared: bool = False  # the plan declares the entity itself (not only a policy for it)
    auto_named: bool = False  # `name` is the logical name: the physical one gets Pulumi's suffix
    path: str = "/"
    trust: tuple[Statement, ...] = ()  # a role's trust policy
    policies: list[tuple[str, tuple[Statement, ...]]] = field(default_factory=list)
    unknown_arns: list[tuple[str, str]] = field(default_factory=list)  # (urn of the attaching resource, ARN)
    shared_name: bool = False  # another entity of the plan has its name: AWS refuses one, the gate cannot tell which

    def matched_by(self, pattern: str, accounts: Iterable[str]) -> bool:
        """Whether a Resource pattern names this entity, in any of the accounts and the pattern's partition;
        an auto-named one by the suffixed name a literal pattern gives, else by any suffix."""
        fields = pattern.split(":")
        partition = fields[1] if len(fields) > 1 and fields[1] and "*" not in fields[1] else "aws"
        name = self.name
        if self.auto_named:
            generated = AUTO_NAME.fullmatch(pattern.rsplit("/", 1)[-1])
            name = generated.group(0) if generated and generated.group(1) == self.name else f"{self.name}-0000000"
        return any(
            wildcard_match(pattern, f"arn:{partition}:iam::{account}:{self.kind}{self.path}{name}")
            for account in accounts
        )

    @property
    def services_only(self) -> bool:
        """A role only AWS services assume: no person, pipeline or pod enters it."""
        principals = [p for s in self.trust if s.allow for p in (s.principals or ())]
        return (
            bool(principals)
            and all(p.kind == "service" for p in principals)
            and not any(s.allow and (s.principals is None or s.not_principal) for s in self.trust)
        )

    def statements(self) -> list[Statement]:
        return [s for _, statements in self.policies for s in statements]

    def giving(self, action: str) -> list[str]:
        """The labels of the policies that allow an action."""
        return [label for label, statements in self.policies if allowed(statements, action)]


ENTITY_TYPES = {IAM_ROLE: "role", IAM_USER: "user", IAM_GROUP: "group"}
# Resources that give an entity an inline document: the entity's field, and the document's.
INLINE_POLICIES = {
    IAM_ROLE_POLICY: ("role", "policy"),
    IAM_USER_POLICY: ("user", "policy"),
    IAM_GROUP_POLICY: ("group", "policy"),
}
# Resources that attach a policy by ARN: each entity field and its kind.
ATTACHMENTS = {
    IAM_ROLE_POLICY_ATTACHMENT: (("role", "role"),),
    IAM_USER_POLICY_ATTACHMENT: (("user", "user"),),
    IAM_GROUP_POLICY_ATTACHMENT: (("group", "group"),),
    IAM_POLICY_ATTACHMENT: (("roles", "role"), ("users", "user"), ("groups", "group")),
}
CUSTOMER_POLICY = IAM_CUSTOMER_POLICY
GROUP_MEMBERSHIPS = {IAM_GROUP_MEMBERSHIP: ("users", "group"), IAM_USER_GROUP_MEMBERSHIP: ("user", "groups")}
IDENTITY_TYPES = (*ENTITY_TYPES, *INLINE_POLICIES, *ATTACHMENTS, CUSTOMER_POLICY, *GROUP_MEMBERSHIPS)


def _entity_name(value: Any) -> str:
    """An entity as a reference gives it: its name, or the last part of its ARN."""
    text = str(value)
    return text.rsplit("/", 1)[-1] if text.startswith("arn:") else text


# IAM takes an identity policy's Sid in ASCII letters and digits only, and its Effect as Allow or Deny.
_SID = re.compile(r"[A-Za-z0-9]*")


def _document(text: Any) -> tuple[Statement, ...] | None:
    """An identity policy's statements; None for a document IAM refuses to create (so a Deny in it guards
    nothing, and an Allow beside it in another document stands)."""
    try:
        statements = tuple(parse(text))
        raw = loaded(text) if isinstance(text, str) else text
    except PolicyDocumentError:
        return None
    listed_raw = listed((raw or {}).get("Statement") or []) if isinstance(raw, dict) else []
    for statement in listed_raw:
        if not isinstance(statement, dict):
            return None
        if not _SID.fullmatch(str(statement.get("Sid", ""))) or statement.get("Effect") not in ("Allow", "Deny"):
            return None
    return statements


_LAST: list[tuple[weakref.ref, list[Identity]]] = []  # the last plan read, for the next rule that asks


def identities(resources: Sequence[PlanResource]) -> list[Identity]:
    """Every entity the plan declares or attaches a policy to, with what it holds; read once per plan for
    every rule that asks (a plan is read, never changed)."""
    if _LAST and _LAST[0][0]() is resources:
        return _LAST[0][1]
    found = _identities(resources)
    try:
        _LAST[:] = [(weakref.ref(resources), found)]
    except TypeError:  # a plain list cannot be referred to weakly: read it each time
        pass
    return found


def _identities(resources: Sequence[PlanResource]) -> list[Identity]:
    found: dict[tuple[str, str], Identity] = {}
    aliases: dict[tuple[str, str], tuple[str, str]] = {}
    auto: set[tuple[str, str]] = set()  # entities known by their logical name only

    def entity(kind: str, reference: Any, by: PlanResource) -> Identity:
        key = (kind, _entity_name(reference))
        generated = AUTO_NAME.fullmatch(key[1])
        if key not in aliases and generated and (kind, generated.group(1)) in auto:
            key = (kind, generated.group(1))
        key = aliases.get(key, key)
        if key not in found:
            found[key] = Identity(kind, key[1], by.urn)
        return found[key]

    def hold(identity: Identity, label: str, document: Any) -> None:
        statements = _document(document)
        if statements:  # a document AWS refuses grants nothing (aws-iam-policy-disallow-public-principal names it)
            identity.policies.append((label, statements))

    physical: dict[tuple[str, str], tuple[str, str]] = {}
    for resource in of_types(resources, *ENTITY_TYPES):
        kind = ENTITY_TYPES[resource.type]
        names = {str(n) for n in (resource.props.get("name"), resource.id) if n}
        key = (kind, str(resource.props.get("name") or resource.id or resource.name))
        trust = _document(resource.props.get("assumeRolePolicy")) if kind == "role" else None
        path = str(resource.props.get("path") or "/")
        generated = not resource.props.get("name") and not resource.id
        identity = Identity(kind, key[1], resource.urn, True, generated, path, trust or ())
        taken = [physical[(kind, n)] for n in names if (kind, n) in physical] + ([key] if key in found else [])
        if taken:  # two entities of one name: both are named as such, and a reference goes to the first
            identity.shared_name = True
            for other in taken:
                found[other].shared_name = True
            key = (kind, f"{key[1]} ({resource.name})")
        found[key] = identity
        if generated:
            auto.add(key)
        aliases.setdefault((kind, resource.name), key)
        for n in names:
            physical.setdefault((kind, n), key)
    # A reference is to the entity of that physical name before one whose logical name it happens to be.
    aliases.update(physical)
    customer = {
        str(n): r for r in of_types(resources, CUSTOMER_POLICY) for n in (r.props.get("name"), r.id, r.name) if n
    }
    attached_customer: set[str] = set()

    def attach(identity: Identity, arn: Any, by: PlanResource) -> None:
        arn = str(arn)
        statements = managed_statements(arn) if is_aws_managed(arn) else None
        policy = None if is_aws_managed(arn) else customer.get(_entity_name(arn))
        if statements is not None:
            identity.policies.append((f"AWS-managed {arn.rsplit('/', 1)[-1]}", statements))
        elif policy is not None:
            attached_customer.add(policy.urn)
            hold(identity, f"policy {policy.name}", policy.props.get("policy"))
        else:
            identity.unknown_arns.append((by.urn, arn))

    for resource in of_types(resources, *ENTITY_TYPES):
        identity = entity(
            ENTITY_TYPES[resource.type], resource.props.get("name") or resource.id or resource.name, resource
        )
        for index, inline in enumerate(listed(resource.props.get("inlinePolicies"))):
            if isinstance(inline, dict) and inline.get("policy"):
                hold(identity, f"inline policy {inline.get('name') or index} of {resource.name}", inline["policy"])
        for arn in listed(resource.props.get("managedPolicyArns") or []):
            attach(identity, arn, resource)
    for resource in of_types(resources, *INLINE_POLICIES):
        kind_field, document_field = INLINE_POLICIES[resource.type]
        owner = entity(kind_field, resource.props.get(kind_field), resource)
        hold(owner, resource.name, resource.props.get(document_field))
    for resource in of_types(resources, *ATTACHMENTS):
        for entity_field, kind in ATTACHMENTS[resource.type]:
            for reference in listed(resource.props.get(entity_field) or []):
                attach(entity(kind, reference, resource), resource.props.get("policyArn"), resource)
    for resource in of_types(resources, CUSTOMER_POLICY):
        if resource.urn not in attached_customer:  # judged on its own: it may be attached outside the plan
            owner = entity("policy", resource.props.get("name") or resource.name, resource)
            hold(owner, resource.name, resource.props.get("policy"))
    _join_groups(resources, found, aliases)
    return list(found.values())


def _join_groups(resources, found, aliases) -> None:
    """A user holds what each of its groups holds."""
    for resource in of_types(resources, *GROUP_MEMBERSHIPS):
        users_field, groups_field = GROUP_MEMBERSHIPS[resource.type]
        for user in listed(resource.props.get(users_field) or []):
            for group in listed(resource.props.get(groups_field) or []):
                member = found.get(aliases.get(("user", _entity_name(user)), ("user", _entity_name(user))))
                team = found.get(aliases.get(("group", _entity_name(group)), ("group", _entity_name(group))))
                if member is not None and team is not None:
                    member.policies += [(f"{label} (group {team.name})", s) for label, s in team.policies]


def passable(statements: Sequence[Statement]) -> tuple[bool, list[str]]:
    """The roles the statements may pass to a service or assume: (any role at all, the patterns naming
    roles). Passing a role is becoming it: what runs it (compute of many services) is open-ended."""
    patterns: list[str] = []
    held = granted(statements)
    for action in (a for a in ("iam:passrole", "sts:assumerole") if a in held):
        for statement in allowed(statements, action):
            if statement.not_resource:
                return True, []
            patterns += [p for p in statement.resources if _of_service(p, "iam")]
    return any(reaches_any_role(p) for p in patterns), patterns


def reaches_any_role(pattern: str) -> bool:
    """Whether a Resource pattern matches roles whatever their name (`*`, `arn:aws:iam::<account>:role/*`)."""
    fields = pattern.split(":")
    account = fields[4] if len(fields) > 4 and fields[4].isdigit() else "000000000000"
    return wildcard_match(pattern, f"arn:aws:iam::{account}:role/{_PROBE}")


class Roles:
    """The plan's roles, found by the Resource patterns that name them: a literal ARN by its name at once, a
    pattern by trying each role (each pattern once: a plan repeats a few)."""

    def __init__(self, roles: Sequence[Identity], accounts: Iterable[str]):
        self.all = list(roles)
        self.accounts = list(accounts) or ["000000000000"]
        self._by_name: dict[str, list[Identity]] = {}
        for role in self.all:
            self._by_name.setdefault(role.name, []).append(role)
        self._named: dict[str, list[Identity]] = {}

    def _of_name(self, name: str) -> list[Identity]:
        """The roles of a name: given, or Pulumi's auto-name of their logical one."""
        generated = AUTO_NAME.fullmatch(name)
        auto = [r for r in self._by_name.get(generated.group(1), []) if r.auto_named] if generated else []
        return self._by_name.get(name, []) + auto

    def named_by(self, pattern: str) -> list[Identity]:
        found = self._named.get(pattern)
        if found is None:
            candidates = self.all if _WILD.search(pattern) else self._of_name(pattern.rsplit("/", 1)[-1])
            found = self._named[pattern] = [r for r in candidates if r.matched_by(pattern, self.accounts)]
        return found

    def referred(self, reference: str) -> Identity | None:
        """The role a resource refers to, by ARN or by name."""
        found = self.named_by(reference) if reference.startswith("arn:") else self._of_name(reference)
        return found[0] if found else None


@dataclass(frozen=True)
class Becoming:
    """The roles an identity can become by passing or assuming them."""

    any_role: bool = False  # it may pass or assume roles of any name
    roles: tuple[Identity, ...] = ()  # the plan's roles it may pass or assume
    outside: tuple[str, ...] = ()  # patterns naming only roles the plan does not declare


def becomes(identity: Identity, roles: Roles) -> Becoming:
    """What an identity can become by passing or assuming roles."""
    anything, patterns = passable(identity.statements())
    reached: dict[int, Identity] = {}
    outside = []
    for pattern in patterns:
        hits = [role for role in roles.named_by(pattern) if role is not identity]
        reached |= {id(role): role for role in hits}
        if not hits and not reaches_any_role(pattern):
            outside.append(pattern)
    return Becoming(anything, tuple(reached.values()), tuple(outside))


def reachable(identity: Identity, roles: Roles) -> Becoming:
    """`becomes`, followed through the roles it reaches (a role it becomes may pass others)."""
    first = becomes(identity, roles)
    seen = {id(identity)}
    queue = list(first.roles)
    found: list[Identity] = []
    anything, outside = first.any_role, list(first.outside)
    while queue:
        role = queue.pop(0)
        if id(role) in seen:
            continue
        seen.add(id(role))
        found.append(role)
        step = becomes(role, roles)
        anything = anything or step.any_role
        outside += step.outside
        queue += step.roles
    return Becoming(anything, tuple(found), tuple(dict.fromkeys(outside)))
