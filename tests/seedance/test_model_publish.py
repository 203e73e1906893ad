"""`seedance model` against moto's S3 (seedance_client/models.py): every file of the model published, the
version marked complete before the config switches to it, writes conditional so a race or a cut-off
upload never leaves a mixed state, a served configuration never changed unasked, and promote, rollback
and history from the bucket alone."""

from __future__ import annotations

import json
import shutil

import boto3
import pytest
from moto import mock_aws

from components.serving.publishing import marker_key
from seedance.cli import main
from seedance_client import cli as client_cli
from seedance_client import models
from seedance_client.publishing import PublishError, model_name, pin_version, rollback_target
from tests.stacks import REPO

EXAMPLE = REPO / "examples" / "model-deploy" / "model_repository" / "identity"
BUCKET, PREFIX = "seedance-dev-models-123456789012", "seedance/video"
REPOSITORY = f"s3://{BUCKET}/{PREFIX}"
CONFIG = f"{PREFIX}/identity/config.pbtxt"


@pytest.fixture
def s3(monkeypatch):
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        client.put_object(Bucket=BUCKET, Key=marker_key(PREFIX), Body=b"the platform's marker")
        calls = []
        client.meta.events.register(
            "before-parameter-build.s3.*", lambda model, params, **_: calls.append((model.name, params.get("Key")))
        )
        client.calls = calls
        monkeypatch.setattr(models, "s3_client", lambda region, role_arn: client)
        yield client


@pytest.fixture
def model(tmp_path):
    """The example model with a labels file beside its config, and a second version."""
    copy = tmp_path / "identity"
    shutil.copytree(EXAMPLE, copy)
    (copy / "labels.txt").write_text("cat\ndog\n")
    shutil.copytree(copy / "1", copy / "2")
    return copy


def run(*argv):
    return main(["model", *argv, "--repository", REPOSITORY])


def publish(model, version, *extra):
    return run("publish", str(model), "--version", str(version), *extra)


def text(s3, key):
    return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode()


def writes(s3):
    return [key for operation, key in s3.calls if operation in ("PutObject", "CreateMultipartUpload")]


def test_every_file_lands_and_the_version_is_marked_complete_before_the_config_switches(s3, model):
    assert publish(model, 1) == 0
    written = writes(s3)
    marker = f"{PREFIX}/identity/seedance-version-1.json"
    assert written.index(marker) < written.index(CONFIG) < written.index(f"{PREFIX}/identity/seedance-history.json")
    assert {f"{PREFIX}/identity/1/model.py", f"{PREFIX}/identity/labels.txt"} <= set(written[: written.index(marker)])
    assert "versions: [ 1 ]" in text(s3, CONFIG) and text(s3, f"{PREFIX}/identity/labels.txt") == "cat\ndog\n"
    assert json.loads(text(s3, marker))["files"]["1/model.py"]["sha256"]


def test_a_published_version_is_never_overwritten_and_promote_serves_any_published_one(s3, model, capsys):
    assert publish(model, 1) == 0 and publish(model, 2) == 0
    s3.calls.clear()
    assert publish(model, 1) == 2
    assert "version 1 is published and immutable" in capsys.readouterr().err and writes(s3) == []
    assert run("promote", "identity", "--version", "1") == 0  # not served now, but complete: allowed
    assert "versions: [ 1 ]" in text(s3, CONFIG)
    assert run("promote", "identity", "--version", "3") == 2
    assert "not a complete published version" in capsys.readouterr().err


