"""The client's `seedance plan` and `check` on bad input: one line naming the file or field, exit 2, and
never a plan against a contract this client cannot read."""

import json

import pytest

from seedance_client.cli import main
from seedance_client.contract import CONTRACT_VERSION
from tests.stacks import REPO

TRAINING = str(REPO / "examples" / "training-job")


def outputs_file(tmp_path, plan_of, **changes):
    outputs = {k: getattr(v, "value", v) for k, v in plan_of("dev").outputs.items()}
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps({**outputs, **changes}))
    return path


def one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("seedance: error: ")
    return err


def test_a_contract_file_that_is_missing_oversized_or_not_an_object_is_one_line(tmp_path, capsys):
    base = ["check", "--stack", "dev", "--program", TRAINING, "--contract"]
    assert "none.json: contract file not found" in one_line_error(capsys, [*base, str(tmp_path / "none.json")])
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    assert "a JSON object" in one_line_error(capsys, [*base, str(listed)])
    big = tmp_path / "big.json"
    big.write_text('{"x": "' + "a" * (65 << 20) + '"}')
    assert "big.json" in one_line_error(capsys, [*base, str(big)])


def test_a_platform_of_an_older_or_other_major_contract_is_refused_before_the_program_runs(tmp_path, capsys, plan_of):
    older = outputs_file(tmp_path, plan_of, contract_version="1.2")
    err = one_line_error(capsys, ["plan", "--stack", "dev", "--program", TRAINING, "--contract", str(older)])
    assert f"exports contract 1.2; this program needs {CONTRACT_VERSION}" in err
    broken = outputs_file(tmp_path, plan_of, gpu_pools="none")
    assert f"do not match contract {CONTRACT_VERSION}" in one_line_error(
        capsys, ["check", "--stack", "dev", "--program", TRAINING, "--contract", str(broken)]
    )


def test_a_plan_file_of_the_platform_is_a_contract_file_too(tmp_path, capsys, plan_of):
    outputs = json.loads(outputs_file(tmp_path, plan_of).read_text())
    document = tmp_path / "platform-plan.json"
    document.write_text(json.dumps({"project": "seedance-gpu", "stack": "dev", "resources": [], "outputs": outputs}))
    assert main(["check", "--stack", "dev", "--program", TRAINING, "--contract", str(document)]) == 0
    assert "fits the platform's contract" in capsys.readouterr().out


@pytest.mark.parametrize("stack, found", [("../dev", "--stack = '../dev'"), ("qa", "Pulumi.qa.yaml")])
def test_a_stack_that_is_a_path_or_has_no_file_is_one_line(tmp_path, capsys, plan_of, stack, found):
    contract = outputs_file(tmp_path, plan_of)
    assert found in one_line_error(
        capsys, ["plan", "--stack", stack, "--program", TRAINING, "--contract", str(contract)]
    )


def test_the_teams_own_config_error_is_one_line(tmp_path, capsys, plan_of):
    stack_file = tmp_path / "Pulumi.bad.yaml"
    stack_file.write_text(
        (REPO / "examples/training-job/Pulumi.dev.yaml")
        .read_text()
        .replace("training-job:gpus: 1", "training-job:gpus: 9")
    )
    err = one_line_error(
        capsys,
        [
            "check",
            "--stack",
            "dev",
            "--program",
            TRAINING,
            "--stack-file",
            str(stack_file),
            "--contract",
            str(outputs_file(tmp_path, plan_of)),
        ],
    )
    assert "training-job:gpus = 9" in err


def test_an_invoke_the_client_cannot_answer_is_named(tmp_path, capsys, plan_of):
    program = tmp_path / "team"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    (program / "Pulumi.dev.yaml").write_text("config: {}\n")
    (program / "__main__.py").write_text("import pulumi_aws as aws\naws.ec2.get_vpc(default=True)\n")
    assert (
        main(["plan", "--stack", "dev", "--program", str(program), "--contract", str(outputs_file(tmp_path, plan_of))])
        == 1
    )
    assert "no answer for invoke aws:ec2/getVpc:getVpc" in capsys.readouterr().err
