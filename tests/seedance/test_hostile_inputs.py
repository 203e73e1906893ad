"""Malformed and hostile inputs, as a table: each gets its exit code and one line naming the file or key,
never a traceback, a hang or a blow-up. Then random damage to locks and plan JSON, as a property.

Every case runs in a copy of the project (program, stack files, lock), so the repository is not written.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedance.cli import main
from tests.stacks import REPO

AT = "2026-12-01T12:00:00Z"


def run(argv: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(cwd or Path.cwd()):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The program, its stack files and a prod lock decided from the snapshot, in a folder of their own."""
    root = tmp_path_factory.mktemp("project")
    shutil.copy(REPO / "Pulumi.yaml", root)
    shutil.copytree(REPO / "infra", root / "infra", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "stacks", root / "stacks", ignore=shutil.ignore_patterns("*.lock.json"))
    code, _out, err = run(["decide", "--stack", "prod", "--source", "snapshot", "--now", AT, "--program", str(root)])
    assert code == 0, err
    code, _out, err = run(
        ["plan", "--stack", "prod", "--program", str(root / "infra"), "--json", str(root / "prod.plan.json")]
    )
    assert code == 0, err
    return root


@pytest.fixture
def edited(project, tmp_path):
    """A fresh copy of the project whose lock and plan JSON a case may edit."""
    copy_root = tmp_path / "p"
    shutil.copytree(project, copy_root)
    return copy_root


def edit_lock(root: Path, change) -> None:
    path = root / "stacks" / "capacity.prod.lock.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def edit_plan(root: Path, change) -> Path:
    path = root / "prod.plan.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, allow_nan=True))
    return path


def volume(urn_suffix: str, size) -> dict:
    return {
        "urn": f"urn:pulumi:prod::seedance-gpu::aws:ebs/volume:Volume::{urn_suffix}",
        "type": "aws:ebs/volume:Volume",
        "name": urn_suffix,
        "inputs": {
            "type": "io2",
            "size": size,
            "iops": 64000,
            "encrypted": True,
            "kmsKeyId": "k",
            "tags": {"team": "t", "cost-center": "c", "env": "prod"},
        },
    }


def group(plan_document: dict, name: str) -> dict:
    return plan_document["groups"][name]["plan"]


LOCK_EDITS = {
    "base beyond max size": (
        lambda d: group(d, "batch").update(on_demand_base_gpus=1000),
        "groups.batch.plan.on_demand_base_gpus = 1000",
    ),
    "a type the group does not list": (
        lambda d: group(d, "batch").update(instance_types=["p5.48xlarge"]),
        "groups.batch.plan.instance_types",
    ),
    "a spot type that is not a GPU type of the plan": (
        lambda d: group(d, "batch").update(spot_types=["m5.large"]),
        "groups.batch.plan.spot_types",
    ),
    "online at 100 % spot": (
        lambda d: group(d, "online").update(on_demand_base_gpus=0, on_demand_percentage_above_base=0),
        "groups.online.plan.on_demand",
    ),
    "another stack's lock": (lambda d: d.update(stack="staging"), "stack = 'staging'"),
    "another region's lock": (lambda d: d.update(region="eu-west-1"), "region = 'eu-west-1'"),
    "a group the stack does not have": (
        lambda d: d["groups"].update(ghost=copy.deepcopy(d["groups"]["batch"])),
        "groups.ghost",
    ),
    "a negative RI rate": (
        lambda d: group(d, "online")["constraints"].update(holdings=[["g6.xlarge", 2, -50.0]]),
        "groups.online.plan.constraints.holdings",
    ),
    "zones of another region": (
        lambda d: group(d, "batch")["constraints"].update(zones=["xx-evil-9z"]),
        "not a zone of us-east-1",
    ),
    "zones as a string": (
        lambda d: group(d, "batch")["constraints"].update(zones="us-east-1a"),
        "groups.batch.plan.constraints.zones",
    ),
}


@pytest.mark.parametrize("case", sorted(LOCK_EDITS))
def test_a_hand_edited_lock_cannot_take_a_plan_beyond_the_config(edited, case):
    change, key = LOCK_EDITS[case]
    edit_lock(edited, change)
    for argv in (
        ["plan", "--stack", "prod", "--program", str(edited / "infra")],
        ["decide", "--stack", "prod", "--source", "snapshot", "--now", AT, "--program", str(edited)],
    ):
        code, _out, err = run(argv)
        assert code == 2 and key in err and "Traceback" not in err and err.count("\n") == 1, (argv[0], err)


