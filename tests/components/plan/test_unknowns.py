"""Reading a plan the policy SDK's way: a value unknown until apply raises where it is read, with its
path, however it is reached (item, get, values, items, iteration, index, slice, `in`); a container
without one is the plain container; the resource keeps everything but its inputs' wrapping."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan.resources import PlanResource
from components.plan.unknowns import CheckingDict, CheckingList, UnknownValueError, as_read, checking

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown string
NUMBER = "3eeb2bf0-c639-47a8-9e75-3b44932eb421"


def raised(read):
    with pytest.raises(UnknownValueError) as error:
        read()
    return error.value


def test_the_error_says_the_kind_and_the_path():
    error = raised(lambda: checking({"a": {"b": [1, NUMBER]}})["a"]["b"][1])
    assert (error.sentinel, error.path) == (NUMBER, ["a", "b", "1"])
    assert error.message == str(error) == "number value at .a.b.1 can't be known during preview"


@pytest.mark.parametrize(
    "read",
    [
        lambda d: d["x"],
        lambda d: d.get("x"),
        lambda d: d.values(),
        lambda d: d.items(),
        lambda d: d["nested"]["y"],
        lambda d: d["nested"].values(),
        lambda d: d["nested"].items(),
        lambda d: d["items"][1],
        lambda d: d["items"][-1],
        lambda d: d["items"][0:2],
        lambda d: list(d["items"]),
        lambda d: "z" in d["items"],
        lambda d: d["items"][0]["k"],
        # copies and comparisons read every value (dict's and list's own would copy the sentinels unread)
        lambda d: dict(d),
        lambda d: {**d},
        lambda d: {}.update(d),
        lambda d: (lambda **named: named)(**d),
        lambda d: d.copy(),
        lambda d: d | {},
        lambda d: {} | d,
        lambda d: d == {},
        lambda d: d != {},
        lambda d: dict(d["nested"]),
        lambda d: d["nested"] == {"y": "x"},
        lambda d: d["items"] + [],
        lambda d: [] + d["items"],
        lambda d: d["items"] * 1,
        lambda d: 1 * d["items"],
        lambda d: d["items"].copy(),
        lambda d: list(reversed(d["items"])),
        lambda d: d["items"].count(5),
        lambda d: d["items"].index(5),
        lambda d: d["items"] == [],
        lambda d: d["items"] != [],
    ],
)
def test_every_way_of_reading_an_unknown_raises(read):
    document = checking({"x": UNKNOWN, "nested": {"y": UNKNOWN}, "items": [{"k": UNKNOWN}, UNKNOWN], "ok": 1})
    assert isinstance(raised(lambda: read(document)), UnknownValueError)


def test_known_values_beside_an_unknown_read_as_written():
    document = checking({"x": UNKNOWN, "ok": 1, "plain": {"a": [1, 2]}, "items": [5, UNKNOWN, 7]})
    assert isinstance(document, CheckingDict) and document["ok"] == 1 and document.get("missing", 9) == 9
    assert document["plain"] == {"a": [1, 2]} and type(document["plain"]) is dict  # nothing to check inside
    assert document["items"][0] == 5 and document["items"][-1] == 7 and document["items"][2] == 7
    assert isinstance(document["items"], CheckingList) and document["items"] is document["items"]  # opened once
    assert raised(lambda: document["items"][-2]).path == ["items", "1"]
    assert raised(lambda: document["x"]).path == ["x"]


def test_in_reads_the_values_up_to_the_one_it_finds():
    """`in` answers from the known values before an unknown, and reads on past them (raising) otherwise."""
    listed = checking({"l": ["x", UNKNOWN]})["l"]
    assert "x" in listed
    assert raised(lambda: "y" in listed).path == ["l", "1"]


def test_a_container_without_unknowns_is_returned_as_it_is():
    plain = {"a": [1, {"b": "c"}]}
    assert checking(plain) is plain and checking([1, 2]) == [1, 2] and checking("x") == "x"
    wrapped = checking({"a": UNKNOWN})
    assert checking(wrapped) is wrapped


def test_as_read_keeps_the_resource_and_wraps_only_its_inputs():
    resource = PlanResource("urn:a", "aws:ebs/volume:Volume", "a", {"size": UNKNOWN}, "urn:p", ("urn:d",), "vol-1")
    read = as_read(resource)
    assert (read.urn, read.type, read.name, read.parent, read.dependencies, read.id) == (
        "urn:a",
        "aws:ebs/volume:Volume",
        "a",
        "urn:p",
        ("urn:d",),
        "vol-1",
    )
    assert isinstance(read.props, CheckingDict)
    known = PlanResource("urn:b", "aws:ebs/volume:Volume", "b", {"size": 1})
    assert as_read(known) is known


def test_reading_an_unknown_by_values_items_or_iteration_names_its_place():
    read = checking({"spec": {"a": "x", "b": UNKNOWN}, "list": ["x", "(unknown)"]})
    for reading, path in (
        (lambda: read["spec"].values(), ["spec", "b"]),
        (lambda: read["spec"].items(), ["spec", "b"]),
        (lambda: list(read["list"]), ["list", "1"]),
    ):
        with pytest.raises(UnknownValueError) as raised:
            reading()
        assert raised.value.path == path


leaves = st.one_of(st.sampled_from([UNKNOWN, NUMBER, "x", "", 0, 1.5, True, None]), st.text(max_size=3))
values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=2), inner, max_size=4)),
    max_leaves=25,
)


def _holds_unknown(value) -> bool:
    if isinstance(value, dict):
        return any(_holds_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(v) for v in value)
    return value in (UNKNOWN, NUMBER)


def _walk(raw, read, path):
    """Every entry of `raw` read through `read`: an unknown raises with its path, a container is wrapped
    exactly when something inside it is unknown, anything else reads as written."""
    for key, value in raw.items() if isinstance(raw, dict) else enumerate(raw):
        if isinstance(value, (dict, list)):
            entry = read[key]
            assert isinstance(entry, (CheckingDict, CheckingList)) == _holds_unknown(value)
            assert type(value).__eq__(entry, value)  # the same entries (its own == reads them, and may raise)
            _walk(value, entry, [*path, str(key)])
        elif value in (UNKNOWN, NUMBER):
            assert raised(lambda key=key: read[key]).path == [*path, str(key)]
        else:
            assert read[key] == value


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(values, max_size=4), st.dictionaries(st.text(max_size=2), values, max_size=4)))
def test_any_value_reads_its_unknowns_and_only_them(raw):
    read = checking(raw)
    assert (read is raw) == (not _holds_unknown(raw))
    _walk(raw, read, [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=30), st.lists(st.sampled_from("abcde"), max_size=4))
def test_resources_of_types_come_in_plan_order_from_a_read_plan_as_from_any_list(kinds, types):
    """A stack rule asks for its types once (`of_types`): a read plan answers from its index what one pass over
    any other list (the engine's) finds, in plan order, each resource once, however the types repeat."""
    from components.plan.unknowns import of_types, read_plan

    plain = [PlanResource(f"urn:{i}", kind, f"r{i}", {}) for i, kind in enumerate(kinds)]
    expected = [r for r in plain if r.type in types]
    assert of_types(plain, *types) == expected
    assert of_types(read_plan(plain), *types) == expected
