"""The prod plan the security gate and its attack catalogue tamper with."""

import json

import pytest

from seedance.cli import main


@pytest.fixture(scope="module")
def prod_plan(tmp_path_factory):
    path = tmp_path_factory.mktemp("gate") / "prod.json"
    assert main(["plan", "--stack", "prod", "--json", str(path), "--show-secrets"]) == 0
    return json.loads(path.read_text())