PLAN_EDITS = {
    "a negative volume": (lambda d: d["resources"].append(volume("negative", -150000)), "inputs.size = -150000"),
    "a NaN volume": (lambda d: d["resources"].append(volume("nan", float("nan"))), "NaN"),
    "an infinite volume": (lambda d: d["resources"].append(volume("inf", float("inf"))), "Infinity"),
    "a size that is not a number": (lambda d: d["resources"].append(volume("abc", "abc")), "inputs.size = 'abc'"),
    "inputs as a string": (lambda d: d["resources"][0].update(inputs="oops"), "inputs must be an object"),
    "a duplicate URN": (lambda d: d["resources"].append(copy.deepcopy(d["resources"][0])), "appears twice"),
    "a negative RI rate in a group's tag": (
        lambda d: asg(d)["inputs"]["tags"].append(
            {"key": "seedance.io/reserved-instances", "value": "g6.12xlarge=100@-1000", "propagateAtLaunch": True}
        ),
        "seedance.io/reserved-instances entry",
    ),
    "a zero weight": (
        lambda d: asg(d)["inputs"]["mixedInstancesPolicy"]["launchTemplate"]["overrides"][0].update(
            weightedCapacity="0"
        ),
        "weightedCapacity = '0' is zero",
    ),
    "a size that is an object": (lambda d: d["resources"].append(volume("obj", {"a": 1})), "is not a number"),
}


def asg(document: dict) -> dict:
    return next(r for r in document["resources"] if r["type"] == "aws:autoscaling/group:Group")


@pytest.mark.parametrize("case", sorted(PLAN_EDITS))
def test_a_plan_json_that_could_slip_past_the_budget_is_refused(edited, case):
    change, key = PLAN_EDITS[case]
    path = edit_plan(edited, change)
    code, out, err = run(["check", "--plan", str(path), "--env", "prod"])
    assert code == 2 and key in err and "Traceback" not in err and err.count("\n") == 1, err
    assert out == ""  # no estimate, no verdict from a plan that was refused


def bomb(path: Path) -> Path:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level, name in enumerate("bcdefghij"):
        previous = "abcdefghij"[level]
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
    lines.append("config:\n  seedance-gpu:tags: *j")
    path.write_text("\n".join(lines) + "\n")
    return path


def deep_yaml(path: Path) -> Path:
    path.write_text("config:\n  seedance-gpu:tags: " + "[" * 20_000 + "]" * 20_000 + "\n")
    return path


def deep_json(path: Path) -> Path:
    path.write_text('{"resources": ' + "[" * 20_000 + "]" * 20_000 + "}")
    return path


