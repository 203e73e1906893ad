"""`seedance check` and `seedance export tfplan`: exit codes, formats, the compare delta, checkov."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from seedance.cli import main
from tests.k8s_checks import CHECKOV

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "check"
T = {"team": "ml", "env": "dev", "cost-center": "cc-1"}


def bad_plan(tmp_path) -> Path:
    plan = {
        "stack": "dev",
        "resources": [
            {
                "urn": "urn:pulumi:dev::app::aws:ebs/volume:Volume::scratch",
                "type": "aws:ebs/volume:Volume",
                "inputs": {
                    "type": "gp2",
                    "size": 500,
                    "encrypted": True,
                    "kmsKeyId": "arn:aws:kms:us-west-2:1:key/k",
                    "tags": T,
                },
            },
            {
                "urn": "urn:pulumi:dev::app::aws:ec2/instance:Instance::box",
                "type": "aws:ec2/instance:Instance",
                "inputs": {"instanceType": "g5.xlarge"},
            },
        ],
    }
    path = tmp_path / "bad.plan.json"
    path.write_text(json.dumps(plan))
    return path


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_each_stack_passes_its_own_mandatory_rules(stack, capsys):
    assert main(["check", "--stack", stack, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"violations", "cost"}
    assert not [v for v in document["violations"] if v["level"] == "mandatory"]
    assert document["cost"]["monthly_usd"] > 0
    assert all(set(v) == {"policy", "level", "urn", "message"} for v in document["violations"])


def test_a_bad_plan_fails_naming_both_rules(tmp_path, capsys):
    assert main(["check", "--plan", str(bad_plan(tmp_path))]) == 1
    out = capsys.readouterr().out
    assert "[mandatory] aws-ebs-volume-disallow-gp2-io1: scratch: scratch uses gp2: gp3 saves $10.00/month" in out
    assert "[mandatory] aws-resource-tags-require-cost-tags: box:" in out
    assert "fix: " in out


def secret(value):
    return {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": value}


def test_secret_values_in_a_plan_file_are_judged_not_crashed_on(tmp_path, capsys):
    """A plan file keeps the engine's secret wrappers: a secret size or tag is still a size or a tag."""
    plan = json.loads(bad_plan(tmp_path).read_text())
    volume = plan["resources"][0]["inputs"]
    volume["size"], volume["tags"] = secret(500), {k: secret(v) for k, v in T.items()}
    plan["resources"][1]["inputs"]["tags"] = secret(T)
    path = tmp_path / "secret.plan.json"
    path.write_text(json.dumps(plan))
    assert main(["check", "--plan", str(path)]) == 1
    captured = capsys.readouterr()
    assert "scratch uses gp2: gp3 saves $10.00/month" in captured.out
    assert "aws-resource-tags-require-cost-tags" not in captured.out  # the secret tags are there
    assert "Traceback" not in captured.err


def test_markdown_report_matches_its_golden_file(tmp_path, capsys):
    """Regenerate with UPDATE_GOLDEN=1 after an intended change, and review the diff."""
    assert main(["check", "--plan", str(bad_plan(tmp_path)), "--format", "markdown"]) == 1
    rendered = capsys.readouterr().out.replace(str(tmp_path), "<tmp>")
    golden = GOLDEN / "bad_plan.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(rendered)
    assert rendered == golden.read_text()


def test_compare_reports_the_cost_change(tmp_path, capsys):
    assert main(["plan", "--stack", "dev", "--json", str(tmp_path / "dev.json")]) == 0
    capsys.readouterr()
    plan = json.loads((tmp_path / "dev.json").read_text())
    plan["resources"] = [r for r in plan["resources"] if r["type"] != "aws:autoscaling/group:Group"]
    (tmp_path / "base.json").write_text(json.dumps(plan))
    assert main(["check", "--stack", "dev", "--format", "json", "--compare", str(tmp_path / "base.json")]) == 0
    document = json.loads(capsys.readouterr().out)
    groups = sum(r["monthly_usd"] for r in document["cost"]["resources"] if r["type"] == "aws:autoscaling/group:Group")
    assert document["compare"]["monthly_delta_usd"] == pytest.approx(groups, abs=0.02)


def test_unreadable_plan_exits_2(tmp_path, capsys):
    (tmp_path / "x.json").write_text("{}")
    assert main(["check", "--plan", str(tmp_path / "x.json")]) == 2
    assert "not a plan JSON" in capsys.readouterr().err


EXCEPTIONS = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "checkov_tfplan_exceptions.json").read_text()
)["exceptions"]


