"""Untrusted YAML read as YAML defines it: merge keys (`<<`) yield to the mapping's own keys, and two own
keys of one name are still refused (the last would silently win)."""

import pytest

from seedance_client.files import InputFileError, load_yaml


def test_a_merge_key_yields_to_the_mappings_own_keys(tmp_path):
    """Issue 37, item 9: `- <<: *grp` then `name: online2` is valid YAML, not a duplicate."""
    path = tmp_path / "stack.yaml"
    path.write_text(
        "groups:\n  - &grp {name: online, min_gpus: 1, max_gpus: 4}\n"
        "  - <<: *grp\n    name: online2\n  - {<<: [*grp], max_gpus: 8}\n"
    )
    assert load_yaml(path, "stack file") == {
        "groups": [
            {"name": "online", "min_gpus": 1, "max_gpus": 4},
            {"name": "online2", "min_gpus": 1, "max_gpus": 4},
            {"name": "online", "min_gpus": 1, "max_gpus": 8},
        ]
    }


@pytest.mark.parametrize(
    "text, key",
    [
        ("a: 1\na: 2\n", "'a'"),
        ("x: &b {k: 1}\ny:\n  <<: *b\n  n: 1\n  n: 2\n", "'n'"),
    ],
)
def test_two_own_keys_of_one_name_are_refused_merge_or_not(tmp_path, text, key):
    path = tmp_path / "stack.yaml"
    path.write_text(text)
    with pytest.raises(InputFileError, match=f"duplicate key {key}"):
        load_yaml(path, "stack file")