FILE_CASES = {
    # name: (build(tmp) -> argv, the words the one line must hold)
    "a YAML alias bomb": (
        lambda t: ["plan", "--stack", "dev", "--stack-file", str(bomb(t / "bomb.yaml"))],
        "expands to more than",
    ),
    "an endless device": (lambda t: ["plan", "--stack", "dev", "--stack-file", "/dev/zero"], "/dev/zero"),
    "YAML nested 20,000 deep": (
        lambda t: ["plan", "--stack", "dev", "--stack-file", str(deep_yaml(t / "d.yaml"))],
        "nests deeper than",
    ),
    "JSON nested 20,000 deep": (
        lambda t: ["check", "--plan", str(deep_json(t / "d.json")), "--env", "dev"],
        "nests deeper than",
    ),
    "a binary stack file": (
        lambda t: ["plan", "--stack", "dev", "--stack-file", str(_written(t / "b.yaml", bytes(range(256))))],
        "b.yaml",
    ),
    "a UTF-16 stack file": (
        lambda t: [
            "plan",
            "--stack",
            "dev",
            "--stack-file",
            str(_written(t / "u.yaml", (REPO / "stacks" / "Pulumi.dev.yaml").read_text().encode("utf-16"))),
        ],
        "u.yaml",
    ),
    "a binary plan": (
        lambda t: ["check", "--plan", str(_written(t / "p.json", b"\x00\x01")), "--env", "dev"],
        "p.json",
    ),
    "a directory as the stack file": (lambda t: ["plan", "--stack", "dev", "--stack-file", str(t)], "is a directory"),
    "a directory as the plan": (lambda t: ["check", "--plan", str(t), "--env", "dev"], "is a directory"),
    "a directory as the JSON output": (lambda t: ["plan", "--stack", "dev", "--json", str(t)], "is a directory"),
    "a directory as the tfplan output": (
        lambda t: ["export", "tfplan", "--stack", "dev", "-o", str(t)],
        "is a directory",
    ),
    "a missing output folder": (
        lambda t: ["plan", "--stack", "dev", "--json", str(t / "no" / "p.json")],
        "does not exist",
    ),
    "a full disk": (lambda t: ["plan", "--stack", "dev", "--json", "/dev/full"], "/dev/full"),
    "a file as the program directory": (
        lambda t: ["plan", "--stack", "dev", "--program", str(REPO / "README.md")],
        "has no __main__.py",
    ),
    "duplicate YAML keys": (
        lambda t: [
            "plan",
            "--stack",
            "dev",
            "--stack-file",
            str(_written(t / "dup.yaml", b"config:\n  aws:region: us-east-1\n  aws:region: us-west-2\n")),
        ],
        "duplicate key 'aws:region'",
    ),
    "prod with a dev stack file": (
        lambda t: ["plan", "--stack", "prod", "--stack-file", str(REPO / "stacks" / "Pulumi.dev.yaml")],
        "seedance-gpu:env",
    ),
    "decide prod with a dev stack file": (
        lambda t: [
            "decide",
            "--stack",
            "prod",
            "--source",
            "snapshot",
            "--stack-file",
            str(REPO / "stacks" / "Pulumi.dev.yaml"),
        ],
        "seedance-gpu:env",
    ),
    "an empty --now": (lambda t: ["decide", "--stack", "prod", "--source", "snapshot", "--now", ""], "--now"),
    "a --now in the year 9999": (
        lambda t: ["decide", "--stack", "prod", "--source", "snapshot", "--now", "9999-12-31T00:00:00Z"],
        "--now",
    ),
    "--stack and --plan together": (lambda t: ["check", "--stack", "dev", "--plan", "x.json"], "not both"),
    "prices of a region that does not exist": (lambda t: ["prices", "show", "--region", "nowhere-9"], "nowhere-9"),
    "a stack name that is a path": (lambda t: ["plan", "--stack", "../../etc/passwd"], "not a path"),
    "a directory as the demand history": (lambda t: _quotas_plan(t), "is a directory"),
    "a binary demand history": (lambda t: _quotas_plan(_written(t / "d.csv", b"time\x00")), "d.csv"),
    "a demand history past its bound": (lambda t: _quotas_plan(_sparse(t / "d.csv", 40 << 20)), "larger than"),
    "a demand field of a megabyte": (
        lambda t: _quotas_plan(_written(t / "d.csv", b"time,tenant,class,gpus\n0,a,batch," + b"9" * (1 << 20) + b"\n")),
        "line 2",
    ),
    "a demand CSV with an open quote": (
        lambda t: _quotas_plan(_written(t / "d.csv", b'time,tenant,class,gpus\n0,"a,batch,1\n')),
        "d.csv",
    ),
    "an unhashable YAML key": (
        lambda t: [
            "plan",
            "--stack",
            "dev",
            "--stack-file",
            str(_written(t / "k.yaml", b"config:\n  ? [a, b]\n  : c\n")),
        ],
        "unhashable",
    ),
}


def _quotas_plan(demand: Path) -> list[str]:
    return ["quotas", "plan", "--stack", "dev", "--demand", str(demand)]


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


@pytest.mark.parametrize("case", sorted(FILE_CASES))
def test_a_hostile_file_or_argument_is_one_line_exit_2_in_bounded_time_and_memory(tmp_path, case):
    build, words = FILE_CASES[case]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, _out, err = run(build(tmp_path))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1, err
    assert grown_mib < 512, f"the process grew by {grown_mib:.0f} MiB"


