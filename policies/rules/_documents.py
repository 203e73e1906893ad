"""IAM policy documents as the security rules read them: parsed, statements listed, and whether a
statement is open to anyone (a `*` principal that no condition ties to known callers)."""

from __future__ import annotations

import json
from typing import Any, Iterator

from components.plan.resources import POLICY_DOCUMENTS, VPC_ENDPOINT, PlanResource

# Condition keys that tie a statement to known callers or sources: with one of them (not negated, not a
# bare wildcard), `Principal: *` is not public.
NARROWING_KEYS = frozenset(key.lower() for key in (
    "aws:SourceAccount", "aws:SourceArn", "aws:SourceOwner", "aws:PrincipalAccount", "aws:PrincipalOrgID",
    "aws:PrincipalOrgPaths", "aws:PrincipalArn", "aws:SourceVpce", "aws:SourceVpc", "aws:userid",
    "kms:CallerAccount"))


def _listed(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def document(resource: PlanResource) -> tuple[str, dict] | None:
    """(kind, parsed document) of a resource that holds one: trust, identity or resource. An endpoint
    policy is never public: it only narrows what identity policies grant. Unparsable text is AWS's to refuse."""
    entry = POLICY_DOCUMENTS.get(resource.type)
    if entry is None or resource.type == VPC_ENDPOINT:
        return None
    key, kind = entry
    text = resource.props.get(key)
    if not text:
        return None
    try:
        parsed = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return None
    return (kind, parsed) if isinstance(parsed, dict) else None


def statements(policy: dict) -> Iterator[tuple[str, dict]]:
    """(Sid or position, statement) of each statement."""
    for index, statement in enumerate(_listed(policy.get("Statement") or [])):
        if isinstance(statement, dict):
            yield str(statement.get("Sid") or f"#{index}"), statement


# Operators that hold only when the key is present and matches: `...IfExists` holds when the key is
# absent, `ForAllValues:` too, and negations hold for every other value.
NARROWING_OPERATORS = frozenset({"StringEquals", "StringEqualsIgnoreCase", "StringLike", "ArnEquals", "ArnLike"})


def _narrowed(statement: dict) -> bool:
    """Whether a condition ties the statement to named callers: a narrowing key, compared by an operator
    that fails when the key is absent, with values that name something (no wildcard)."""
    for operator, tests in (statement.get("Condition") or {}).items():
        if operator not in NARROWING_OPERATORS or not isinstance(tests, dict):
            continue
        for key, values in tests.items():
            if key.lower() in NARROWING_KEYS and not any(c in str(v) for v in _listed(values) for c in "*?"):
                return True
    return False


def open_to_anyone(statement: dict) -> bool:
    """An Allow whose principal is `*` (or AWS `*`) with no condition naming who or where from."""
    if statement.get("Effect") != "Allow" or "NotPrincipal" in statement:
        return statement.get("Effect") == "Allow" and "NotPrincipal" in statement
    principal = statement.get("Principal")
    everyone = principal == "*" or (isinstance(principal, dict) and "*" in _listed(principal.get("AWS", [])))
    return everyone and not _narrowed(statement)