def checkov_findings(tmp_path, stack):
    out = tmp_path / f"{stack}.json"
    assert main(["export", "tfplan", "--stack", stack, "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    result = subprocess.run(
        [str(CHECKOV), "-f", str(out), "--framework", "terraform_plan", "-o", "json", "--compact", "--skip-download"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(result.stdout)
    report = report[0] if isinstance(report, list) else report
    assert report["summary"]["parsing_errors"] == 0
    assert report["summary"]["resource_count"] == len(document["resource_changes"])
    return document, report


def test_exported_terraform_plan_is_read_by_checkov(tmp_path, capsys):
    document, report = checkov_findings(tmp_path, "prod")
    volume = next(r for r in document["resource_changes"] if r["type"] == "aws_ebs_volume")
    assert volume["change"]["after"]["type"] == "io2" and volume["change"]["after"]["kms_key_id"].startswith("arn:")
    template = next(r for r in document["resource_changes"] if r["type"] == "aws_launch_template")
    assert template["change"]["after"]["metadata_options"][0]["http_tokens"] == "required"
    passed = {(c["check_id"], c["resource"].split(".")[0]) for c in report["results"]["passed_checks"]}
    assert ("CKV_AWS_79", "aws_launch_template") in passed  # IMDSv2 required, read from our export
    # Graph checks follow the configuration's references: the bucket's versioning, encryption and
    # public-access block are separate resources, found through their links to it.
    for check in ("CKV_AWS_21", "CKV2_AWS_6", "CKV_AWS_145", "CKV2_AWS_61"):
        assert (check, "aws_s3_bucket") in passed, check
    assert ("CKV2_AWS_11", "aws_vpc") in passed and ("CKV2_AWS_12", "aws_vpc") in passed  # flow logs, default SG


def test_every_checkov_finding_on_every_stack_is_fixed_or_explained(tmp_path):
    used = set()
    for stack in ("dev", "staging", "prod"):
        _document, report = checkov_findings(tmp_path, stack)
        for finding in report["results"]["failed_checks"]:
            kind = finding["resource"].split(".")[0]
            match = [
                i
                for i, e in enumerate(EXCEPTIONS)
                if (e["check"], e["resource_type"]) == (finding["check_id"], kind) and stack in e["stacks"]
            ]
            assert match, f"{stack}: {finding['check_id']} on {finding['resource']} is neither fixed nor explained"
            used.add((match[0], stack))
    assert all(len(e["reason"]) > 40 for e in EXCEPTIONS)
    stale = [(e["check"], stack) for i, e in enumerate(EXCEPTIONS) for stack in e["stacks"] if (i, stack) not in used]
    assert stale == []


def test_secret_markers_of_an_in_process_plan_reach_the_rules_as_values():
    from seedance.check_command import plan_resources
    from seedance_client.engine import Plan, PlannedResource, Secret

    volume = PlannedResource(
        urn="urn:pulumi:dev::app::aws:ebs/volume:Volume::v",
        type="aws:ebs/volume:Volume",
        name="v",
        parent=None,
        custom=True,
        inputs={"size": Secret(100), "tags": {"team": Secret("ml")}, "list": [Secret(1)]},
    )
    (resource,) = plan_resources(Plan(project="app", stack="dev", resources=[volume]))
    assert resource.props == {"size": 100, "tags": {"team": "ml"}, "list": [1]}


def test_the_pr_check_plans_the_base_commit_with_its_own_code():
    """The cost delta compares against the base branch as it is: its program with its components,
    installed from its own checkout, never this branch's modules."""
    import yaml

    workflow = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / ".github" / "workflows" / "infra-pr.yml").read_text()
    )
    check = workflow["jobs"]["check"]
    (root,) = [
        s
        for s in check["steps"]
        if str(s.get("uses", "")).startswith("actions/checkout@") and "path" not in s.get("with", {})
    ]
    assert root["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"  # the job's code is the base's
    (base_step,) = [s for s in check["steps"] if "seedance plan" in s.get("run", "")]
    assert base_step["run"].startswith(".venv/bin/seedance plan") and "--program" not in base_step["run"]


def test_a_diff_of_two_stacks_plans_is_refused_unless_asked(tmp_path, capsys):
    """Issue 37, item 8: dev against prod is no change of one stack (every resource would read as deleted)."""
    for stack in ("dev", "prod"):
        assert main(["plan", "--stack", stack, "--json", str(tmp_path / f"{stack}.json")]) == 0
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "dev.json"), str(tmp_path / "prod.json")]) == 2
    err = capsys.readouterr().err
    assert "a plan of stack 'dev' and the head of 'prod'" in err and len(err.strip().splitlines()) == 1
    assert main(["diff", str(tmp_path / "dev.json"), str(tmp_path / "prod.json"), "--across-stacks"]) == 0
    assert main(["diff", str(tmp_path / "dev.json"), str(tmp_path / "dev.json")]) == 0