def test_canary_promote_and_rollback_with_a_history_beside_the_model(s3, model, capsys):
    assert publish(model, 1) == 0
    assert publish(model, 2, "--alongside") == 0
    assert "versions: [ 1, 2 ]" in text(s3, CONFIG) and "/versions/2/infer" in capsys.readouterr().out
    assert run("promote", "identity", "--version", "2") == 0 and "versions: [ 2 ]" in text(s3, CONFIG)
    assert run("rollback", "identity") == 0 and "versions: [ 1 ]" in text(s3, CONFIG)
    history = json.loads(text(s3, f"{PREFIX}/identity/seedance-history.json"))
    assert [(h["action"], h["from"], h["to"]) for h in history] == [
        ("publish", [], [1]),
        ("canary", [1], [1, 2]),
        ("promote", [1, 2], [2]),
        ("rollback", [2], [1]),
    ]
    assert all(h["by"].startswith("arn:aws:") and h["at"].endswith("Z") for h in history)
    capsys.readouterr()
    assert run("history", "identity") == 0 and "rollback [2] -> [1]" in capsys.readouterr().out


def test_the_served_configuration_never_changes_unasked(s3, model, capsys):
    assert publish(model, 1) == 0
    config = model / "config.pbtxt"
    config.write_text(config.read_text().replace("max_batch_size: 8", "max_batch_size: 32"))
    assert "max_batch_size: 32" in config.read_text()
    s3.calls.clear()
    assert publish(model, 2, "--alongside") == 2
    assert "config.pbtxt differ from what serves version(s) [1]" in capsys.readouterr().err
    assert writes(s3) == [] and "max_batch_size: 8" in text(s3, CONFIG)
    (model / "labels.txt").write_text("cat\n")
    config.write_text(config.read_text().replace("max_batch_size: 32", "max_batch_size: 8"))
    assert publish(model, 2) == 2 and "labels.txt differ" in capsys.readouterr().err
    assert publish(model, 2, "--config-change") == 0
    assert text(s3, f"{PREFIX}/identity/labels.txt") == "cat\n"


def test_a_cut_off_upload_is_refused_until_resumed_and_resume_checks_what_is_there(s3, model, capsys):
    assert publish(model, 1) == 0
    s3.put_object(
        Bucket=BUCKET,
        Key=f"{PREFIX}/identity/2/model.py",
        Body=(model / "2" / "model.py").read_bytes(),
        Metadata={"sha256": models.sha256(model / "2" / "model.py")},
    )
    assert publish(model, 2) == 2 and "--resume completes it" in capsys.readouterr().err
    assert "versions: [ 1 ]" in text(s3, CONFIG)
    assert publish(model, 2, "--resume") == 0 and "versions: [ 2 ]" in text(s3, CONFIG)
    s3.put_object(
        Bucket=BUCKET, Key=f"{PREFIX}/identity/3/model.py", Body=b"something else", Metadata={"sha256": "0" * 64}
    )
    shutil.copytree(model / "1", model / "3")
    assert publish(model, 3, "--resume") == 2 and "a version's files never change" in capsys.readouterr().err


def test_two_runs_switching_at_once_cannot_both_win(s3, model, capsys):
    """The config is written only over the one read (If-Match): a switch in between fails this run."""
    assert publish(model, 1) == 0
    raced = []

    def other_run_switches_first(params, **_):
        if params.get("Key") == CONFIG and not raced:
            raced.append(True)
            s3.put_object(Bucket=BUCKET, Key=CONFIG, Body=pin_version(text(s3, CONFIG), 1, 7).encode())

    s3.meta.events.register("before-parameter-build.s3.PutObject", other_run_switches_first)
    assert publish(model, 2) == 2
    assert "changed while this ran" in capsys.readouterr().err
    assert "versions: [ 1, 7 ]" in text(s3, CONFIG)  # the other run's switch stands


def test_a_repository_no_server_reads_is_refused(s3, model, capsys):
    assert (
        main(["model", "publish", str(model), "--version", "1", "--repository", f"s3://{BUCKET}/seedance/vidoe"]) == 2
    )
    assert "no platform marker" in capsys.readouterr().err and writes(s3) == []


