"""The gate's IAM reference is generated from two licensed sources, read at a commit it records: a managed
policy's file becomes its entry (ARN, version, date, document), one without an ARN is listed as withdrawn
and one the checkout cannot read as absent; Cloudsplaining's constants are read as literals, never run.
The same commits give the same bytes."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from generate_iam_reference import main  # noqa: E402


def _repo(path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    env = {"GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(path), *command], check=True, env={**env, "PATH": "/usr/bin:/bin"})
    return path


CONSTANTS = """
import yaml  # never imported by the generator
PRIVILEGE_ESCALATION_METHODS = {"CreateAccessKey": ["iam:createaccesskey"]}
READ_ONLY_DATA_EXFILTRATION_ACTIONS = ["s3:GetObject"]
"""


def _policy(name, arn, statement):
    return json.dumps(
        {
            "name": name,
            "arn": arn,
            "version": "v2",
            "updatedate": "2025-01-01T00:00:00+00:00",
            "document": {"Version": "2012-10-17", "Statement": [statement]},
            "effective_actions": ["dropped"],
        }
    )


def test_both_files_come_from_their_checkouts_with_where_they_come_from(tmp_path):
    dataset = _repo(
        tmp_path / "iam-dataset",
        {
            "aws/managedpolicies/Reader.json": _policy(
                "Reader", "arn:aws:iam::aws:policy/service-role/Reader", {"Effect": "Allow", "Action": "s3:Get*"}
            ),
            "aws/managedpolicies/Gone.json": json.dumps({"name": "Gone", "arn": None}),
        },
    )
    cloudsplaining = _repo(tmp_path / "cloudsplaining", {"cloudsplaining/shared/constants.py": CONSTANTS})
    out = tmp_path / "out"
    out.mkdir()
    args = ["--iam-dataset", str(dataset), "--cloudsplaining", str(cloudsplaining), "--out", str(out)]
    assert main(args) == 0
    copy = json.loads(gzip.decompress((out / "aws_managed_policies.json.gz").read_bytes()))
    assert copy["policies"] == {
        "Reader": {
            "arn": "arn:aws:iam::aws:policy/service-role/Reader",
            "version": "v2",
            "updated": "2025-01-01T00:00:00+00:00",
            "document": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:Get*"}]},
        }
    }
    source = copy["_source"]
    assert source["withdrawn"] == ["Gone"] and source["licence"] == "MIT"
    assert source["committed"].startswith("2026-01-02") and len(source["commit"]) == 40
    escalation = json.loads((out / "escalation_actions.json").read_text())
    assert escalation["privilege_escalation"] == {"CreateAccessKey": ["iam:createaccesskey"]}
    assert escalation["data_exfiltration"] == ["s3:GetObject"]
    assert escalation["_source"]["licence"] == "BSD-3-Clause"
    first = (out / "aws_managed_policies.json.gz").read_bytes()
    assert main(args) == 0 and (out / "aws_managed_policies.json.gz").read_bytes() == first


def test_constants_that_no_longer_define_a_set_stop_it(tmp_path):
    dataset = _repo(tmp_path / "iam-dataset", {"aws/managedpolicies/.keep": ""})
    cloudsplaining = _repo(tmp_path / "cloudsplaining", {"cloudsplaining/shared/constants.py": "X = 1\n"})
    with pytest.raises(SystemExit, match="PRIVILEGE_ESCALATION_METHODS"):
        main(["--iam-dataset", str(dataset), "--cloudsplaining", str(cloudsplaining), "--out", str(tmp_path)])
