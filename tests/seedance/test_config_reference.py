"""The configuration reference is generated from the models and kept in sync."""

import json
from pathlib import Path

from seedance.cli import main
from seedance.config_reference import markdown_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_docs_match_the_models():
    assert DOCS.read_text() == markdown_reference(), (
        "regenerate: .venv/bin/seedance config docs > docs/configuration.md"
    )


def test_reference_covers_nested_and_list_models():
    text = markdown_reference()
    for key in (
        "`capacity.spot_price_ratio`",
        "`gpu_node_groups[].gpu_sharing.mode`",
        "`storage.checkpoints.profile.random_read_iops`",
        "`serving[].canary.model_prefix`",
    ):
        assert key in text


def test_schema_command_prints_json_schema(capsys):
    assert main(["config", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "StackConfig" and "gpu_node_groups" in schema["properties"]