@pytest.mark.parametrize(
    "damage, words",
    [
        (
            lambda m: (m / "config.pbtxt").write_text('name: "other"\nbackend: "python"\n'),
            "names 'other'; Triton needs the directory's name ('identity')",
        ),
        (lambda m: shutil.rmtree(m / "1"), "no such version directory"),
        (lambda m: (m / "1" / "link.py").symlink_to("/etc/passwd"), "a symbolic link"),
        (
            lambda m: ((m / "config.pbtxt").unlink(), (m / "config.pbtxt").symlink_to("/etc/hostname")),
            "a symbolic link",
        ),
        (lambda m: (m / "labels.txt").unlink() or (m / "labels.txt").symlink_to("/etc/passwd"), "a symbolic link"),
        (lambda m: (m / "config.pbtxt").unlink(), "model config not found"),
        (lambda m: (m / "notes").mkdir(), "a directory Triton ignores"),
    ],
)
def test_a_model_that_cannot_be_served_is_refused_before_any_upload(s3, model, capsys, damage, words):
    damage(model)
    assert publish(model, 1) == 2
    assert words in capsys.readouterr().err and writes(s3) == []


@pytest.mark.parametrize(
    "repository",
    ["s3://Bucket/x", "s3://bucket", "https://bucket/x", "s3://bucket/../x", "s3://bucket/a/../b", "s3://bucket/./a"],
)
def test_a_repository_that_is_not_a_served_prefix_is_refused(s3, capsys, repository):
    assert main(["model", "publish", str(EXAMPLE), "--repository", repository, "--version", "1"]) == 2
    assert "is not s3://<bucket>/<served prefix>" in capsys.readouterr().err


def test_pinning_replaces_any_version_policy_and_reads_past_strings_and_comments():
    config = (
        'name: "m" # a comment with { a brace\n'
        'parameters { key: "x" value: { string_value: "version_policy: }" } }\n'
        "version_policy: { latest: { num_versions: 2 } }\n"
        "max_batch_size: 4\n"
    )
    pinned = pin_version(config, 5)
    assert pinned.count("version_policy:") == 2  # the string's and the new one; the old field is gone
    assert "num_versions" not in pinned and pinned.endswith("version_policy: { specific: { versions: [ 5 ] } }\n")
    assert 'string_value: "version_policy: }"' in pinned and "max_batch_size: 4" in pinned
    assert pin_version(pinned, 6).count("specific") == 1
    assert model_name(config) == "m"
    with pytest.raises(PublishError, match="unclosed block"):
        pin_version("input [ {", 1)


def test_rollback_goes_to_the_version_served_alone_before_not_to_a_canary_pair():
    history = [{"from": [], "to": [1]}, {"from": [1], "to": [1, 2]}, {"from": [1, 2], "to": [2]}]
    assert rollback_target(history, [2]) == 1
    assert rollback_target(history + [{"from": [2], "to": [1]}], [1]) == 2
    assert rollback_target([{"from": [], "to": [1]}], [1]) is None


def test_publishing_as_the_publisher_role_assumes_it(monkeypatch):
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=marker_key(PREFIX), Body=b"marker")
        role = "arn:aws:iam::123456789012:role/seedance-dev-triton-video-publisher"
        client = models.publisher_s3("us-east-1", role)
        # moto's STS hands out the role's session credentials; the client carries them, not the caller's
        assert client._request_signer._credentials.token
        assert (
            main(["model", "publish", str(EXAMPLE), "--repository", REPOSITORY, "--version", "1", "--role-arn", role])
            == 0
        )
        history = json.loads(
            s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/seedance-history.json")["Body"].read()
        )
        assert ":assumed-role/seedance-dev-triton-video-publisher/" in history[0]["by"]


def test_the_clients_own_command_is_the_same_code(s3, model):
    """A team's venv has `seedance model` from the client alone (its entry point: seedance_client.cli:main)."""
    assert client_cli.main(["model", "publish", str(model), "--version", "1", "--repository", REPOSITORY]) == 0
    assert client_cli.main(["model", "promote", "identity", "--version", "9", "--repository", REPOSITORY]) == 2