def test_the_documented_diff_of_a_masked_base_names_no_phantom_replacement(tmp_path, capsys):
    """docs/day-two.md's workflow: `seedance plan --json base.json` (secrets masked), then `seedance diff
    base.json --stack dev` and the PR check's `--compare`. Before, every generated key read as changed
    against its mask: four TLS and Secret replacements of a change that touched none of them."""
    assert main(["plan", "--stack", "dev", "--json", str(tmp_path / "base.json")]) == 0
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "base.json"), "--stack", "dev"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No changes to the running system.") and "were not compared" in out
    assert main(["check", "--stack", "dev", "--format", "json", "--compare", str(tmp_path / "base.json")]) == 0
    changes = json.loads(capsys.readouterr().out)["compare"]["changes"]
    assert changes[0] == "No changes to the running system." and "were not compared" in changes[-1]


def test_a_check_reads_each_resource_once_and_estimates_the_plan_once(plan_of, monkeypatch):
    """The rules and the cost table read one read form of the plan: each resource is scanned for unknowns
    once, and the budget rules and the cost table share one estimate (at 10,000 resources each extra pass
    cost about a tenth of the check: bench/check_speed.py)."""
    import components.cost.estimate as estimates
    import components.plan.unknowns as unknowns
    from seedance.check_command import check, plan_resources

    resources = plan_resources(plan_of("prod"))
    reads, made = [], []
    real_read, real_estimate = unknowns.as_read, estimates.estimate
    monkeypatch.setattr(unknowns, "as_read", lambda r: reads.append(r.urn) or real_read(r))
    monkeypatch.setattr(estimates, "estimate", lambda *a, **k: made.append(1) or real_estimate(*a, **k))
    budget = {
        name: {"monthly_budget_usd": 1e9}
        for name in ("budget-monthly-cost-limit", "budget-monthly-cost-warn-near-budget")
    }
    violations, cost = check(resources, "prod", "us-east-1", budget)
    assert sorted(reads) == sorted(r.urn for r in resources)
    assert len(made) == 1 and cost.monthly_usd > 0
    assert not [v for v in violations if v.policy.startswith("budget-")]
    # The same list checked again is estimated again: the estimate kept is the last plan's, by identity.
    check(list(resources), "prod", "us-east-1", budget)
    assert len(made) == 2


def test_a_check_pauses_the_collector_and_gives_it_back_as_it_found_it(plan_of, monkeypatch):
    """No cyclic collection walks the plan during a check (bench/check_speed.py's plan with unknown values
    saw 30 collections in each check at 10,000 resources); the collector is on again after it, also when the
    check stops on bad input, and stays off for a caller that had turned it off."""
    import gc

    import components.cost.estimate as estimates
    from seedance.check_command import CheckInputError, check, plan_resources

    resources = plan_resources(plan_of("dev"))
    during = []
    real_estimate = estimates.estimate
    monkeypatch.setattr(estimates, "estimate", lambda *a, **k: during.append(gc.isenabled()) or real_estimate(*a, **k))
    check(resources, "dev", "us-east-1")
    assert during and not any(during) and gc.isenabled()
    assert estimates._last_estimate[0]() is None  # its read form is gone: no collection has it to walk
    with pytest.raises(CheckInputError):
        check(list(resources), "dev", "xx-nowhere-1")
    assert gc.isenabled()
    gc.disable()
    try:
        check(list(resources), "dev", "us-east-1")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_default_path_passes_prod_and_keeps_its_secrets_out_of_the_file(tmp_path, capsys):
    """`seedance plan --stack prod --json F` then `seedance check --plan F --env prod`: the unedited plan
    passes, every release rendered from the file (the adapter's values hide its key, nothing else), and the
    file holds no key."""
    plan_file = tmp_path / "prod.json"
    assert main(["plan", "--stack", "prod", "--json", str(plan_file)]) == 0
    text = plan_file.read_text()
    assert "PRIVATE KEY" not in text and '"key": "[secret]"' in text
    capsys.readouterr()
    assert main(["check", "--plan", str(plan_file), "--env", "prod"]) == 0
    assert "Policy violations: none" in capsys.readouterr().out
