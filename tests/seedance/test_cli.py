import json
import subprocess
import sys
from pathlib import Path

from seedance.cli import main
from tests.stacks import REPO, bad_stack


def test_plan_writes_json_with_the_engine_inputs(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["plan", "--stack", "prod", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Offline plan (no cloud calls) of stack 'prod'")
    assert "kubeconfig: [secret]" in text
    document = json.loads(out.read_text())
    assert set(document) == {"project", "stack", "resources", "outputs"}
    types = {r["type"] for r in document["resources"]}
    assert {"aws:ec2/vpc:Vpc", "aws:eks/cluster:Cluster", "aws:kms/key:Key", "aws:eks/addon:Addon"} <= types
    vpc = next(r for r in document["resources"] if r["type"] == "aws:ec2/vpc:Vpc")
    assert vpc["inputs"]["cidrBlock"] == "10.60.0.0/16"  # camelCase, as policies see it
    assert document["outputs"]["kubeconfig"] == "[secret]"
    assert "get-token" not in out.read_text()  # no secret leaks into the file


def test_bad_value_exits_2_naming_the_key(tmp_path, capsys):
    stack_file = bad_stack(tmp_path, ["seedance-gpu:network", "az_count"], 0)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("seedance: error: invalid config seedance-gpu:network.az_count = 0")
    assert "Traceback" not in err and err.count("\n") == 1


def test_missing_stack_file_exits_2(capsys):
    assert main(["plan", "--stack", "nosuchstack"]) == 2
    assert "Pulumi.nosuchstack.yaml: stack file not found" in capsys.readouterr().err


def test_crashing_program_exits_1(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: crash\nruntime: python\n")
    (tmp_path / "Pulumi.s.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("raise KeyError('boom')\n")
    assert main(["plan", "--stack", "s", "--program", str(tmp_path)]) == 1
    assert "the program failed" in capsys.readouterr().err


def test_installed_console_script_plans_dev():
    script = Path(sys.executable).parent / "seedance"
    result = subprocess.run(
        [str(script), "plan", "--stack", "dev"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "aws:eks/cluster:Cluster" in result.stdout


def test_plan_shows_each_groups_reference_preview_beside_its_decision(capsys):
    """Issue 38, item 5: on a fresh machine (no lock, no spot prices) every group is decided on-demand,
    and the advisor's reference preview sits under each, marked as not a decision."""
    assert main(["plan", "--stack", "prod"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Capacity decisions"))
    groups = [
        i
        for i, line in enumerate(lines[start:], start)
        if line.startswith("  ") and not line.startswith("    ") and "base" in line
    ][:3]
    assert len(groups) == 3
    for index in groups:
        assert "spot on none" in lines[index]
        assert lines[index + 1].startswith("    reference preview (Spot Instance Advisor, 2025-06-28; not a decision)")
