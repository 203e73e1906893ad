"""The team's model release workflow example (examples/ci/model-release.yml): hardened as the platform's own
(no token permission by default, OIDC only where a role is assumed, actions pinned by commit, no token left
behind, inputs through the environment), and every `seedance model` line in it is one the client parses."""

import argparse
import re
import shlex

import pytest
import yaml

from seedance_client import models
from tests.stacks import REPO

WORKFLOW = yaml.safe_load((REPO / "examples" / "ci" / "model-release.yml").read_text())
JOBS = WORKFLOW["jobs"]
STEPS = [(name, step) for name, job in JOBS.items() for step in job["steps"]]


def test_no_permission_by_default_and_oidc_only_where_a_role_is_assumed():
    assert WORKFLOW["permissions"] == {}
    for name, job in JOBS.items():
        assumes = any("configure-aws-credentials" in str(s.get("uses", "")) for s in job["steps"])
        assert (job["permissions"].get("id-token") == "write") == assumes, name
        assert job["permissions"].get("contents") == "read" and job.get("environment"), name


def test_actions_are_pinned_checkouts_keep_no_token_and_runs_read_no_expression():
    for name, step in STEPS:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), (name, step["uses"])
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
        assert "${{" not in step.get("run", ""), (name, step["run"])  # inputs reach scripts as env only


def _commands():
    """Each `seedance model ...` line of the scripts, continuations joined, variables given sample values."""
    for _name, step in STEPS:
        script = step.get("run", "").replace("\\\n", " ")
        for line in script.splitlines():
            line = line.strip()
            if not line.startswith("seedance model"):
                continue
            alternatives = (
                ["promote identity --version 2", "rollback identity --to 1", "rollback identity"]
                if '"${args[@]}"' in line
                else [None]
            )
            for alternative in alternatives:
                text = line.replace('"${args[@]}"', alternative) if alternative else line
                text = re.sub(r'"\$\{?(\w+)\}?"', lambda m: f"sample-{m.group(1).lower()}", text)
                yield shlex.split(text)[2:]


@pytest.mark.parametrize("argv", list(_commands()), ids=lambda argv: " ".join(argv[:2]))
def test_every_seedance_model_line_is_one_the_client_parses(argv):
    parser = argparse.ArgumentParser(prog="seedance")
    models.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["model", *[a.replace("sample-version", "2") for a in argv]])
    assert args.repository == "sample-repository" and args.role_arn == "sample-publisher_role"
    assert args.verb == "history" or args.reason


def test_the_workflow_switches_with_every_verb():
    verbs = {argv[0] for argv in _commands()}
    assert verbs == {"publish", "promote", "rollback", "history"}
