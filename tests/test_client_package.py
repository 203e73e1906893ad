"""The client an application team installs: one top-level name, nothing of the platform, versioned as the
contract it reads."""

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from seedance_client.contract import CONTRACT_VERSION
from tests.stacks import REPO

CLIENT = REPO / "seedance_client"


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory):
    """The client's wheel, built once for this module's tests."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "seedance_client"  # a build writes beside its sources: build a copy
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = root.glob("seedance_infra_client-*.whl")
    return wheel


def test_the_client_wheel_holds_the_client_only(client_wheel):
    wheel = client_wheel
    top_level = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {name for name in top_level if not name.endswith(".dist-info")} == {"seedance_client"}
    modules = {name for name in zipfile.ZipFile(wheel).namelist() if name.startswith("seedance_client/")}
    assert {
        f"seedance_client/{m}.py"
        for m in ("contract", "reference", "publishing", "cli", "offline", "engine", "team_rules", "project", "files")
    } <= modules
    assert not any(name.endswith("pyproject.toml") for name in modules)
    entry_points = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("entry_points.txt"))
    assert "seedance = seedance_client.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_client_is_versioned_as_the_contract_and_needs_no_platform():
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert project["version"].startswith(CONTRACT_VERSION + ".")
    assert not [d for d in project["dependencies"] if d.startswith(("pulumi-aws", "pulumi-kubernetes"))]
    assert project["name"] != "seedance-client"  # a stranger's project on the public index


@pytest.fixture(scope="module")
def team_python(tmp_path_factory, client_wheel):
    """A team's own virtualenv with the client wheel alone: its dependencies on the path (pydantic, pulumi,
    pulumi-aws, pulumi-kubernetes, boto3, and moto for the tests' S3), the platform not. Its interpreter."""
    import venv

    import pydantic

    root = tmp_path_factory.mktemp("team")
    team = root / "team-venv"
    venv.EnvBuilder(with_pip=False).create(team)
    site = next((team / "lib").glob("python3*/site-packages"))
    # This venv's site-packages as a path, not its .pth files, so the platform's editable install is not on it.
    (site / "dependencies.pth").write_text(str(Path(pydantic.__file__).parents[1]) + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            "--prefix",
            str(team),
            str(client_wheel),
        ],
        check=True,
        capture_output=True,
    )
    python = team / "bin" / "python"
    imports = subprocess.run(
        [
            str(python),
            "-c",
            "import seedance_client.reference, seedance_client.cli\n"
            "import importlib.util; print(importlib.util.find_spec('seedance') is None, "
            "importlib.util.find_spec('components') is None)",
        ],
        capture_output=True,
        text=True,
        cwd=root,
    )  # not the checkout: `-c` puts the working directory on the path
    assert imports.stdout.split() == ["True", "True"], imports.stderr  # the platform is not there
    return python


