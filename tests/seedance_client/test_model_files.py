"""What `seedance model` reads back from the bucket is untrusted (issue 53 item 11: a forged or corrupt
history stopped `history`, `rollback` and `promote` with JSONDecodeError, KeyError or RecursionError): each
file is bounded, parsed once and validated, and refused in one line naming it."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedance_client import cli
from seedance_client.model_files import MAX_DOCUMENT_BYTES, read_history, read_intent, read_marker
from seedance_client.publishing import PublishError
from tests.seedance.test_model_publish import BUCKET, PREFIX, publish, run

HISTORY_KEY = f"{PREFIX}/identity/seedance-history.json"
ENTRY = {
    "at": "2026-12-07T00:00:00Z",
    "by": "arn:aws:sts::1:assumed-role/r/alice",
    "action": "publish",
    "from": [],
    "to": [1],
}

FORGED = [
    b"{not json",
    b"[" * 100_000 + b"]" * 100_000,  # deeper than the parser goes
    json.dumps({"entries": []}).encode(),
    json.dumps([{**ENTRY, "to": ["1"]}]).encode(),
    json.dumps([{**ENTRY, "action": "delete"}]).encode(),
    json.dumps([{k: v for k, v in ENTRY.items() if k != "from"}]).encode(),
    json.dumps([{**ENTRY, "to": [10**12]}]).encode(),
    b" " * (MAX_DOCUMENT_BYTES + 1),
]


@pytest.mark.parametrize("data", FORGED, ids=range(len(FORGED)))
@pytest.mark.parametrize("verb", ["history", "rollback", "promote"])
def test_a_forged_or_corrupt_history_is_one_line_for_every_verb(s3, model, capsys, data, verb):
    assert publish(model, 1) == 0 and publish(model, 2) == 0
    s3.put_object(Bucket=BUCKET, Key=HISTORY_KEY, Body=data)
    capsys.readouterr()
    extra = ["--version", "1"] if verb == "promote" else []
    assert run(verb, "identity", *extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"s3://{BUCKET}/{HISTORY_KEY}:" in err, err[:300]


def test_a_history_this_client_wrote_reads_back_with_fields_a_newer_one_adds():
    entries = [{**ENTRY, "reason": "why"}, {**ENTRY, "action": "canary", "from": [1], "to": [1, 2], "approver": "x"}]
    assert read_history(json.dumps(entries).encode(), "h") == entries


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=5), c),
        max_leaves=20,
    )
)
def test_any_json_is_read_or_refused_in_one_line(value):
    data = json.dumps(value).encode()
    for reader in (read_history, read_marker, read_intent):
        try:
            reader(data, "f")
        except PublishError as error:
            assert "\n" not in str(error)


@pytest.mark.parametrize(
    "name, body, said",
    [
        ("seedance-version-1.json", b'{"version": "1"}', "seedance-version-1.json: not a completion marker"),
        ("config.pbtxt", b"\xff\xfe\x00", "config.pbtxt: not UTF-8 text"),
    ],
)
def test_a_forged_marker_or_config_stops_promote_in_one_line(s3, model, capsys, name, body, said):
    assert publish(model, 1) == 0
    s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/{name}", Body=body)
    capsys.readouterr()
    assert run("promote", "identity", "--version", "1") == 2
    assert said in capsys.readouterr().err


def test_a_forged_intent_is_refused_by_name(s3, model, capsys):
    assert publish(model, 1) == 0
    s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/seedance-intent-2.json", Body=b'{"alongside": "yes"}')
    s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/identity/2/model.py", Body=b"x")
    assert publish(model, 2, "--resume") == 2
    assert "seedance-intent-2.json: not an intent" in capsys.readouterr().err


def test_no_credentials_and_an_unexpected_error_are_one_line_and_debug_shows_more(model, capsys, monkeypatch):
    import boto3

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    from seedance_client import models

    monkeypatch.setattr(models, "s3_client", lambda region, role_arn: boto3.client("s3", region_name="us-east-1"))
    argv = ["model", "history", "identity", "--repository", f"s3://{BUCKET}/{PREFIX}"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no AWS credentials here" in err

    def broken(region, role_arn):
        raise LookupError("first line\nsecond line")

    monkeypatch.setattr(models, "s3_client", broken)
    assert cli.main(argv) == 1
    assert capsys.readouterr().err == (
        "seedance: error: unexpected LookupError in `seedance model history`: first line "
        "(--debug shows the traceback)\n"
    )
    with pytest.raises(LookupError):
        cli.main(["--debug", *argv])
