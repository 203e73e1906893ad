"""`seedance model` where a team meets AWS's refusals and its own mistakes: each is one line that names the
identity used and what to do (issue 52: a 400 on HeadObject, AccessDenied on PutObject, a KeyboardInterrupt
traceback, an unknown model's empty history with exit 0)."""

import argparse
import json
import shutil

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoRegionError

from seedance_client import models
from tests.seedance.test_model_publish import publish, run


def refuse(s3, operation, code, status):
    def raise_error(**_):
        raise ClientError({"Error": {"Code": code, "Message": status}, "ResponseMetadata": {}}, operation)

    s3.meta.events.register(f"before-call.s3.{operation}", raise_error)


def test_a_write_denied_names_who_tried_and_the_role_that_may(s3, model, capsys):
    refuse(s3, "PutObject", "AccessDenied", "Access Denied")
    assert publish(model, 1) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "AWS denied PutObject to " in err
    assert "only the serving set's publisher role writes model files" in err and "pass it as --role-arn" in err


def test_an_expired_session_is_said_as_such_not_as_a_bad_request(s3, model, capsys):
    refuse(s3, "HeadObject", "400", "Bad Request")  # what a HEAD with an expired token gets: no body, no code
    assert publish(model, 1) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "AWS refused HeadObject (400)" in err and "expired or invalid credentials" in err


def test_an_interrupted_publish_says_how_to_resume_with_its_own_flags(s3, model, capsys):
    def interrupt(**_):
        raise KeyboardInterrupt

    s3.meta.events.register("before-call.s3.PutObject", interrupt)
    assert publish(model, 1, "--alongside") == 130  # the shell's code for SIGINT
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "version 1 is not switched to; run the same command with --resume to complete it as this run" in err


def test_the_history_of_a_model_never_published_here_is_an_error(s3, model, capsys):
    assert run("history", "identiyt") == 2
    assert "identiyt: no history in" in capsys.readouterr().err
    assert publish(model, 1) == 0 and run("history", "identity") == 0


def args(**given):
    return argparse.Namespace(**{"role_arn": None, "region": None, "caller": None, **given})


def test_no_region_and_an_unreachable_endpoint_name_the_region_flag():
    assert "give --region" in models.aws_refusal(NoRegionError(), args())
    unreachable = EndpointConnectionError(endpoint_url="https://s3.eu-west-9.amazonaws.com/")
    assert "--region" in models.aws_refusal(unreachable, args(region="eu-west-9"))
    assert "this run used eu-west-9" in models.aws_refusal(unreachable, args(region="eu-west-9"))


def test_a_role_given_but_denied_is_named():
    denied = ClientError({"Error": {"Code": "AccessDenied"}}, "PutObject")
    role = "arn:aws:iam::123456789012:role/video-ml-readonly"
    message = models.aws_refusal(denied, args(role_arn=role, caller=f"{role}/seedance-model-publish"))
    assert f"(--role-arn {role} was assumed)" in message
    assert models.aws_refusal(ClientError({"Error": {"Code": "SlowDown"}}, "PutObject"), args()) is None


@pytest.mark.parametrize("verb", ["promote", "rollback", "history"])
def test_every_verb_says_its_refusals_in_one_line(s3, model, capsys, verb):
    assert publish(model, 1) == 0
    capsys.readouterr()
    refuse(s3, "GetObject", "AccessDenied", "Access Denied")
    extra = ["--version", "1"] if verb == "promote" else []
    assert run(verb, "identity", *extra) == 2
    assert "AWS denied GetObject" in capsys.readouterr().err


CONFIG_KEY = "seedance/video/identity/config.pbtxt"
HISTORY_KEY = "seedance/video/identity/seedance-history.json"


def served(s3):
    from tests.seedance.test_model_publish import text

    return text(s3, CONFIG_KEY).rsplit("versions: [", 1)[1].split("]")[0].split(",")


def history(s3):
    from tests.seedance.test_model_publish import text

    return [(h["action"], h["from"], h["to"]) for h in json.loads(text(s3, HISTORY_KEY))]


