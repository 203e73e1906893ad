"""The CrossGuard pack, without starting its server: every rule is in it, and a wrapped rule runs
over the SDK's own argument objects, unknown preview values included."""

import json
import runpy
from pathlib import Path

import pulumi_policy
import pytest
import yaml
from pulumi_policy.proxy import unknown_checking_proxy

from policies.framework import to_crossguard
from policies.rules import ALL_RULES

PACK = Path(__file__).resolve().parents[2] / "policies"
UNKNOWN = "3eeb2bf0-c639-47a8-9e75-3b44932eb421"


def built_pack(monkeypatch, stack):
    built = {}

    class RecordingPack:  # stands in for PolicyPack, whose constructor serves gRPC and blocks
        def __init__(self, name, policies, **options):
            built.update(name=name, policies=policies, options=options)

    monkeypatch.setattr(pulumi_policy, "PolicyPack", RecordingPack)
    monkeypatch.setenv("PULUMI_STACK", stack)
    runpy.run_path(str(PACK / "__main__.py"), run_name="__main__")
    return built


def test_pack_main_builds_every_rule(monkeypatch):
    built = built_pack(monkeypatch, "dev")
    assert built["name"] == "seedance-cost-policies"
    assert [p.name for p in built["policies"]] == [rule.name for rule in ALL_RULES]
    assert yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())["runtime"]["name"] == "python"


@pytest.mark.parametrize("stack, env", [("dev", "dev"), ("staging", "staging"), ("prod", "prod"), ("my-sandbox", "prod")])
def test_pack_enforces_its_environment_without_a_config_file(monkeypatch, stack, env):
    """`pulumi preview --policy-pack policies` alone (no --policy-pack-config) must block what the
    environment forbids: each policy carries its environment's level and config as its own defaults;
    a stack that is not an environment gets prod's."""
    config = json.loads((PACK / "config" / f"{env}.json").read_text())
    for policy in built_pack(monkeypatch, stack)["policies"]:
        entry = config.get(policy.name, config["all"])
        level = entry if isinstance(entry, str) else entry.get("enforcementLevel", config["all"])
        assert policy.enforcement_level.value == level, policy.name
        if isinstance(entry, dict):
            schema = policy.config_schema.properties
            assert {k: schema[k]["default"] for k in entry if k != "enforcementLevel"} == \
                {k: v for k, v in entry.items() if k != "enforcementLevel"}


def test_wrapped_resource_rule_reports_through_the_sdk_arguments():
    (rule,) = [r for r in ALL_RULES if r.name == "aws-ebs-volume-disallow-gp2-io1"]
    policy = to_crossguard(rule)
    assert isinstance(policy, pulumi_policy.ResourceValidationPolicy) and policy.remediation_steps
    args = pulumi_policy.ResourceValidationArgs("aws:ebs/volume:Volume", unknown_checking_proxy({"type": "gp2", "size": 100}),
                                                "urn:pulumi:s::p::aws:ebs/volume:Volume::v", "v", None, None,
                                                config={"region": "us-east-1"})
    reports = []
    policy.validate(args, lambda message, urn=None: reports.append(message))
    assert reports == ["v uses gp2: gp3 saves $2.00/month"]


def test_wrapped_budget_rule_survives_unknown_values_at_preview():
    (rule,) = [r for r in ALL_RULES if r.name == "budget-monthly-cost-warn-near-budget"]
    policy = to_crossguard(rule)
    volume = pulumi_policy.PolicyResource("aws:ebs/volume:Volume", unknown_checking_proxy({"type": "gp3", "size": UNKNOWN}),
                                          "urn:pulumi:s::p::aws:ebs/volume:Volume::v", "v", None, None, None, [], {})
    args = pulumi_policy.StackValidationArgs([volume], config={"monthly_budget_usd": 1000})
    reports = []
    policy.validate(args, lambda message, urn=None: reports.append((urn, message)))
    assert len(reports) == 1 and "unknown until they exist" in reports[0][1]


@pytest.mark.parametrize("env", ["dev", "staging", "prod"])
def test_policy_config_budgets_follow_the_stacks(env):
    from tests.infra.test_capacity import stack_config

    config = json.loads((PACK / "config" / f"{env}.json").read_text())
    stack = stack_config(env)
    for name in ("budget-monthly-cost-limit", "budget-monthly-cost-warn-near-budget"):
        assert config[name]["monthly_budget_usd"] == stack.budget.monthly_usd
        assert config[name]["region"] == stack.region


def test_wrapped_rule_that_reads_an_unknown_raises_the_sdks_own_error():
    """The SDK turns UnknownValueError into its advisory "can't run policy ... during preview"; any other
    exception makes the engine fail the preview."""
    from pulumi_policy.proxy import UnknownValueError

    (rule,) = [r for r in ALL_RULES if r.name == "aws-ec2-instance-launch-require-imdsv2"]
    policy = to_crossguard(rule)
    args = pulumi_policy.ResourceValidationArgs(
        "aws:ec2/launchTemplate:LaunchTemplate", unknown_checking_proxy({"metadataOptions": "dd056dcd-154b-4c76-9bd3-c8f88648b5ff"}),
        "urn:pulumi:s::p::aws:ec2/launchTemplate:LaunchTemplate::lt", "lt", None, None, config={})
    with pytest.raises(UnknownValueError):
        policy.validate(args, lambda message, urn=None: None)