CONFIG_CASES = {
    "the Service range inside the VPC": (
        {"seedance-gpu:network": {"vpc_cidr": "172.20.0.0/16"}},
        "seedance-gpu:cluster.service_cidr",
    ),
    "a cluster name too long for its bucket": (
        {"seedance-gpu:cluster": {"name": "c" * 60}},
        "seedance-gpu:cluster.name",
    ),
    "a region without bundled prices": ({"aws:region": "eu-west-1"}, "aws:region"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_nonsense_a_real_account_would_refuse_is_refused_naming_the_key(tmp_path, case):
    change, key = CONFIG_CASES[case]
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    for name, value in change.items():
        current = document["config"].get(name)
        document["config"][name] = {**current, **value} if isinstance(value, dict) else value
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(yaml.safe_dump(document))
    code, _out, err = run(["plan", "--stack", "dev", "--stack-file", str(stack_file)])
    assert code == 2 and key in err and "Traceback" not in err, err


def _tenant(config, **change):
    return {**config["seedance-gpu:tenants"][0], **change}


STRICT_CASES = {
    # Issue 37, item 8: a YAML or JSON value of the wrong type is refused, not coerced (true is no GPU count).
    "a boolean as a GPU count": (
        lambda c: c["seedance-gpu:tenants"][0]["gpus"].update(batch=True),
        "seedance-gpu:tenants[0].gpus.batch = true",
    ),
    "a string as a boolean": (
        lambda c: c["seedance-gpu:endpoints"].update(s3_gateway="yes"),
        'seedance-gpu:endpoints.s3_gateway = "yes"',
    ),
    "a string as an integer": (
        lambda c: c["seedance-gpu:gpu_node_groups"][1].update(min_gpus="4"),
        'seedance-gpu:gpu_node_groups[1].min_gpus = "4"',
    ),
    "a float as an integer": (
        lambda c: c["seedance-gpu:gpu_node_groups"][1].update(min_gpus=4.0),
        "seedance-gpu:gpu_node_groups[1].min_gpus = 4.0",
    ),
    "two tenants of one name": (
        lambda c: c["seedance-gpu:tenants"].append(_tenant(c, namespaces=["other"])),
        'seedance-gpu:tenants[1].name = "video-ml": is another tenant',
    ),
    "a private range on the public endpoint": (
        lambda c: c["seedance-gpu:cluster"].update(public_endpoint_cidrs=["192.168.4.0/24"]),
        "not an internet address range",
    ),
    "a thousand tenants": (
        lambda c: c.update(
            {"seedance-gpu:tenants": [_tenant(c, name=f"team-{i}", namespaces=[f"ns-{i}"]) for i in range(1000)]}
        ),
        "at most 100 items",
    ),
}


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_a_value_of_the_wrong_type_or_a_repeated_name_is_one_bounded_line(tmp_path, case):
    change, words = STRICT_CASES[case]
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    change(document["config"])
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(yaml.safe_dump(document))
    code, _out, err = run(["plan", "--stack", "prod", "--stack-file", str(stack_file)])
    assert code == 2 and words in err and "Traceback" not in err and err.count("\n") == 1, err
    assert len(err) < 1_100, f"a {len(err):,}-character error line"


def test_yaml_1_1_booleans_are_strings_as_pulumi_reads_them(tmp_path):
    """`pulumi up` reads stack files with go-yaml v3, where yes/no/on/off are strings unless decoded into a
    typed bool (its README); the offline plan must refuse what the real run would, not read `yes` as true."""
    text = (REPO / "stacks" / "Pulumi.prod.yaml").read_text()
    assert "    s3_gateway: true\n" in text
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text.replace("    s3_gateway: true\n", "    s3_gateway: yes\n"))
    code, _out, err = run(["plan", "--stack", "prod", "--stack-file", str(stack_file)])
    assert code == 2 and 'seedance-gpu:endpoints.s3_gateway = "yes"' in err, err


def test_a_plan_of_a_stack_that_is_not_an_environment_needs_env(edited):
    path = edit_plan(edited, lambda d: d.update(stack="qa"))
    code, _out, err = run(["check", "--plan", str(path)])
    assert code == 2 and "give --env" in err


@pytest.mark.parametrize("stack", [":", "../prod", "prod/../../x"])
def test_a_plan_whose_stack_is_not_a_stack_name_is_refused(edited, stack):
    """A plan file names its stack; the name picks the stack file it is judged against, so it is never a path
    (the random-damage test below found ":" escaping as a traceback)."""
    path = edit_plan(edited, lambda d: d.update(stack=stack))
    code, _out, err = run(["check", "--plan", str(path), "--env", "prod"])
    assert code == 2 and f"the plan's stack {stack!r} is not a stack name" in err and err.count("\n") == 1, err


def test_a_usage_error_is_one_line_exit_2():
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(err):
        main(["plan"])
    assert exit_info.value.code == 2 and err.getvalue().count("\n") == 1 and "--stack" in err.getvalue()


@pytest.mark.parametrize("how", ["a reader that stops reading", "an ASCII-only output"])
def test_the_console_ends_cleanly_when_output_cannot_be_written_as_is(how):
    command = [sys.executable, "-m", "seedance.cli", "plan", "--stack", "dev"]
    if how == "a reader that stops reading":
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process.stdout.close()  # as `| head -0` would
        err = process.stderr.read().decode()
        code = process.wait(timeout=120)
    else:
        result = subprocess.run(
            command, cwd=REPO, capture_output=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "ascii"}
        )
        code, err = result.returncode, result.stderr.decode()
        assert "\\u2500" in result.stdout.decode()  # the tree's lines, escaped
    assert code == 0 and "Traceback" not in err and "Exception ignored" not in err, err


