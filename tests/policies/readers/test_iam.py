"""policies/readers/iam.py: whether a condition holds every caller home, judged value by value; IAM's
wildcard patterns matched as a regular expression would match them."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policies.readers.iam import Condition, Home, narrows_to_home, resource_match, wildcard_match

HOME = Home(accounts=frozenset({"111122223333"}), organisations=frozenset({"o-home"}))
OUTSIDE = "444455556666"


@pytest.mark.parametrize(
    "key, values",
    [
        ("aws:principalaccount", ("111122223333", OUTSIDE)),
        ("aws:principalaccount", (OUTSIDE, "111122223333")),
        ("aws:principalorgid", ("o-home", "o-elsewhere")),
        ("aws:resourceaccount", ("111122223333", OUTSIDE)),
    ],
)
def test_one_outside_value_among_home_ones_lets_outsiders_in(key, values):
    assert not narrows_to_home(Condition("stringequals", key, values), HOME)


def test_home_values_only_narrow_to_home():
    assert narrows_to_home(Condition("stringequals", "aws:principalaccount", ("111122223333",)), HOME)
    assert narrows_to_home(Condition("stringequals", "aws:principalorgid", ("o-home",)), HOME)


@pytest.mark.parametrize(
    "condition",
    [
        Condition("stringequals", "aws:principalaccount", ()),
        Condition("stringequals", "aws:principalaccount", ("111122223333",), if_exists=True),
        Condition("stringequals", "aws:principalaccount", ("111122223333",), qualifier="forallvalues"),
        Condition("stringnotequals", "aws:principalaccount", ("111122223333",)),
        Condition("stringlike", "aws:principalaccount", ("1111*",)),
    ],
    ids=["no values", "IfExists", "ForAllValues", "negated", "wildcard"],
)
def test_conditions_that_hold_when_the_key_is_absent_or_loose_are_not_home(condition):
    assert not narrows_to_home(condition, HOME)


def test_a_deny_for_all_but_some_is_found_after_statements_that_are_not_it_and_judged_case_sensitively():
    """An Allow, and a Deny for one principal, before the guard are passed over; the guard's resource is
    matched as IAM matches ARNs, letter case included; its exceptions are the principals `exempt` accepts,
    by exact ARN, under no other condition."""
    from policies.readers.iam import denies_all_but, parse

    publisher = "arn:aws:iam::123456789012:role/publisher"
    guard = {
        "Effect": "Deny",
        "Principal": "*",
        "Action": ["s3:PutObject", "s3:DeleteObject"],
        "Resource": "arn:aws:s3:::models/serving/*",
        "Condition": {"ArnNotEquals": {"aws:PrincipalArn": publisher}},
    }
    key = "arn:aws:s3:::models/serving/m/1/model.plan"
    exempt = {publisher}.issuperset
    for first in (
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"},
        {"Effect": "Deny", "Principal": {"AWS": "arn:aws:iam::123456789012:role/x"}, "Action": "s3:*", "Resource": "*"},
    ):
        assert denies_all_but(parse({"Statement": [first, guard]}), "s3:putobject", key, exempt)
    assert not denies_all_but(parse({"Statement": [guard]}), "s3:putobject", key.replace("serving", "SERVING"), exempt)
    assert not denies_all_but(parse({"Statement": [guard]}), "s3:replicateobject", key, exempt)
    patterned = {**guard, "Condition": {"ArnNotLike": {"aws:PrincipalArn": "arn:aws:iam::123456789012:role/*"}}}
    assert not denies_all_but(parse({"Statement": [patterned]}), "s3:putobject", key, exempt)
    everything_but = {**guard, "NotResource": "arn:aws:s3:::models/public/*"}
    del everything_but["Resource"]
    assert denies_all_but(parse({"Statement": [everything_but]}), "s3:putobject", key, exempt)


def _as_regex(pattern: str, flags: int = 0) -> re.Pattern:
    """IAM's wildcards as the obvious regular expression: the reference the direct matcher must agree with."""
    return re.compile(".*".join(".".join(map(re.escape, part.split("?"))) for part in pattern.split("*")), flags)


# Few letters, so that patterns and values often overlap (and a part often matches in several places).
LETTERS = st.text(alphabet="aAb/:*?", max_size=12)
VALUES = st.text(alphabet="aAb/:", max_size=14)


@given(LETTERS, VALUES)
def test_wildcards_match_as_the_regular_expression_does(pattern, value):
    assert resource_match(pattern, value) == (_as_regex(pattern).fullmatch(value) is not None)
    assert wildcard_match(pattern, value) == (_as_regex(pattern, re.IGNORECASE).fullmatch(value) is not None)


@pytest.mark.parametrize(
    "pattern, value, matches",
    [
        ("arn:aws:s3:::models/*", "arn:aws:s3:::models/video/1/model.onnx", True),
        ("arn:aws:s3:::models/*", "arn:aws:s3:::models", False),
        ("arn:aws:s3:::Models/*", "arn:aws:s3:::models/a", False),  # resources: case-sensitive
        ("a*b*b", "abb", True),  # the middle part may not take the last part's characters
        ("a*b*b", "ab", False),
        ("*a?", "xxab", True),
        ("?", "", False),
    ],
)
def test_resource_patterns_match_by_wildcard_and_case(pattern, value, matches):
    assert resource_match(pattern, value) is matches
