"""The client's offline plan answers every StackReference with one contract file: it refuses, in one line
and before any verdict, a file that is not the outputs of the stack the program reads, or of a platform in
another region than the stack's (issue 52: the prod stack checked against dev's outputs "fit" and priced a
claim at $5.12 instead of $3,544/month)."""

import pytest

from seedance_client.offline import referenced_stack
from tests.seedance_client.test_cli import TRAINING, one_line_error, outputs_file


@pytest.mark.parametrize(
    "reference, named",
    [("dev", "team/dev"), ("my-org/dev", "team/dev"), ("my-org/seedance-gpu/dev", "seedance-gpu/dev")],
)
def test_a_reference_names_a_stack_of_its_own_project_unless_it_names_one(reference, named):
    assert referenced_stack(reference, "team") == named


def test_the_outputs_of_another_stack_are_refused_in_one_line(tmp_path, capsys, plan_of):
    other = outputs_file(tmp_path, plan_of, stack="seedance-gpu/staging")
    err = one_line_error(capsys, ["check", "--stack", "dev", "--program", TRAINING, "--contract", str(other)])
    assert "holds the outputs of seedance-gpu/staging, but the program reads stack 'my-org/seedance-gpu/dev'" in err
    assert "pulumi stack output --json -s my-org/seedance-gpu/dev" in err
    assert capsys.readouterr().out == ""


def test_outputs_that_do_not_name_their_stack_are_refused(tmp_path, capsys, plan_of):
    unnamed = outputs_file(tmp_path, plan_of, stack="")
    err = one_line_error(capsys, ["plan", "--stack", "dev", "--program", TRAINING, "--contract", str(unnamed)])
    assert "outputs that do not name their stack" in err


def test_a_platform_in_another_region_than_the_stack_is_refused(tmp_path, capsys, plan_of):
    elsewhere = outputs_file(tmp_path, plan_of, region="eu-west-1")
    err = one_line_error(capsys, ["check", "--stack", "dev", "--program", TRAINING, "--contract", str(elsewhere)])
    assert "a platform in eu-west-1; stack 'dev' is in us-west-2 (its aws:region)" in err


def test_the_outputs_of_the_stack_the_program_reads_are_used(tmp_path, capsys, plan_of):
    own = outputs_file(tmp_path, plan_of)
    assert main_exit(["check", "--stack", "dev", "--program", TRAINING, "--contract", str(own)]) == 0
    assert "fits the platform's contract" in capsys.readouterr().out


def main_exit(argv):
    from seedance_client.cli import main

    return main(argv)
