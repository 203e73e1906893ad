"""A small IAM policy evaluator for endpoint and resource policies, so tests can state what must be
reachable and what must not, instead of comparing documents to copies of themselves.

It models what these policies use: Allow/Deny, `*` and `?` wildcards in Action and Resource (and
NotResource), and the
condition operators StringEquals, StringLike, ArnEquals, ArnLike, Bool and Null, where a key absent from the
request fails the condition (as IAM does without `IfExists`), and their negations, which a key absent holds.
Anything else raises, rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

_OPERATORS = {"StringEquals": False, "ArnEquals": False, "Bool": False, "StringLike": True, "ArnLike": True}
# Negated operators: they hold when the key is absent or no value matches (IAM's rule for ...Not... operators).
_NEGATED = {"StringNotEquals": False, "StringNotLike": True, "ArnNotEquals": False, "ArnNotLike": True}


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    context: dict[str, str] = field(default_factory=dict)  # e.g. {"aws:PrincipalAccount": "1234..."}


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _matches(pattern: str, value: str, *, case_sensitive: bool = True) -> bool:
    return fnmatchcase(value, pattern) if case_sensitive else fnmatchcase(value.lower(), pattern.lower())


def _conditions_hold(conditions: dict[str, dict[str, Any]], context: dict[str, str]) -> bool:
    for operator, tests in conditions.items():
        if operator == "Null":  # "true": the key must be absent; "false": present
            if any((key not in context) != (str(expected).lower() == "true") for key, expected in tests.items()):
                return False
            continue
        if operator not in _OPERATORS and operator not in _NEGATED:
            raise NotImplementedError(f"condition operator {operator} is not modelled")
        negated, wildcard = operator in _NEGATED, {**_OPERATORS, **_NEGATED}[operator]
        for key, expected in tests.items():
            actual = context.get(key)
            matched = actual is not None and any(
                _matches(v, actual) if wildcard else v == actual for v in _listed(expected)
            )
            if matched == negated:
                return False
    return True


def _applies(statement: dict[str, Any], request: Request) -> bool:
    if "NotAction" in statement or "NotPrincipal" in statement:
        raise NotImplementedError("NotAction and NotPrincipal are not modelled")
    actions = _listed(statement.get("Action", []))
    if "NotResource" in statement:  # every resource but those it names
        reached = not any(_matches(r, request.resource) for r in _listed(statement["NotResource"]))
    else:
        reached = any(_matches(r, request.resource) for r in _listed(statement.get("Resource", "*")))
    return (
        any(_matches(a, request.action, case_sensitive=False) for a in actions)
        and reached
        and _conditions_hold(statement.get("Condition", {}), request.context)
    )


def denies(policy: dict[str, Any], request: Request) -> bool:
    """True when some statement denies the request explicitly (what a bucket policy's denials decide)."""
    return any(s["Effect"] == "Deny" and _applies(s, request) for s in policy["Statement"])


def allows(policy: dict[str, Any], request: Request) -> bool:
    """True when some statement allows the request and none denies it."""
    return not denies(policy, request) and any(
        s["Effect"] == "Allow" and _applies(s, request) for s in policy["Statement"]
    )