def test_a_fresh_venv_with_only_the_client_wheel_plans_checks_and_publishes(team_python, tmp_path, plan_of):
    """Issue 36: a team's own virtualenv with the client wheel alone has `seedance model`, plans and checks
    both examples against a platform's outputs in a file, refuses what the contract does not allow, and
    says in one line which package has the rest."""
    import json

    from seedance_client.engine import Secret

    python = team_python
    # The installed script's shebang names the interpreter of the pip that installed it (the outer one,
    # where the platform is importable): run its function with the team venv's interpreter instead.
    script = next((python.parent).glob("seedance"))
    assert script.read_text().startswith("#!") and "seedance_client.cli" in script.read_text()
    run = lambda *args: subprocess.run(
        [str(python), "-c", "import sys; from seedance_client.cli import main; sys.exit(main(sys.argv[1:]))", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    for stack in ("dev", "prod"):
        outputs = {k: v.value if isinstance(v, Secret) else v for k, v in plan_of(stack).outputs.items()}
        (tmp_path / f"{stack}.json").write_text(json.dumps(outputs))
    for example in ("training-job", "model-deploy"):
        program = str(REPO / "examples" / example)
        planned = run("plan", "--stack", "dev", "--program", program, "--contract", "dev.json")
        assert planned.returncode == 0 and "pulumi:pulumi:StackReference  my-org/seedance-gpu/dev" in planned.stdout, (
            planned.stderr
        )
        checked = run("check", "--stack", "dev", "--program", program, "--contract", "dev.json")
        assert checked.returncode == 0 and "fits the platform's contract" in checked.stdout, checked.stderr
    # The dev stack (it reads my-org/seedance-gpu/dev in us-west-2) against prod's outputs: one line, no plan.
    training = str(REPO / "examples" / "training-job")
    wrong = run("check", "--stack", "dev", "--program", training, "--contract", "prod.json")
    assert wrong.returncode == 2 and wrong.stdout == "", wrong.stdout
    assert wrong.stderr.count("\n") == 1 and "platform in us-east-1; stack 'dev' is in us-west-2" in wrong.stderr
    # A stack that reads prod, in its region, whose teams own other namespaces: refused, the io2 claim's cost named.
    dev = (REPO / "examples" / "training-job" / "Pulumi.dev.yaml").read_text()
    reads_prod = tmp_path / "Pulumi.reads-prod.yaml"
    reads_prod.write_text(dev.replace("seedance-gpu/dev", "seedance-gpu/prod").replace("us-west-2", "us-east-1"))
    refused = run(
        "check",
        "--stack",
        "reads-prod",
        "--stack-file",
        str(reads_prod),
        "--program",
        training,
        "--contract",
        "prod.json",
    )
    assert refused.returncode == 1, refused.stderr
    assert "namespace training belongs to no team of the platform (video-ml)" in refused.stdout
    assert "checkpoints: $3,544.00/month" in refused.stdout
    assert run("model", "--help").returncode == 0
    elsewhere = run("decide", "--stack", "dev")
    assert elsewhere.returncode == 2 and elsewhere.stderr.count("\n") == 1
    assert "`seedance decide` comes with the platform's package" in elsewhere.stderr


# A team's publishing run, in its own venv, against S3 (moto's): publish, canary, promote, roll back.
PUBLISHING = """
import sys
import boto3
from moto import mock_aws
from seedance_client import cli, models
from seedance_client.publishing import MARKER_NAME

model, bucket, prefix = sys.argv[1:4]
with mock_aws():
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key=f"{prefix}/{MARKER_NAME}", Body=b"the platform's marker")
    models.s3_client = lambda region, role_arn: s3
    def run(*step, expect=0):
        if cli.main(["model", *step, "--repository", f"s3://{bucket}/{prefix}"]) != expect:
            sys.exit(f"{step} did not exit {expect}")
    def served():
        return s3.get_object(Bucket=bucket, Key=f"{prefix}/identity/config.pbtxt")["Body"].read().decode()
    run("publish", model, "--version", "1")
    run("publish", model, "--version", "2", "--alongside")
    run("promote", "identity", "--version", "2", "--reason", "canary held")
    run("rollback", "identity")
    print(served())
    # A canary cut off (Ctrl-C) and resumed as the message says: still a canary.
    def cut_off(params, **_):
        if "/3/" in params.get("Key", ""):
            raise KeyboardInterrupt
    s3.meta.events.register("before-parameter-build.s3.PutObject", cut_off)
    run("publish", model, "--version", "3", "--alongside", expect=130)
    s3.meta.events.unregister("before-parameter-build.s3.PutObject", cut_off)
    run("publish", model, "--version", "3", "--resume")
    assert "versions: [ 1, 3 ]" in served(), served()
    run("promote", "identity", "--version", "3")
    run("rollback", "identity")
    run("rollback", "identity")  # again: nothing changes
    assert "versions: [ 1 ]" in served(), served()
    run("rollback", "identity", "--to", "2", "--reason", "2 was the last good one")
    assert "versions: [ 2 ]" in served(), served()
    run("history", "identity")
    run("history", "identiyt", expect=2)
"""


def test_in_a_client_only_venv_a_team_publishes_canaries_promotes_rolls_back_and_resumes_training(
    team_python, tmp_path
):
    """Issue 36's way through with nothing but the client, and issue 52's: the model's life in the bucket
    (a canary cut off and resumed as a canary, rollbacks that do not flip back, `--to`, reasons in the
    history, an unknown model named), and the reference trainer through an interruption and a resume (the
    same end as a run never stopped). S3 is moto's, in the venv's process (moto's server needs Flask)."""
    import os

    from tests.examples.test_trainer import interrupt_and_resume

    model = tmp_path / "identity"
    shutil.copytree(REPO / "examples" / "model-deploy" / "model_repository" / "identity", model)
    shutil.copytree(model / "1", model / "2")
    shutil.copytree(model / "1", model / "3")
    environment = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    published = subprocess.run(
        [str(team_python), "-c", PUBLISHING, str(model), "team-models", "seedance/video"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=300,
    )
    assert published.returncode == 0, published.stderr
    assert "rollback [2] -> [1]" in published.stdout and "already rolled back to [1]" in published.stdout
    assert "reason: 2 was the last good one" in published.stdout and "resuming" in published.stdout
    assert "run the same command with --resume" in published.stderr and "identiyt: no history" in published.stderr
    interrupt_and_resume(tmp_path, team_python)
