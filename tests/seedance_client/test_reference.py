"""`PlatformReference` as a team's program reads it: a pool the platform does not have stops the program
with one line naming what it has (issue 52: the line, then ~600 lines of the SDK's traceback)."""

from tests.seedance_client.test_cli import TRAINING, one_line_error, outputs_file
from tests.stacks import REPO


def test_a_pool_the_platform_does_not_have_is_one_line_naming_those_it_has(tmp_path, capsys, plan_of):
    stack_file = tmp_path / "Pulumi.dev.yaml"
    dev = (REPO / "examples" / "training-job" / "Pulumi.dev.yaml").read_text()
    stack_file.write_text(dev.replace("training-job:pool: batch", "training-job:pool: p9"))
    contract = outputs_file(tmp_path, plan_of)
    argv = ["check", "--stack", "dev", "--stack-file", str(stack_file), "--program", TRAINING, "--contract"]
    err = one_line_error(capsys, [*argv, str(contract)])
    assert err == "seedance: error: the platform has no GPU pool 'p9'; it has: batch, online\n"
