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


@pytest.mark.parametrize(
    "stack, env", [("dev", "dev"), ("staging", "staging"), ("prod", "prod"), ("my-sandbox", "prod")]
)
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
            assert {k: schema[k]["default"] for k in entry if k != "enforcementLevel"} == {
                k: v for k, v in entry.items() if k != "enforcementLevel"
            }


def test_wrapped_resource_rule_reports_through_the_sdk_arguments():
    (rule,) = [r for r in ALL_RULES if r.name == "aws-ebs-volume-disallow-gp2-io1"]
    policy = to_crossguard(rule)
    assert isinstance(policy, pulumi_policy.ResourceValidationPolicy) and policy.remediation_steps
    args = pulumi_policy.ResourceValidationArgs(
        "aws:ebs/volume:Volume",
        unknown_checking_proxy({"type": "gp2", "size": 100}),
        "urn:pulumi:s::p::aws:ebs/volume:Volume::v",
        "v",
        None,
        None,
        config={"region": "us-east-1"},
    )
    reports = []
    policy.validate(args, lambda message, urn=None: reports.append(message))
    assert reports == ["v uses gp2: gp3 saves $2.00/month"]


def test_wrapped_budget_rule_survives_unknown_values_at_preview():
    (rule,) = [r for r in ALL_RULES if r.name == "budget-monthly-cost-warn-near-budget"]
    policy = to_crossguard(rule)
    volume = pulumi_policy.PolicyResource(
        "aws:ebs/volume:Volume",
        unknown_checking_proxy({"type": "gp3", "size": UNKNOWN}),
        "urn:pulumi:s::p::aws:ebs/volume:Volume::v",
        "v",
        None,
        None,
        None,
        [],
        {},
    )
    args = pulumi_policy.StackValidationArgs([volume], config={"monthly_budget_usd": 1000})
    reports = []
    policy.validate(args, lambda message, urn=None: reports.append((urn, message)))
    assert len(reports) == 1 and "unknown until they exist" in reports[0][1]


@pytest.mark.parametrize("env", ["dev", "staging", "prod"])
def test_policy_config_budgets_follow_the_stacks(env):
    from tests.stacks import stack_config

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
        "aws:ec2/launchTemplate:LaunchTemplate",
        unknown_checking_proxy({"metadataOptions": "dd056dcd-154b-4c76-9bd3-c8f88648b5ff"}),
        "urn:pulumi:s::p::aws:ec2/launchTemplate:LaunchTemplate::lt",
        "lt",
        None,
        None,
        config={},
    )
    with pytest.raises(UnknownValueError):
        policy.validate(args, lambda message, urn=None: None)


def as_engine_sends(plan):
    """The plan's resources as the engine hands them to AnalyzeStack: no physical ids (a launch
    template's id is unknown at preview), links as dependencies, props behind the SDK's proxies."""
    from seedance.check_command import plan_resources

    resources = plan_resources(plan)
    by_urn = {}
    for r in resources:
        props = {k: v for k, v in r.props.items()}
        policy = props.get("mixedInstancesPolicy")
        if policy:
            spec = policy["launchTemplate"]["launchTemplateSpecification"]
            props["mixedInstancesPolicy"] = {
                **policy,
                "launchTemplate": {
                    **policy["launchTemplate"],
                    "launchTemplateSpecification": {**spec, "launchTemplateId": UNKNOWN_ID},
                },
            }
        by_urn[r.urn] = pulumi_policy.PolicyResource(
            r.type, unknown_checking_proxy(props), r.urn, r.name, None, None, None, [], {}
        )
    for r in resources:
        by_urn[r.urn].dependencies = [by_urn[u] for u in r.dependencies if u in by_urn]
    return list(by_urn.values())


UNKNOWN_ID = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_budget_estimate_is_the_same_from_the_engine_and_from_seedance_check(plan_of, stack):
    from components.cost.estimate import catalog_for, estimate
    from policies.framework import _resource
    from seedance.check_command import plan_resources

    plan = plan_of(stack)
    catalog = catalog_for(plan.outputs["region"])
    offline = estimate(plan_resources(plan), catalog)
    engine = estimate([_resource(r) for r in as_engine_sends(plan)], catalog)
    assert engine.monthly_usd == offline.monthly_usd
    assert [line.basis for line in engine.lines] == [line.basis for line in offline.lines]


