"""Each constant has one home: a second definition, a copy of its value, or a Pulumi type token spelled
outside components/plan/resources.py fails here, naming the file and the line."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CODE = ("components", "policies", "seedance", "infra", "bench", "seedance_client")

# name -> (its home, the value a literal copy would spell)
HOMES = {
    "HOURS_PER_MONTH": ("components/pricing/prices.py", 730),
    "DEGRADE": ("components/compute/labels.py", 85),
    "SPOT_ONLY": ("components/compute/labels.py", 95),
    "CLASS_TAG": ("components/compute/labels.py", None),
    "USABLE_MEMORY": ("components/serving/capacity.py", 0.85),
    "WORKLOAD_CLASS_LABEL": ("components/compute/labels.py", "seedance.io/workload-class"),
    "MARKER_NAME": ("seedance_client/publishing.py", None),  # the served prefix's marker, platform and client
    "ASSUMED_PRICE_MARK": ("components/pricing/prices.py", None),
}
# Functions that are the one copy of a piece of arithmetic.
ONE_COPY = {"ceil_share": "components/capacity/mix.py"}
TOKEN = re.compile(r"^(aws|kubernetes|tls|random|pulumi):[A-Za-z0-9./-]+:[A-Za-z0-9]+$")
TOKEN_HOME = "components/plan/resources.py"
# The client's runner cannot import the platform: the engine's two types live in the client, and the home
# above takes them from there.
CLIENT_TOKENS = "seedance_client/tokens.py"
# The offline engine's tables by token: which properties a type has is generated from the pinned SDK;
# the ARN forms (the Service Authorization Reference's) and the stand-in values are its own.
# Tables keyed by type token by design: the offline answers per type, and the gate's list of the types it judges.
TOKEN_TABLES = {"seedance/offline_cloud.py", "policies/known_types.py"}


def modules():
    for top in CODE:
        for path in sorted((REPO / top).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text())


def module_names(tree):
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            for name in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(name, ast.Name):
                    yield name.id, node.lineno
        if isinstance(node, ast.FunctionDef):
            yield node.name, node.lineno


def test_each_constant_and_shared_function_is_defined_in_its_home_only():
    homes = {**{name: home for name, (home, _value) in HOMES.items()}, **ONE_COPY}
    found = {name: [] for name in homes}
    for path, tree in modules():
        for name, line in module_names(tree):
            if name in found:
                found[name].append(f"{path}:{line}")
    for name, places in found.items():
        assert [p.split(":")[0] for p in places] == [homes[name]], f"{name} is defined at {places}"


def test_no_literal_copy_of_a_single_source_value():
    copies = []
    values = {value: (name, home) for name, (home, value) in HOMES.items() if value is not None}
    for path, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value in values:
                if type(node.value) is type(next(v for v in values if v == node.value)):
                    name, home = values[node.value]
                    if path != home:
                        copies.append(f"{path}:{node.lineno} spells {node.value!r}: import {name} from {home}")
    assert copies == []


def test_type_tokens_are_spelled_in_one_place():
    spelled = []
    for path, tree in modules():
        if path in (TOKEN_HOME, CLIENT_TOKENS) or path in TOKEN_TABLES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and TOKEN.match(node.value):
                spelled.append(f"{path}:{node.lineno} {node.value}")
    assert spelled == []


def test_the_lint_sees_a_copy(tmp_path, monkeypatch):
    """The checks above read what they claim to: a copy planted in a module is found."""
    planted = REPO / "components" / "common" / "_planted_copy_for_lint_test.py"
    planted.write_text('HOURS_PER_MONTH = 730\nTYPE = "aws:ec2/vpc:Vpc"\n')
    try:
        for check in (
            test_each_constant_and_shared_function_is_defined_in_its_home_only,
            test_no_literal_copy_of_a_single_source_value,
            test_type_tokens_are_spelled_in_one_place,
        ):
            try:
                check()
            except AssertionError as found:
                assert "_planted_copy_for_lint_test.py" in str(found)
            else:
                raise AssertionError(f"{check.__name__} missed the planted copy")
    finally:
        planted.unlink()
