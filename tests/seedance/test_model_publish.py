"""`seedance model publish` against moto's S3: the version directory whole before the config that switches
to it, versions never overwritten, and the config edit that pins a version (pure)."""

from __future__ import annotations

import shutil

import boto3
import pytest
from moto import mock_aws

from components.serving.publishing import marker_key
from seedance_client.publishing import PublishError, model_name, pin_version
from seedance import model_command
from seedance.cli import main
from tests.stacks import REPO

EXAMPLE = REPO / "examples" / "model-deploy" / "model_repository" / "identity"
BUCKET, PREFIX = "seedance-dev-models-123456789012", "seedance/video"


@pytest.fixture
def s3(monkeypatch):
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        client.put_object(Bucket=BUCKET, Key=marker_key(PREFIX), Body=b"the platform's marker")
        calls = []
        client.meta.events.register("before-parameter-build.s3.*", lambda model, params, **_: calls.append(
            (model.name, params.get("Key"))))
        client.calls = calls
        monkeypatch.setattr(model_command, "s3_client", lambda region, role_arn: client)
        yield client


def publish(*extra, model=EXAMPLE):
    return main(["model", "publish", str(model), "--repository", f"s3://{BUCKET}/{PREFIX}", *extra])


def test_the_version_lands_whole_before_the_config_switches_to_it(s3):
    assert publish("--version", "1") == 0
    writes = [key for operation, key in s3.calls if operation in ("PutObject", "CreateMultipartUpload")]
    assert writes[-1] == f"{PREFIX}/identity/config.pbtxt"
    assert f"{PREFIX}/identity/1/model.py" in writes[:-1]
    config = s3.get_object(Bucket=BUCKET, Key=writes[-1])["Body"].read().decode()
    assert config.count("version_policy") == 1 and "versions: [ 1 ]" in config


def test_a_published_version_is_never_overwritten(s3, capsys):
    assert publish("--version", "1") == 0
    before = s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/1/model.py")["ETag"]
    s3.calls.clear()
    assert publish("--version", "1") == 2
    assert "versions are immutable (servers may hold it); publish 2" in capsys.readouterr().err
    assert not [c for c in s3.calls if c[0] in ("PutObject", "CreateMultipartUpload")]
    assert s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/1/model.py")["ETag"] == before


def test_the_next_version_switches_the_pointer(s3, tmp_path):
    model = tmp_path / "identity"
    shutil.copytree(EXAMPLE, model)
    shutil.copytree(model / "1", model / "2")
    assert publish("--version", "1", model=model) == 0 and publish("--version", "2", model=model) == 0
    config = s3.get_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/config.pbtxt")["Body"].read().decode()
    assert "versions: [ 2 ]" in config and "versions: [ 1 ]" not in config


@pytest.mark.parametrize("damage, words", [
    (lambda m: (m / "config.pbtxt").write_text('name: "other"\nbackend: "python"\n'),
     "names 'other'; Triton needs the directory's name ('identity')"),
    (lambda m: shutil.rmtree(m / "1"), "no such version directory"),
    (lambda m: (m / "1" / "link.py").symlink_to("/etc/passwd"), "a symbolic link"),
    (lambda m: (m / "config.pbtxt").unlink(), "model config not found"),
])
def test_a_model_that_cannot_be_served_is_refused_before_any_upload(s3, tmp_path, capsys, damage, words):
    model = tmp_path / "identity"
    shutil.copytree(EXAMPLE, model)
    damage(model)
    assert publish("--version", "1", model=model) == 2
    assert words in capsys.readouterr().err
    assert not [c for c in s3.calls if c[0] in ("PutObject", "CreateMultipartUpload")]


@pytest.mark.parametrize("repository", ["s3://Bucket/x", "s3://bucket", "https://bucket/x", "s3://bucket/../x y"])
def test_a_repository_that_is_not_a_served_prefix_is_refused(s3, capsys, repository):
    assert main(["model", "publish", str(EXAMPLE), "--repository", repository, "--version", "1"]) == 2
    assert "is not s3://<bucket>/<served prefix>" in capsys.readouterr().err


def test_pinning_replaces_any_version_policy_and_reads_past_strings_and_comments():
    config = ('name: "m" # a comment with { a brace\n'
              'parameters { key: "x" value: { string_value: "version_policy: }" } }\n'
              'version_policy: { latest: { num_versions: 2 } }\n'
              'max_batch_size: 4\n')
    pinned = pin_version(config, 5)
    assert pinned.count("version_policy:") == 2  # the string's and the new one; the old field is gone
    assert "num_versions" not in pinned and pinned.endswith("version_policy: { specific: { versions: [ 5 ] } }\n")
    assert 'string_value: "version_policy: }"' in pinned and "max_batch_size: 4" in pinned
    assert pin_version(pinned, 6).count("specific") == 1
    assert model_name(config) == "m"
    with pytest.raises(PublishError, match="unclosed block"):
        pin_version("input [ {", 1)


def test_publishing_as_the_publisher_role_assumes_it():
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
        client = model_command.publisher_s3("us-east-1", "arn:aws:iam::123456789012:role/seedance-dev-triton-video-publisher")
        # moto's STS hands out the role's session credentials; the client carries them, not the caller's
        assert client._request_signer._credentials.token
        assert main(["model", "publish", str(EXAMPLE), "--repository", f"s3://{BUCKET}/{PREFIX}", "--version", "1",
                     "--role-arn", "arn:aws:iam::123456789012:role/seedance-dev-triton-video-publisher"]) == 0


def test_the_canary_is_a_step_of_the_flow_then_promoted(s3, tmp_path, capsys):
    """N+1 served beside N (callers that ask for it by number get it), then alone: no platform change."""
    model = tmp_path / "identity"
    shutil.copytree(EXAMPLE, model)
    shutil.copytree(model / "1", model / "2")
    config = f"{PREFIX}/identity/config.pbtxt"
    assert publish("--version", "1", model=model) == 0
    assert publish("--version", "2", "--alongside", model=model) == 0
    served = s3.get_object(Bucket=BUCKET, Key=config)["Body"].read().decode()
    assert "versions: [ 1, 2 ]" in served and "/v2/models/identity/versions/2/infer" in capsys.readouterr().out
    assert main(["model", "promote", "identity", "--version", "2", "--repository", f"s3://{BUCKET}/{PREFIX}"]) == 0
    served = s3.get_object(Bucket=BUCKET, Key=config)["Body"].read().decode()
    assert served.count("version_policy") == 1 and "versions: [ 2 ]" in served
    assert main(["model", "promote", "identity", "--version", "3", "--repository", f"s3://{BUCKET}/{PREFIX}"]) == 2
    assert "serves [2], not 3" in capsys.readouterr().err
