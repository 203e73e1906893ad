import json

import pytest

from seedance_client.project import OFFLINE_SECRET_PLACEHOLDER, StackFileError, find_project, load_stack_config


def test_stack_file_values_reach_the_program_as_the_cli_passes_them(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\nmain: src/\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    stack_file = tmp_path / "stacks" / "Pulumi.dev.yaml"
    stack_file.write_text(
        "config:\n  aws:region: eu-west-1\n  size: 3\n  debug: true\n"
        "  demo:net: {cidr: 10.0.0.0/16}\n  token: {secure: AAABAJ}\n"
    )
    project = find_project(tmp_path / "src")  # found from a subdirectory, as for --program
    assert project.program_dir == tmp_path / "src"
    assert project.stack_file("dev") == stack_file
    config = load_stack_config(project, stack_file)
    assert config.values["aws:region"] == "eu-west-1"
    assert config.values["demo:size"] == "3"  # un-namespaced keys belong to the project
    assert config.values["demo:debug"] == "true"
    assert json.loads(config.values["demo:net"]) == {"cidr": "10.0.0.0/16"}
    assert config.values["demo:token"] == OFFLINE_SECRET_PLACEHOLDER
    assert config.secret_keys == ("demo:token",)


def test_broken_yaml_is_a_stack_file_error_naming_the_file(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: demo\n")
    bad = tmp_path / "Pulumi.x.yaml"
    bad.write_text("config: [unclosed\n")
    with pytest.raises(StackFileError, match="Pulumi.x.yaml: stack file is not valid YAML"):
        load_stack_config(find_project(tmp_path), bad)
