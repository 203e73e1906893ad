"""policies/readers/iam.py: whether a condition holds every caller home, judged value by value."""

import pytest

from policies.readers.iam import Condition, Home, narrows_to_home

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
