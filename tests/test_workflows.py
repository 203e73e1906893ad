"""The pull-request workflow as GitHub's Actions hardening guide asks: no token permission by default,
each job only what it needs, OIDC only where a role is assumed, actions pinned by commit, staging and
prod previews only behind their environments and never for a fork; and the files that change what the
gate enforces have code owners."""

import re

import yaml

from tests.stacks import REPO

WORKFLOW = yaml.safe_load((REPO / ".github" / "workflows" / "infra-pr.yml").read_text())
JOBS = WORKFLOW["jobs"]


def test_no_permission_by_default_and_oidc_only_where_a_role_is_assumed():
    assert WORKFLOW["permissions"] == {}
    for name, job in JOBS.items():
        assert "permissions" in job, name
        steps = " ".join(str(step.get("uses", "")) for step in job["steps"])
        assumes_a_role = "configure-aws-credentials" in steps
        assert (job["permissions"].get("id-token") == "write") == assumes_a_role, name
        assert set(job["permissions"].values()) <= {"read", "write"}
        writes = {scope for scope, level in job["permissions"].items() if level == "write"}
        assert writes <= {"id-token", "pull-requests"}, (name, writes)


def test_every_action_is_pinned_by_commit():
    for name, job in JOBS.items():
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), (name, step["uses"])


def test_checkouts_leave_no_token_behind():
    for job in JOBS.values():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False


def test_previews_run_under_their_stacks_environment_and_never_for_a_fork():
    (preview,) = [job for job in JOBS.values() if "id-token" in job.get("permissions", {})]
    assert preview["environment"] == "preview-${{ matrix.stack }}"
    assert preview["if"] == "github.event.pull_request.head.repo.full_name == github.repository"
    (credentials,) = [s for s in preview["steps"] if "configure-aws-credentials" in s.get("uses", "")]
    assert credentials["with"]["role-to-assume"] == "${{ vars.AWS_PREVIEW_ROLE_ARN }}"  # per environment


def test_a_forks_pull_request_is_checked_too():
    """A fork's token is read-only: the comment is skipped for it, the report goes to the run's page."""
    (check,) = [job for name, job in JOBS.items() if name == "check"]
    comment = next(s for s in check["steps"] if "sticky-pull-request-comment" in s.get("uses", ""))
    assert comment["if"] == "github.event.pull_request.head.repo.full_name == github.repository"
    assert any("GITHUB_STEP_SUMMARY" in s.get("run", "") for s in check["steps"])


def test_previews_never_run_on_the_deploy_runner():
    (preview,) = [job for job in JOBS.values() if "id-token" in job.get("permissions", {})]
    assert "seedance-deployer" not in preview["runs-on"]


def test_no_expression_is_spliced_into_a_shell_script():
    """`${{ }}` inside `run:` is code injection when it carries PR-controlled text: values go through env."""
    for name, job in JOBS.items():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), (name, step.get("name"))


def test_what_changes_the_gate_has_code_owners():
    owners = (REPO / ".github" / "CODEOWNERS").read_text()
    owned = {line.split()[0] for line in owners.splitlines() if line.strip() and not line.startswith("#")}
    exceptions = {
        f"/{path.relative_to(REPO).as_posix()}"
        for path in (REPO / "components").rglob("*.py")
        if "checkov_skips(" in path.read_text()
    }
    required = {
        "/policies/",
        "/.github/",
        "/stacks/",
        "/tests/fixtures/policies/",
        "/tests/fixtures/checkov_tfplan_exceptions.json",
        "/components/plan/resources.py",
        "/seedance/check_command.py",
    } | exceptions
    assert required <= owned, required - owned


def _checkouts(job):
    return [s.get("with", {}) for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]


def test_the_gate_runs_the_base_branchs_code_in_a_job_where_no_pull_request_code_runs():
    """Item 6 of issue 35: the check runs from the base commit's checkout; the pull request reaches that job
    only as data (its plan, as an artifact; its stack files, a sparse checkout that runs nothing)."""
    gate = [job for job in JOBS.values() if any("seedance check" in s.get("run", "") for s in job["steps"])]
    assert len(gate) == 1
    (check,) = gate
    root = [c for c in _checkouts(check) if "path" not in c]
    assert root == [{"ref": "${{ github.event.pull_request.base.sha }}", "persist-credentials": False}]
    for checkout in _checkouts(check):
        if "path" in checkout:  # the pull request's files: data only, in their own folder
            assert checkout.get("sparse-checkout") == "stacks" and "ref" not in checkout
            pr_folder = checkout["path"]
            for step in check["steps"]:
                command = step.get("run", "")
                assert not re.search(rf"(^|[\s(/]){re.escape(pr_folder)}/[^\s]*(\.venv|bin|\.py|Makefile)", command)
                assert f"cd {pr_folder}" not in command and step.get("working-directory") != pr_folder
    (gate_step,) = [s for s in check["steps"] if "seedance check" in s.get("run", "")]
    assert re.search(r"(^|\s)\.venv/bin/seedance check --plan ", gate_step["run"])
    assert "needs" in check and JOBS[check["needs"]]["permissions"] == {"contents": "read"}


def test_the_pull_requests_code_only_plans_and_hands_the_plan_on():
    plan = JOBS["plan"]
    assert [c for c in _checkouts(plan)] == [{"persist-credentials": False}]
    commands = [s["run"] for s in plan["steps"] if "run" in s]
    assert commands == [
        "make venv",
        '.venv/bin/seedance plan --stack "$STACK" --json "plan-$STACK.json" --show-secrets',
    ]


def test_the_preview_runs_the_base_branchs_policy_pack():
    preview = JOBS["preview"]
    (pulumi,) = [s for s in preview["steps"] if str(s.get("uses", "")).startswith("pulumi/actions@")]
    base = [c for c in _checkouts(preview) if c.get("path") == "base"]
    assert base and base[0]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert pulumi["with"]["policyPacks"] == "base/policies"
    assert pulumi["with"]["policyPackConfigs"].startswith("base/policies/config/")


def test_every_path_that_shapes_a_plan_or_a_verdict_has_code_owners():
    owners = (REPO / ".github" / "CODEOWNERS").read_text()
    owned = {line.split()[0] for line in owners.splitlines() if line.strip() and not line.startswith("#")}
    assert {
        "/components/",
        "/infra/",
        "/seedance/",
        "/policies/",
        "/stacks/",
        "/pyproject.toml",
        "/Makefile",
        "/.github/",
    } <= owned
