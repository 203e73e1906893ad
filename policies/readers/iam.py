"""IAM policy documents by meaning: who outside the home accounts (and organisations) may do what.

Every spelling IAM accepts reads the same: a document as JSON text or an object; one statement or a list;
`Principal: "*"`, `{"AWS": "*"}`, account ids, ARNs, services, federated providers, NotPrincipal;
Action/NotAction, Resource/NotResource; condition operators with `IfExists` and `ForAnyValue:`/
`ForAllValues:`, operators and keys compared case-insensitively (as IAM compares keys), values that are
policy variables. A statement lets an outside caller in unless a condition that fails closed names home
callers only; IAM evaluates conditions as AND across keys and OR across one key's values.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from components.plan.resources import listed

# Operators that hold only when the key is present and equal to (or like) a value.
POSITIVE_OPERATORS = frozenset({"stringequals", "stringequalsignorecase", "stringlike", "arnequals", "arnlike"})
NEGATED_OPERATORS = frozenset(
    {"stringnotequals", "stringnotequalsignorecase", "stringnotlike", "arnnotequals", "arnnotlike"}
)
# Condition keys that name who calls or where from, and what their values are.
ACCOUNT_KEYS = frozenset({"aws:sourceaccount", "aws:principalaccount", "kms:calleraccount", "aws:sourceowner"})
ORGANISATION_KEYS = frozenset({"aws:principalorgid", "aws:sourceorgid"})
ORGANISATION_PATH_KEYS = frozenset({"aws:principalorgpaths", "aws:sourceorgpaths"})
ARN_KEYS = frozenset({"aws:sourcearn", "aws:principalarn", "kms:encryptioncontext:aws:logs:arn"})
# Keys whose value the caller supplies (an encryption context): they name a caller only when the caller is
# an AWS service that sets them itself (CloudWatch Logs names its log group), never for `*` or an account.
CALLER_SUPPLIED_KEYS = frozenset({"kms:encryptioncontext:aws:logs:arn"})
ENDPOINT_KEYS = frozenset({"aws:sourcevpce"})
# Keys that name whose resources a request reaches (what an endpoint policy narrows: data stays home).
RESOURCE_ACCOUNT_KEYS = frozenset({"aws:resourceaccount"})
RESOURCE_ORGANISATION_KEYS = frozenset({"aws:resourceorgid"})
VPC_KEYS = frozenset({"aws:sourcevpc"})
ACCOUNT_ID = re.compile(r"[0-9]{12}")  # ASCII: `\d` takes other scripts' digits, which no ARN has


class PolicyDocumentError(ValueError):
    """Text that is not a policy document: AWS refuses it, so nothing is granted, but a gate says so."""


@dataclass(frozen=True)
class Home:
    """Who is inside: the stack's accounts and organisations, and the outside principals the config names.
    Never a network: an endpoint or a VPC says where a request comes from, not who makes it."""

    accounts: frozenset[str] = frozenset()
    principals: frozenset[str] = frozenset()  # exact ARNs of other accounts the stack config names
    organisations: frozenset[str] = frozenset()
    # "<issuer>:<sub>" of each identity of an identity provider other than an EKS cluster's (a CI system's)
    # that the config lets in: such a provider vouches for identities nobody in the stack controls.
    federated_subjects: frozenset[str] = frozenset()


class Principal(NamedTuple):  # tuples: a plan has thousands of statements, built fast
    kind: str  # "*", "aws", "service", "federated", "canonicaluser"
    value: str


class Condition(NamedTuple):
    operator: str  # the base operator, lower case, without IfExists and the set qualifier
    key: str  # lower case: IAM compares condition keys case-insensitively
    values: tuple[str, ...]
    if_exists: bool = False
    qualifier: str | None = None  # "foranyvalue" or "forallvalues"

    @property
    def negated(self) -> bool:
        return self.operator in NEGATED_OPERATORS or self.operator.endswith("notequals")


class Statement(NamedTuple):
    sid: str
    allow: bool
    principals: tuple[Principal, ...] | None  # None: no Principal element (an identity policy's statement)
    not_principal: bool = False
    actions: tuple[str, ...] = ()
    not_action: bool = False
    resources: tuple[str, ...] = ()
    not_resource: bool = False
    conditions: tuple[Condition, ...] = ()

    def what(self) -> str:
        listed = ", ".join(self.actions) or "nothing"
        return f"every action but {listed}" if self.not_action else listed


@dataclass(frozen=True)
class Grant:
    """An outside caller that a statement lets in."""

    statement: Statement  # the statement itself: two statements may share a Sid
    who: str

    @property
    def sid(self) -> str:
        return self.statement.sid

    @property
    def what(self) -> str:
        return self.statement.what()


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in listed(value) if v is not None)


# Each element's two spellings as IAM writes them and in lower case (built once: a plan has thousands of
# statements).
_SPELLINGS = {
    name: ((name, name.lower()), ("Not" + name, "not" + name.lower()))
    for name in ("Sid", "Effect", "Principal", "Action", "Resource", "Condition", "Statement")
}


def _field(statement: dict, lowered: dict[str, Any] | None, name: str) -> tuple[str | None, Any]:
    """The element by IAM's name in any letter case (IAM itself refuses other cases; a gate must not pass
    what a later parser may accept): ("Action", value) or ("NotAction", value). `lowered`: the statement's
    keys by their lower case, None when every key is spelled as IAM spells it (nearly always)."""
    for spelled, lower in _SPELLINGS[name]:
        key = spelled if lowered is None else lowered.get(lower)
        if key is not None and key in statement:
            return spelled, statement[key]
    return None, None


def _principals(value: Any) -> tuple[Principal, ...]:
    if value == "*" or value == ["*"]:
        return (Principal("*", "*"),)
    if not isinstance(value, dict):
        return tuple(Principal("aws", v) for v in _strings(value))
    found = []
    for kind, values in value.items():
        kind = str(kind).lower()
        for item in _strings(values):
            found.append(Principal("*", "*") if kind == "aws" and item == "*" else Principal(kind, item))
    return tuple(found)


def _conditions(block: Any) -> tuple[Condition, ...]:
    found = []
    for operator, tests in (block or {}).items() if isinstance(block, dict) else ():
        name = str(operator).lower()
        qualifier = None
        for prefix in ("foranyvalue:", "forallvalues:"):
            if name.startswith(prefix):
                qualifier, name = prefix[:-1], name[len(prefix) :]
        if_exists = name.endswith("ifexists")
        name = name.removesuffix("ifexists")
        for key, values in (tests or {}).items() if isinstance(tests, dict) else ():
            found.append(Condition(name, str(key).lower(), _strings(values), if_exists, qualifier))
    return tuple(found)


def parse(document: Any) -> list[Statement]:
    """The statements of a policy document given as JSON text or an object."""
    if isinstance(document, str):
        return list(_parsed_text(document))
    return _parsed(document)


@functools.lru_cache(maxsize=4096)
def _parsed_text(text: str) -> tuple[Statement, ...]:
    """A document's text read once per process: several rules read each of a plan's documents."""
    return tuple(_parsed(loaded(text)))


@functools.lru_cache(maxsize=4096)
def loaded(text: str) -> Any:
    """A document's JSON, each object's keys given once (read once per process, as `_parsed_text`)."""
    try:
        return json.loads(text, object_pairs_hook=_without_duplicates)
    except ValueError as error:
        raise PolicyDocumentError(f"not JSON: {error}") from None


def _without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each given once: which of two values a later parser takes is not the
    gate's to guess (`json.loads` keeps the last)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        names = [key for index, (key, _) in enumerate(pairs) if key in dict(pairs[:index])]
        raise ValueError(f"{names[0]!r} is given twice")
    return found


def _parsed(document: Any) -> list[Statement]:
    if not isinstance(document, dict):
        raise PolicyDocumentError(f"a policy document is an object, not {type(document).__name__}")
    _, body = _field(document, {str(k).lower(): k for k in document}, "Statement")
    statements = []
    for index, raw in enumerate(listed(body if body is not None else [])):
        if not isinstance(raw, dict):
            raise PolicyDocumentError(f"statement #{index} is not an object")
        statements.append(statement_of(raw, index))
    return statements


CANONICAL = frozenset(
    {"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource", "Condition"}
)


def statement_of(raw: dict, index: int = 0) -> Statement:
    lowered = None if CANONICAL.issuperset(raw) else {str(k).lower(): k for k in raw}
    _, sid = _field(raw, lowered, "Sid")
    _, effect = _field(raw, lowered, "Effect")
    principal_name, principal = _field(raw, lowered, "Principal")
    action_name, actions = _field(raw, lowered, "Action")
    resource_name, resources = _field(raw, lowered, "Resource")
    _, condition = _field(raw, lowered, "Condition")
    if effect not in ("Allow", "Deny"):  # IAM refuses the document: a gate counting it as a Deny would pass it
        raise PolicyDocumentError(f"statement #{index} has Effect {effect!r}; IAM takes Allow or Deny")
    return Statement(
        sid=str(sid or f"#{index}"),
        allow=effect == "Allow",
        principals=None if principal_name is None else _principals(principal),
        not_principal=principal_name == "NotPrincipal",
        actions=tuple([a.lower() for a in _strings(actions)]) if actions is not None else (),
        not_action=action_name == "NotAction",
        resources=_strings(resources) if resources is not None else (),
        not_resource=resource_name == "NotResource",
        conditions=_conditions(condition),
    )


def account_of(principal: str) -> str | None:
    """The account an AWS principal belongs to: a bare id, or the account field of an ARN."""
    if ACCOUNT_ID.fullmatch(principal):
        return principal
    parts = principal.split(":")
    if len(parts) >= 6 and parts[0] == "arn" and ACCOUNT_ID.fullmatch(parts[4]):
        return parts[4]
    return None


def _literal(value: str) -> bool:
    return "${" not in value and not any(c in value for c in "*?")


def _home_value(key: str, value: str, home: Home) -> bool:
    """Whether one condition value names only home callers."""
    if key in ACCOUNT_KEYS or key in RESOURCE_ACCOUNT_KEYS:
        return _literal(value) and value in home.accounts
    if key in ORGANISATION_KEYS or key in RESOURCE_ORGANISATION_KEYS:
        return _literal(value) and value in home.organisations
    if key in ORGANISATION_PATH_KEYS:  # o-xxx/r-xxx/ou-...: the organisation is the first part
        return "${" not in value and value.split("/", 1)[0] in home.organisations
    if key in ARN_KEYS:
        parts = value.split(":")
        # A wildcard after the account field (a resource path) still names home resources only.
        return len(parts) >= 6 and "${" not in value and _literal(":".join(parts[:5])) and parts[4] in home.accounts
    return False  # a network origin (ENDPOINT_KEYS, VPC_KEYS, source IPs) names no caller


def narrows_to_home(condition: Condition, home: Home) -> bool:
    """A condition that fails for every caller outside home: present-key positive match (no IfExists, no
    ForAllValues, which hold when the key is absent) whose every value names home."""
    if condition.operator not in POSITIVE_OPERATORS or condition.if_exists or condition.qualifier == "forallvalues":
        return False
    return bool(condition.values) and all(_home_value(condition.key, v, home) for v in condition.values)


def _names_callers(condition: Condition) -> bool:
    return condition.key not in RESOURCE_ACCOUNT_KEYS | RESOURCE_ORGANISATION_KEYS


def keeps_data_home(statement: Statement, home: Home) -> bool:
    """Whether a condition holds every request to home resources (aws:ResourceAccount, aws:ResourceOrgID)."""
    return any(not _names_callers(c) and narrows_to_home(c, home) for c in statement.conditions)


def _excludes_outside(statement: Statement, home: Home) -> bool:
    """A Deny for everyone, on every action and resource, unless the caller is home: `StringNotEquals
    aws:PrincipalAccount <home>` and its kin (the organisation guardrail spelling). IAM ANDs a statement's
    conditions, so any other condition (`aws:SecureTransport false`, a region) lets outsiders it does not
    hold for through: every condition must be such a test."""
    if statement.allow or statement.principals is None or statement.not_principal:
        return False
    if Principal("*", "*") not in statement.principals or statement.not_action or statement.not_resource:
        return False
    if "*" not in statement.actions or "*" not in statement.resources or not statement.conditions:
        return False
    return all(_outside_test(condition, home) for condition in statement.conditions)


def _outside_test(condition: Condition, home: Home) -> bool:
    """A negated condition that holds for every caller outside home (and fails closed: no IfExists)."""
    positive = Condition(condition.operator.replace("not", "", 1), condition.key, condition.values)
    return (
        condition.key not in CALLER_SUPPLIED_KEYS
        and condition.negated
        and not condition.if_exists
        and condition.qualifier is None
        and _names_callers(condition)
        and narrows_to_home(positive, home)
    )


# The issuers of EKS clusters' service-account tokens (oidc.eks.<region>.amazonaws.com[.cn]/id/<id>): their
# subjects are the stack's own service accounts.
EKS_ISSUER_PREFIX = "oidc.eks."


def _oidc_issuer(provider: str) -> str | None:
    """The issuer host of an IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/<host/path>)."""
    marker = ":oidc-provider/"
    return provider.split(marker, 1)[1].lower() if marker in provider else None


def _exact(statement: Statement, key: str) -> tuple[str, ...]:
    """The values a fail-closed exact match requires of `key` (empty when no such condition)."""
    for condition in statement.conditions:
        if (
            condition.key == key
            and condition.operator in POSITIVE_OPERATORS
            and not condition.if_exists
            and condition.qualifier != "forallvalues"
            and condition.values
            and all(_literal(v) for v in condition.values)
        ):
            return condition.values
    return ()


def _federated_outside(statement: Statement, provider: str, home: Home) -> str | None:
    issuer = _oidc_issuer(provider)
    if issuer is None:
        return f"the federated provider {provider}"
    account = account_of(provider)
    if account not in home.accounts:
        return f"the identity provider of account {account}"
    subjects = _exact(statement, f"{issuer}:sub")
    if not subjects:
        return f"any identity of {issuer} (no exact :sub condition)"
    for subject in subjects:  # a namespace's default account is every pod there that names none
        parts = subject.split(":")
        if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"] and parts[3] == "default":
            return f"every pod of namespace {parts[2]} that names no service account ({subject})"
    unlisted = [s for s in subjects if f"{issuer}:{s}" not in home.federated_subjects]
    if not issuer.startswith(EKS_ISSUER_PREFIX) and unlisted:
        return f"{issuer}'s identity {', '.join(unlisted)} (not one the config names)"
    if not _exact(statement, f"{issuer}:aud"):
        return f"tokens of {issuer} for any audience (no exact :aud condition)"
    return None


def outside_grants(statements: Iterable[Statement], home: Home, trust: bool = False) -> list[Grant]:
    """The outside callers each Allow lets in. `trust`: a role's trust policy, where a service principal
    is an AWS service assuming the role (iam:PassRole guards that); in a resource policy a service acts for
    any account, so it needs a condition naming home sources (the confused deputy)."""
    statements = list(statements)
    if any(_excludes_outside(s, home) for s in statements):
        return []
    grants = []
    for statement in statements:
        if not statement.allow or statement.principals is None:
            continue
        services_only = not statement.not_principal and all(p.kind == "service" for p in statement.principals)
        if any(
            _names_callers(c) and narrows_to_home(c, home) and (services_only or c.key not in CALLER_SUPPLIED_KEYS)
            for c in statement.conditions
        ):
            continue
        if statement.not_principal:
            grants.append(Grant(statement, "everyone but the principals it names (NotPrincipal)"))
            continue
        for principal in statement.principals:
            who = _outside(statement, principal, home, trust)
            if who is not None:
                grants.append(Grant(statement, who))
    return grants


def _outside(statement: Statement, principal: Principal, home: Home, trust: bool) -> str | None:
    if principal.kind == "*" or principal.value == "*":
        return "anyone (Principal *)"
    if principal.kind == "aws":
        account = account_of(principal.value)
        if account is None:
            return f"{principal.value} (not an account or ARN of one)"
        if account not in home.accounts and principal.value not in home.principals:
            return f"account {account}"
        return None
    if principal.kind == "service":
        return None if trust else f"the service {principal.value} acting for any account"
    if principal.kind == "federated":
        return _federated_outside(statement, principal.value, home)
    return f"{principal.kind} {principal.value}"


ADMIN_ACTIONS = frozenset({"*", "*:*", "iam:*"})


def _part_at(part: str, value: str, at: int) -> bool:
    """Whether a part of a pattern (literal characters and `?`) matches the value at a position."""
    if "?" not in part:
        return value.startswith(part, at)
    return at + len(part) <= len(value) and all(c == "?" or c == value[at + i] for i, c in enumerate(part))


def _part_from(part: str, value: str, start: int, end: int) -> int:
    """The first position in [start, end - len(part)] where the part matches, else -1."""
    if "?" not in part:
        return value.find(part, start, end)
    for at in range(start, end - len(part) + 1):
        if _part_at(part, value, at):
            return at
    return -1


def _glob(pattern: str, value: str) -> bool:
    """IAM's wildcard pattern: `*` any run of characters, `?` one. Matched directly, not by a regular
    expression: a fresh plan's patterns are mostly distinct ARNs, and compiling each costs more than
    matching it. The parts between stars match leftmost, in order (a later part never needs an earlier
    one further right)."""
    if "*" not in pattern:
        return len(pattern) == len(value) and _part_at(pattern, value, 0)
    first, *middle, last = pattern.split("*")
    if len(first) + len(last) > len(value) or not _part_at(first, value, 0):
        return False
    end = len(value) - len(last)
    if not _part_at(last, value, end):
        return False
    at = len(first)
    for part in middle:
        found = _part_from(part, value, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def wildcard_match(pattern: str, value: str) -> bool:
    """An IAM wildcard pattern against a value, case-insensitively (actions, principals' ARNs)."""
    return _glob(pattern.lower(), value.lower())


def names_action(statement: Statement, action: str) -> bool:
    """Whether a statement's Action (or NotAction) covers an action."""
    return any(wildcard_match(pattern, action) for pattern in statement.actions) != statement.not_action


def resource_match(pattern: str, arn: str) -> bool:
    """A Resource pattern against an ARN as IAM matches them: case-sensitively (`bucket/VIDEO/*` is not
    `bucket/video/...`)."""
    return _glob(pattern, arn)


# Condition operators that exempt the principals they list from a Deny (the Deny holds for every other).
EXEMPTING = frozenset({"arnnotequals", "arnnotlike", "stringnotequals", "stringnotlike"})


def _exempting(statement: Statement, exempt: Callable[[frozenset[str]], bool]) -> bool:
    """A Deny for everyone (`*`) but the principals its conditions exempt by `aws:PrincipalArn`, a set
    `exempt` accepts. Fail closed: any other condition (IAM ANDs them: each narrows the Deny), IfExists, a
    pattern among the exempted, or NotPrincipal does not count."""
    if statement.allow or statement.not_principal or statement.principals is None:
        return False
    if not any(p.kind == "*" for p in statement.principals):
        return False
    exempted = frozenset(v for c in statement.conditions for v in c.values)
    return (
        all(
            c.key == "aws:principalarn" and c.operator in EXEMPTING and not c.if_exists and c.qualifier is None
            for c in statement.conditions
        )
        and all(map(_literal, exempted))
        and exempt(exempted)
    )


def undenied(
    statements: Iterable[Statement],
    actions: Iterable[str],
    resources: Iterable[str],
    exempt: Callable[[frozenset[str]], bool],
) -> list[tuple[str, str]]:
    """The (action, resource) pairs no Deny takes from every principal but a set `exempt` accepts."""
    guards = [s for s in statements if _exempting(s, exempt)]
    resources = list(resources)
    # Each guard's reach, once: the resources it covers (NotResource: those it does not name).
    reaches = [
        (guard, {r for r in resources if any(resource_match(p, r) for p in guard.resources) != guard.not_resource})
        for guard in guards
    ]
    open_pairs = []
    for action in actions:
        covered: set[str] = set()
        for guard, reached in reaches:
            if names_action(guard, action):
                covered |= reached
        open_pairs += [(action, r) for r in resources if r not in covered]
    return open_pairs


def denies_all_but(
    statements: Iterable[Statement], action: str, resource: str, exempt: Callable[[frozenset[str]], bool]
) -> bool:
    """Whether a Deny takes `action` on `resource` from every principal but a set `exempt` accepts."""
    return not undenied(statements, [action], [resource], exempt)


def admin_grant(statement: Statement) -> str | None:
    """How an Allow makes its holder an administrator, or None: every action (or every IAM action, or all
    but a few by NotAction) on every resource. Narrower ways up are escalations (policies/readers/identity.py)."""
    if not statement.allow:
        return None
    every_resource = statement.not_resource or "*" in statement.resources
    if every_resource and (statement.not_action or bool(ADMIN_ACTIONS & set(statement.actions))):
        return "on every resource"
    return None