@pytest.mark.parametrize(
    "command",
    [
        ["breaker", "--stack", "dev"],
        ["preflight", "--stack", "dev"],
        ["cost-gate", "--stack", "dev", "--service", "video"],
    ],
)
@pytest.mark.parametrize("timeout", ["nan", "inf", "0", "-1"])
def test_a_timeout_that_is_no_number_of_seconds_is_a_usage_error(command, timeout):
    """A deadline of nan or inf once reached `Thread.join` and raised there, after the reads had started."""
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(err):
        main([*command, "--timeout", timeout])
    assert exit_info.value.code == 2 and "allowed: above 0 up to 3600 seconds" in err.getvalue()
    assert err.getvalue().count("\n") == 1


def test_version():
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stdout(io.StringIO()) as out:
        main(["--version"])
    assert exit_info.value.code == 0 and out.getvalue().startswith("seedance ")


# -- random damage -------------------------------------------------------------------------------------

JUNK = st.one_of(
    st.integers(-(10**9), 10**9),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _leaves(node, prefix=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _leaves(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node[:3]):
            yield prefix + (index,)
            yield from _leaves(value, prefix + (index,))


def _damage(document, draw):
    damaged = copy.deepcopy(document)
    paths = list(_leaves(damaged))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        parent = damaged
        try:
            for part in path[:-1]:
                parent = parent[part]
            if draw(st.booleans()) and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(JUNK)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed the way there
    return damaged


@settings(
    max_examples=int(os.environ.get("SEEDANCE_FUZZ_EXAMPLES", 25)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_random_damage_to_a_lock_plans_or_exits_2_never_a_traceback(project, tmp_path_factory, data):
    root = tmp_path_factory.mktemp("lock")
    shutil.copytree(project, root, dirs_exist_ok=True)
    lock_file = root / "stacks" / "capacity.prod.lock.json"
    lock_file.write_text(json.dumps(_damage(json.loads(lock_file.read_text()), data.draw), allow_nan=True))
    code, _out, err = run(["plan", "--stack", "prod", "--program", str(root / "infra")])
    assert code in (0, 2) and "Traceback" not in err, err


@settings(
    max_examples=int(os.environ.get("SEEDANCE_FUZZ_EXAMPLES", 25)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_random_damage_to_a_stack_file_plans_or_exits_2_never_a_traceback(project, tmp_path_factory, data):
    """Issue 37: any value of any key of the prod stack file replaced by junk or removed."""
    document = yaml.safe_load((project / "stacks" / "Pulumi.prod.yaml").read_text())
    path = tmp_path_factory.mktemp("stack") / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(_damage(document, data.draw), allow_unicode=True))
    code, _out, err = run(["plan", "--stack", "prod", "--program", str(project / "infra"), "--stack-file", str(path)])
    assert code in (0, 2) and "Traceback" not in err and err.count("\n") <= 1, err


@settings(
    max_examples=int(os.environ.get("SEEDANCE_FUZZ_EXAMPLES", 60)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_random_damage_to_a_plan_json_checks_or_exits_2_never_a_traceback(project, tmp_path_factory, data):
    document = json.loads((project / "prod.plan.json").read_text())
    document["resources"] = document["resources"][:40]  # every kind the rules read is early in the plan
    path = tmp_path_factory.mktemp("plan") / "p.json"
    path.write_text(json.dumps(_damage(document, data.draw), allow_nan=True))
    code, _out, err = run(["check", "--plan", str(path), "--env", "prod"])
    # An exception would escape `main`; 1 is a mandatory rule failing, as a damaged plan may.
    assert code in (0, 1, 2) and "Traceback" not in err, err


def test_a_full_or_closed_stdout_is_one_line_and_exit_2():
    """Issue 37, items 7 and 10: `config schema` and `check` written to a full device end with one line."""
    import subprocess
    import sys

    for argv in (["config", "schema"], ["config", "docs"]):
        with open("/dev/full", "w") as full:
            result = subprocess.run(
                [sys.executable, "-m", "seedance.cli", *argv], stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO
            )
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "No space left on device" in result.stderr