def test_a_switch_that_meets_another_runs_history_write_is_still_recorded(s3, model):
    """Issue 52: a promote that lost the race on the history had switched the config and said nothing was."""
    from tests.seedance.test_model_publish import BUCKET

    assert publish(model, 1) == 0 and publish(model, 2) == 0
    raced = []

    def another_run_appends_first(params, **_):
        if params.get("Key") == HISTORY_KEY and not raced:
            raced.append(True)
            entries = json.loads(s3.get_object(Bucket=BUCKET, Key=HISTORY_KEY)["Body"].read())
            entry = {"at": "2026-12-07T00:00:00Z", "by": "other", "action": "promote", "from": [9], "to": [9]}
            s3.put_object(Bucket=BUCKET, Key=HISTORY_KEY, Body=json.dumps([*entries, entry]).encode())

    s3.meta.events.register("before-parameter-build.s3.PutObject", another_run_appends_first)
    assert run("promote", "identity", "--version", "1") == 0
    assert raced and history(s3)[-2:] == [("promote", [9], [9]), ("promote", [2], [1])]


def test_a_switch_whose_history_always_loses_says_it_switched(s3, model, capsys, monkeypatch):
    assert publish(model, 1) == 0 and publish(model, 2) == 0
    capsys.readouterr()
    real_put = models._put

    def history_loses(s3_client, bucket, key, *rest, **extra):
        if key == HISTORY_KEY:
            raise models.RaceLost("lost")
        return real_put(s3_client, bucket, key, *rest, **extra)

    monkeypatch.setattr(models, "_put", history_loses)
    assert run("promote", "identity", "--version", "1") == 2
    err = capsys.readouterr().err
    assert "now serves [1] (switched), but its history entry lost 5 races" in err and served(s3) == [" 1 "]


def test_a_canary_cut_off_and_resumed_without_its_flag_is_still_a_canary(s3, model, capsys):
    """Issue 52: resumed as the message said, the canary served everyone."""
    assert publish(model, 1) == 0
    cut = []

    def cut_off(params, **_):
        if params.get("Key", "").endswith("/2/model.py") and not cut:
            cut.append(True)
            raise KeyboardInterrupt

    s3.meta.events.register("before-parameter-build.s3.PutObject", cut_off)
    assert publish(model, 2, "--alongside") == 130
    assert publish(model, 2, "--resume") == 0
    assert served(s3) == [" 1", " 2 "] and "as its first run asked: --alongside" in capsys.readouterr().out
    assert history(s3)[-1] == ("canary", [1], [1, 2])


def test_a_resume_asking_otherwise_than_the_first_run_is_refused(s3, model, capsys):
    assert publish(model, 1) == 0

    def cut_off(params, **_):
        if params.get("Key", "").endswith("/2/model.py"):
            raise KeyboardInterrupt

    s3.meta.events.register("before-parameter-build.s3.PutObject", cut_off)
    assert publish(model, 2) == 130
    s3.meta.events.unregister("before-parameter-build.s3.PutObject", cut_off)
    capsys.readouterr()
    assert publish(model, 2, "--resume", "--alongside") == 2
    assert "was started with no flags; --resume completes it so, not with --alongside" in capsys.readouterr().err
    assert publish(model, 2) == 2 and "--resume completes it" in capsys.readouterr().err


def test_a_second_rollback_changes_nothing_and_to_names_the_version(s3, model, capsys):
    """Issue 52: a second rollback re-served the version the first rolled back from."""
    shutil.copytree(model / "1", model / "3")
    assert publish(model, 1) == 0 and publish(model, 2) == 0 and publish(model, 3) == 0
    assert run("rollback", "identity") == 0 and served(s3) == [" 2 "]
    capsys.readouterr()
    assert run("rollback", "identity") == 0 and served(s3) == [" 2 "]
    assert "already rolled back to [2]" in capsys.readouterr().out
    assert run("rollback", "identity", "--to", "1") == 0 and served(s3) == [" 1 "]
    assert history(s3)[-2:] == [("rollback", [3], [2]), ("rollback", [2], [1])]
    assert run("rollback", "identity", "--to", "1") == 0 and "already serves alone" in capsys.readouterr().out
    assert (
        run("rollback", "identity", "--to", "7") == 2 and "not a complete published version" in capsys.readouterr().err
    )