def test_each_policy_carries_the_rules_metadata_as_the_sdk_types_it():
    for rule in ALL_RULES:
        policy = to_crossguard(rule)
        assert policy.severity == pulumi_policy.Severity(rule.severity), rule.name
        assert policy.tags == list(rule.topics) and policy.description == rule.description
        # A rule without config has no schema: the engine then accepts no config for it.
        assert (policy.config_schema is None) == (not rule.config), rule.name


def test_a_stack_policy_reports_on_the_resource_and_reads_every_link_and_list():
    """A stack finding names its resource's URN; dependencies come from both the resource's and its
    properties' dependency lists; the SDK's proxies, nested ones too, are unwrapped, not read (reading
    an unknown through one raises), so the rule gets plain lists and dicts."""
    from policies.framework import Rule

    seen = {}

    def check(resources, config):
        for resource in resources:
            seen[resource.name] = resource
            yield resource.urn, f"{resource.name} judged"

    policy = to_crossguard(Rule("test-stack-rule", "d", "low", "r", ("t",), check_stack=check))
    template = pulumi_policy.PolicyResource(
        "aws:ec2/launchTemplate:LaunchTemplate", unknown_checking_proxy({}), "urn:lt", "lt", None, None, None, [], {}
    )
    key = pulumi_policy.PolicyResource(
        "aws:kms/key:Key", unknown_checking_proxy({}), "urn:key", "key", None, None, None, [], {}
    )
    group = pulumi_policy.PolicyResource(
        "aws:autoscaling/group:Group",
        unknown_checking_proxy({"vpcZoneIdentifiers": unknown_checking_proxy(["subnet-1", UNKNOWN_ID])}),
        "urn:asg",
        "asg",
        None,
        None,
        None,
        [template],
        {"launchTemplate": [template, key]},
    )
    reports = []
    policy.validate(
        pulumi_policy.StackValidationArgs([template, key, group], config={}),
        lambda message, urn=None: reports.append((urn, message)),
    )
    assert ("urn:asg", "asg judged") in reports and len(reports) == 3
    assert seen["asg"].dependencies == ("urn:lt", "urn:key")
    zones = seen["asg"].props["vpcZoneIdentifiers"]
    assert isinstance(zones, list) and list.__eq__(
        zones, ["subnet-1", UNKNOWN_ID]
    )  # unknown inside: read the checking way


def test_a_resource_policy_reports_without_a_urn():
    """The SDK attaches a resource policy's report to the resource itself; the pack passes no URN."""
    (rule,) = [r for r in ALL_RULES if r.name == "aws-ebs-volume-disallow-gp2-io1"]
    args = pulumi_policy.ResourceValidationArgs(
        "aws:ebs/volume:Volume",
        unknown_checking_proxy({"type": "gp2", "size": 10}),
        "urn:v",
        "v",
        None,
        None,
        config={"region": "us-east-1"},
    )
    calls = []
    to_crossguard(rule).validate(args, lambda *arguments: calls.append(arguments))
    assert len(calls) == 1 and len(calls[0]) == 2 and calls[0][1] is None


def test_a_violation_in_json_names_its_policy_level_resource_and_message():
    from policies.framework import Violation

    violation = Violation("p", "mandatory", "urn:x", "m", "fix it", kind="preview")
    assert violation.to_json() == {"policy": "p", "level": "mandatory", "urn": "urn:x", "message": "m"}


def test_what_the_stack_expects_is_laid_over_the_files_defaults():
    (rule,) = [r for r in ALL_RULES if r.name == "aws-ebs-volume-disallow-gp2-io1"]
    enforcement = {rule.name: {"enforcementLevel": "mandatory", "region": "eu-west-1"}}
    assert to_crossguard(rule, enforcement).config_schema.properties["region"]["default"] == "eu-west-1"
    policy = to_crossguard(rule, enforcement, {"region": "ap-south-1"})
    assert policy.config_schema.properties["region"]["default"] == "ap-south-1"
    assert policy.enforcement_level == pulumi_policy.EnforcementLevel.MANDATORY
