"""The engine runs any Pulumi Python program, not only this repository's."""

import asyncio
import textwrap

import pulumi
import pytest

from seedance.offline_cloud import OfflineCloud
from seedance_client.engine import ProgramFailed, ProgramInputError, Secret, run_program


def write_program(directory, body):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "__main__.py").write_text(textwrap.dedent(body))
    return directory


def test_runs_a_second_program_from_a_temp_dir(tmp_path):
    program = write_program(
        tmp_path / "app",
        """
        import pulumi, pulumi_aws as aws
        cfg = pulumi.Config()
        zones = aws.get_availability_zones(
            state="available", filters=[{"name": "zone-type", "values": ["availability-zone"]}]
        ).names
        bucket = aws.s3.Bucket("models", bucket=cfg.require("bucket"), tags={"team": "a"})
        vol = aws.ebs.Volume("scratch", availability_zone=zones[0], size=10, type="gp3")
        pulumi.export("bucket_arn", bucket.arn)
        pulumi.export("zone", zones[0])
        pulumi.export("token", pulumi.Output.secret("s3cr3t"))
    """,
    )
    plan = run_program(
        program, project="app", stack="test", config={"app:bucket": "b-1"}, mocks=OfflineCloud("eu-west-1")
    )
    assert [r.type for r in plan.resources] == ["aws:ebs/volume:Volume", "aws:s3/bucket:Bucket"]
    assert plan.of_type("aws:ebs/volume:Volume")[0].inputs == {
        "availabilityZone": "eu-west-1a",
        "size": 10,
        "type": "gp3",
    }
    assert plan.outputs["bucket_arn"] == "arn:aws:s3:::b-1"
    assert plan.outputs["token"] == Secret("s3cr3t")


def test_two_runs_in_one_process_are_independent(tmp_path):
    program = write_program(
        tmp_path / "p",
        """
        import pulumi, pulumi_aws as aws
        aws.ec2.Vpc(pulumi.Config().require("name"), cidr_block="10.0.0.0/16")
    """,
    )
    first = run_program(program, project="p", stack="s", config={"p:name": "one"}, mocks=OfflineCloud("us-east-1"))
    second = run_program(program, project="p", stack="s", config={"p:name": "two"}, mocks=OfflineCloud("us-east-1"))
    assert [r.name for r in first.resources] == ["one"]
    assert [r.name for r in second.resources] == ["two"]


def test_run_error_is_an_input_error(tmp_path):
    program = write_program(
        tmp_path / "p",
        """
        import pulumi
        raise pulumi.RunError("invalid config p:x = 1: allowed 2")
    """,
    )
    with pytest.raises(ProgramInputError, match="invalid config p:x = 1"):
        run_program(program, project="p", stack="s", config={}, mocks=OfflineCloud("us-east-1"))


def test_a_module_the_environment_lacks_is_named_with_how_to_get_it(tmp_path):
    """A client-only venv planning a program that needs pulumi_kubernetes: one line, not a traceback."""
    program = write_program(tmp_path / "p", "import seedance_absent_provider\n")
    with pytest.raises(ProgramInputError) as raised:
        run_program(program, project="p", stack="s", config={}, mocks=OfflineCloud("us-east-1"))
    assert str(raised.value) == (
        "the program imports seedance_absent_provider, which this environment does not have: install the "
        f"program's requirements here (pip install -r {program.resolve() / 'requirements.txt'})"
    )


def test_unanswerable_invoke_fails_naming_the_token(tmp_path):
    program = write_program(
        tmp_path / "p",
        """
        import pulumi_aws as aws
        aws.ec2.get_vpc(default=True)
    """,
    )
    with pytest.raises(ProgramFailed, match="no answer for invoke aws:ec2/getVpc:getVpc"):
        run_program(program, project="p", stack="s", config={}, mocks=OfflineCloud("us-east-1"))


def test_directory_without_program_is_refused(tmp_path):
    """A bad --program is the caller's input (exit 2), not a program that failed (exit 1)."""
    with pytest.raises(ProgramInputError, match="no __main__.py"):
        run_program(tmp_path, project="p", stack="s", config={}, mocks=OfflineCloud("us-east-1"))


def test_a_run_after_a_program_failed_inside_an_apply_is_unaffected(tmp_path):
    failing, fine = tmp_path / "failing", tmp_path / "fine"
    for directory in (failing, fine):
        directory.mkdir()
    (failing / "__main__.py").write_text(
        "import pulumi\n"
        "def refuse(_):\n    raise pulumi.RunError('refused inside an apply')\n"
        "pulumi.export('x', pulumi.Output.from_input(1).apply(refuse))\n"
    )
    (fine / "__main__.py").write_text(
        "import pulumi\npulumi.export('y', pulumi.Output.from_input(2).apply(lambda v: v + 1))\n"
    )
    with pytest.raises(ProgramInputError, match="refused inside an apply"):
        run_program(failing, project="p", stack="s", config={}, mocks=OfflineCloud("us-east-1"))
    plan = run_program(fine, project="p", stack="s", config={}, mocks=OfflineCloud("us-east-1"))
    assert plan.outputs == {"y": 3}


def _raised(error: BaseException, during: BaseException | None = None) -> BaseException:
    try:
        try:
            raise during if during else error
        except BaseException:
            if during:
                raise error  # noqa: B904 -- implicitly chained, as the engine's leftovers are
            raise
    except BaseException as caught:
        return caught


@pytest.mark.parametrize(
    "error, logged",
    [
        (pulumi.RunError("invalid config"), False),
        (_raised(asyncio.InvalidStateError("invalid state"), during=pulumi.RunError("invalid config")), False),
        (_raised(asyncio.InvalidStateError("invalid state")), True),
        (_raised(KeyError("a bug"), during=ValueError("another")), True),
    ],
)
def test_only_consequences_of_a_reported_error_go_unlogged(error, logged):
    """A failed run's leftovers ("invalid state" while handling the RunError) are collected at any later
    time; logged then, with a traceback, they once broke an unrelated test's `ast.parse` in CI."""
    from seedance_client.engine import _quiet_about_reported_errors

    class Loop:
        contexts: list = []

        def default_exception_handler(self, context):
            self.contexts.append(context)

    loop = Loop()
    _quiet_about_reported_errors(loop, {"message": "Future exception was never retrieved", "exception": error})
    assert bool(loop.contexts) is logged


def test_a_secret_stays_where_the_program_put_it(tmp_path):
    """One secret value in a mapping hides that value only: the rest of the mapping stays readable (a Helm
    release's values, which the gate renders from the plan file)."""
    program = write_program(
        tmp_path / "app",
        """
        import pulumi, pulumi_kubernetes as k8s
        key = pulumi.Output.secret("-----BEGIN PRIVATE KEY-----")
        k8s.helm.v3.Release(
            "adapter",
            chart="prometheus-adapter",
            values={"tls": {"enable": True, "key": key}, "replicas": [2, key]},
        )
    """,
    )
    plan = run_program(program, project="app", stack="test", config={}, mocks=OfflineCloud("eu-west-1"))
    (release,) = plan.of_type("kubernetes:helm.sh/v3:Release")
    assert release.inputs["values"] == {
        "tls": {"enable": True, "key": Secret("-----BEGIN PRIVATE KEY-----")},
        "replicas": [2, Secret("-----BEGIN PRIVATE KEY-----")],
    }