def test_a_comment_or_spacing_is_no_config_change_and_a_change_shows_its_diff(s3, model, capsys):
    assert publish(model, 1) == 0
    config = model / "config.pbtxt"
    original = config.read_text()
    config.write_text("# the identity model\n" + original.replace("max_batch_size: 8", "max_batch_size :  8  # eight"))
    assert publish(model, 2) == 0  # no --config-change needed
    config.write_text(original.replace("max_batch_size: 8", "max_batch_size: 32"))
    shutil.copytree(model / "1", model / "3")
    capsys.readouterr()
    assert publish(model, 3) == 2
    out = capsys.readouterr().out
    assert "-max_batch_size :  8  # eight" in out and "+max_batch_size: 32" in out


def test_a_canary_cannot_carry_a_config_of_its_own(s3, model, capsys):
    assert publish(model, 1) == 0
    config = model / "config.pbtxt"
    config.write_text(config.read_text().replace("max_batch_size: 8", "max_batch_size: 32"))
    assert publish(model, 2, "--alongside", "--config-change") == 2
    err = capsys.readouterr().err
    assert "a canary cannot carry its own" in err and "model's one config.pbtxt" in err
    assert served(s3) == [" 1 "]


def test_a_linked_model_or_version_directory_is_said_to_be_a_link(s3, model, tmp_path, capsys):
    linked = tmp_path / "linked"
    linked.symlink_to(model)
    assert run("publish", str(linked), "--version", "1") == 2
    assert "linked: a symbolic link" in capsys.readouterr().err
    shutil.move(model / "2", tmp_path / "two")
    (model / "2").symlink_to(tmp_path / "two")
    assert publish(model, 2) == 2 and "identity/2: a symbolic link" in capsys.readouterr().err


def test_each_switch_records_who_why_and_the_ci_run(s3, model, capsys, monkeypatch):
    """Issue 52: every history entry read the same role session name, with no reason or run."""
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/video-models")
    assert publish(model, 1, "--reason", "first cut") == 0
    monkeypatch.delenv("GITHUB_RUN_ID")
    assert publish(model, 2, "--alongside") == 0
    assert run("promote", "identity", "--version", "2", "--reason", "canary held", "--ci-run", "https://ci/9") == 0
    entries = json.loads(s3.get_object(Bucket="seedance-dev-models-123456789012", Key=HISTORY_KEY)["Body"].read())
    assert entries[0]["reason"] == "first cut"
    assert entries[0]["ci_run"] == "https://github.com/acme/video-models/actions/runs/4242"
    assert "reason" not in entries[1] and "ci_run" not in entries[1]
    assert (entries[2]["reason"], entries[2]["ci_run"]) == ("canary held", "https://ci/9")
    capsys.readouterr()
    assert run("history", "identity") == 0
    assert "reason: canary held  ci_run: https://ci/9" in capsys.readouterr().out


@pytest.mark.parametrize(
    "caller, name",
    [
        ("arn:aws:sts::123456789012:assumed-role/video-ml-engineers/alice@example.com", "alice@example.com"),
        ("arn:aws:iam::123456789012:user/bob", "bob"),
        ("arn:aws:sts::123456789012:assumed-role/ci/GitHubActions run 7", "GitHubActions-run-7"),
        ("arn:aws:iam::123456789012:root", "root"),
    ],
)
def test_the_role_session_is_named_after_who_assumed_it(caller, name):
    from seedance_client.publishing import session_name

    assert session_name(caller) == name


def test_publishing_as_a_role_names_the_session_after_the_caller(monkeypatch):
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = models.publisher_s3("us-east-1", "arn:aws:iam::123456789012:role/seedance-dev-triton-video-operator")
        arn = boto3.client(
            "sts",
            region_name="us-east-1",
            aws_access_key_id=client._request_signer._credentials.access_key,
            aws_secret_access_key=client._request_signer._credentials.secret_key,
            aws_session_token=client._request_signer._credentials.token,
        ).get_caller_identity()["Arn"]
        caller = boto3.client("sts", region_name="us-east-1").get_caller_identity()["Arn"]
    from seedance_client.publishing import session_name

    assert arn.endswith(f":assumed-role/seedance-dev-triton-video-operator/{session_name(caller)}")
