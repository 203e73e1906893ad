"""Random damage to valid stack files: every run plans or exits 2 naming a key, never a traceback."""

import contextlib
import copy
import io
import re
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedance.cli import main

REPO = Path(__file__).resolve().parents[2]
BASES = {stack: yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text()) for stack in ("dev", "prod")}
JUNK = st.one_of(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
KEY_IN_MESSAGE = re.compile(r"^seedance: error: invalid config (aws:region|seedance-gpu:[\w.\[\]-]+)")


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))


@st.composite
def damaged_stack(draw):
    stack = draw(st.sampled_from(sorted(BASES)))
    document = copy.deepcopy(BASES[stack])
    paths = sorted(_paths(document["config"]), key=str)
    path = draw(st.sampled_from(paths))
    parent = document["config"]
    for part in path[:-1]:
        parent = parent[part]
    action = draw(st.sampled_from(["replace", "delete", "add_unknown"]))
    if action == "replace":
        parent[path[-1]] = draw(JUNK)
    elif action == "delete":
        del parent[path[-1]]
    else:
        target = parent[path[-1]] if isinstance(parent[path[-1]], dict) else parent
        target[draw(st.sampled_from(["colour", "az", "extra_key"]))] = draw(JUNK)
    return stack, document


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damaged_stack())
def test_damaged_stack_plans_or_exits_2_naming_a_key(tmp_path_factory, case):
    stack, document = case
    stack_file = tmp_path_factory.mktemp("fuzz") / f"Pulumi.{stack}.yaml"
    stack_file.write_text(yaml.safe_dump(document))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["plan", "--stack", stack, "--stack-file", str(stack_file)])
    assert code in (0, 2), err.getvalue()
    if code == 2:
        message = err.getvalue()
        assert KEY_IN_MESSAGE.match(message), message
        assert "Traceback" not in message
