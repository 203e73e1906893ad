"""Every rule on a passing and a failing fixture (tests/fixtures/policies/<rule>.json), and its metadata."""

import copy
import importlib
import json
import os
import pkgutil
import re
from pathlib import Path

import pytest

from components.plan.resources import PlanResource
from policies import rules as rule_modules
from policies.framework import PolicyConfigError, run_rules
from policies.rules import ALL_RULES
from seedance.check_command import plan_resources
from tests.unknowns import UNKNOWN

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "policies"
RULES = {rule.name: rule for rule in ALL_RULES}


def resources(entries):
    return [
        PlanResource(
            urn=e["urn"], type=e["type"], name=e["name"], props=e["props"], parent=e.get("parent"), id=e.get("id")
        )
        for e in entries
    ]


def run(rule, entries, config):
    return run_rules(
        [rule], resources(entries), {"all": "mandatory", rule.name: {"enforcementLevel": "mandatory", **config}}
    )


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_passes_its_good_fixture_and_flags_its_bad_one(name):
    fixture = json.loads((FIXTURES / f"{name}.json").read_text())
    rule = RULES[name]
    # "pass_config": a rule judged by what the gate found outside the plan (the charts it could not render)
    assert run(rule, fixture["pass"], fixture.get("pass_config", fixture["config"])) == []
    violations = run(rule, fixture["fail"], fixture["config"])
    # "stack": a finding about the stack as a whole, attached to no resource (the engine shows it on the stack)
    assert {v.urn or "stack" for v in violations} == set(fixture["flagged"])
    for urn, expected in fixture["flagged"].items():
        messages = [v.message for v in violations if (v.urn or "stack") == urn]
        assert any(expected in message for message in messages), messages
    assert all(v.policy == name and v.level == "mandatory" for v in violations)


GOLDEN_MESSAGES = Path(__file__).resolve().parents[1] / "golden" / "policies" / "messages.json"


def test_each_rule_module_holds_the_rule_it_is_named_for():
    modules = [m.name for m in pkgutil.iter_modules(rule_modules.__path__) if not m.name.startswith("_")]
    assert sorted(name.replace("_", "-") for name in modules) == sorted(RULES)
    for name in modules:
        assert importlib.import_module(f"policies.rules.{name}").RULE.name == name.replace("_", "-")


def test_every_rule_has_its_fixture_and_golden_messages_and_nothing_else_has():
    """A rule added without them fails here; one removed leaves no stale fixture behind."""
    assert {path.stem for path in FIXTURES.glob("*.json")} == set(RULES)
    assert set(json.loads(GOLDEN_MESSAGES.read_text())) == set(RULES)


def test_every_rules_findings_on_its_bad_fixture_match_the_golden_file():
    """What each rule says, whole (the fixtures above check a phrase): a finding that names the wrong
    container, value or saving shows in review. Regenerate after an intended change, then review the diff:
        UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/policies/test_rules.py -k golden"""
    said = {}
    for name, rule in sorted(RULES.items()):
        fixture = json.loads((FIXTURES / f"{name}.json").read_text())
        for violation in run(rule, fixture["fail"], fixture["config"]):
            said.setdefault(name, {}).setdefault(violation.urn or "stack", []).append(violation.message)
    said = {name: {urn: sorted(messages) for urn, messages in found.items()} for name, found in said.items()}
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN_MESSAGES.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN_MESSAGES.write_text(json.dumps(said, indent=1, sort_keys=True) + "\n")
    assert said == json.loads(GOLDEN_MESSAGES.read_text()), "regenerate: UPDATE_GOLDEN=1 pytest " + __file__


def test_stack_rules_attach_findings_about_the_whole_stack_to_the_stack():
    """The engine gives AnalyzeStack resources in no fixed order: a stack-wide finding pinned to 'the
    first' resource would land on a different resource from run to run."""
    for name in (
        "aws-vpc-nat-require-s3-kms-endpoints",
        "budget-monthly-cost-limit",
        "budget-monthly-cost-warn-near-budget",
    ):
        fixture = json.loads((FIXTURES / f"{name}.json").read_text())
        forward = run(RULES[name], fixture["fail"], fixture["config"])
        backward = run(RULES[name], list(reversed(fixture["fail"])), fixture["config"])
        assert [v.urn for v in forward] == [v.urn for v in backward] == [None] * len(forward), name


def test_every_rule_has_a_fixture_and_no_fixture_is_orphaned():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(RULES)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.name)
def test_rule_metadata(rule):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+){2,}", rule.name)
    module_file = Path(__file__).resolve().parents[2] / "policies" / "rules" / f"{rule.name.replace('-', '_')}.py"
    assert module_file.is_file()  # one rule per file, named after the rule
    assert rule.description and rule.remediation and rule.topics
    assert rule.severity in ("low", "medium", "high", "critical")
    assert (rule.check_resource is None) != (rule.check_stack is None)


def test_budget_rule_reports_unknown_values_instead_of_crashing():
    unknown_size = PlanResource(
        "urn:v", "aws:ebs/volume:Volume", "v", {"type": "gp3", "size": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}
    )
    violations = run(RULES["budget-monthly-cost-warn-near-budget"], [], {"monthly_budget_usd": 100})
    assert violations == []
    violations = run_rules(
        [RULES["budget-monthly-cost-warn-near-budget"]],
        [unknown_size],
        {"budget-monthly-cost-warn-near-budget": {"monthly_budget_usd": 100}},
    )
    assert len(violations) == 1 and "costs unknown until they exist" in violations[0].message
    four = [PlanResource(f"urn:v{i}", "aws:ebs/volume:Volume", f"v{i}", unknown_size.props) for i in range(4)]
    (violation,) = run_rules(
        [RULES["budget-monthly-cost-warn-near-budget"]],
        four,
        {"budget-monthly-cost-warn-near-budget": {"monthly_budget_usd": 100}},
    )
    assert (
        violation.message.startswith("4 resource(s) have costs unknown") and violation.message.count(".size can't") == 3
    )
    assert (
        run_rules(
            [RULES["budget-monthly-cost-limit"]],
            [unknown_size],
            {"budget-monthly-cost-limit": {"monthly_budget_usd": 100}},
        )
        == []
    )


def test_disabled_rules_do_not_run_and_levels_come_from_the_config():
    fixture = json.loads((FIXTURES / "aws-ebs-volume-disallow-gp2-io1.json").read_text())
    rule = RULES["aws-ebs-volume-disallow-gp2-io1"]
    assert run_rules([rule], resources(fixture["fail"]), {rule.name: "disabled"}) == []
    advisory = run_rules([rule], resources(fixture["fail"]), {"all": "advisory"})
    assert advisory and {v.level for v in advisory} == {"advisory"}


@pytest.mark.parametrize(
    "enforcement, expected",
    [
        ({"all": "strict"}, 'all = "strict": allowed: advisory, mandatory, remediate, disabled'),
        (
            {"budget-monthly-cost-limit": {"enforcementLevel": "blocking"}},
            'budget-monthly-cost-limit.enforcementLevel = "blocking": allowed',
        ),
        (
            {"budget-monthly-cost-limit": {"monthly_budget_usd": "lots"}},
            "budget-monthly-cost-limit.monthly_budget_usd = \"lots\": 'lots' is not of type 'number'",
        ),
        ({"aws-resource-tags-require-cost-tags": {"tags": "team"}}, "aws-resource-tags-require-cost-tags.tags"),
        (
            {"budget-monthly-cost-limit": 42},
            "budget-monthly-cost-limit = 42: allowed: an enforcement level or an object",
        ),
        (
            {"budget-monthly-cost-limit": "mandtory"},
            'budget-monthly-cost-limit = "mandtory": allowed: advisory, mandatory',
        ),
    ],
)
def test_policy_config_is_validated_as_the_engine_validates_it(enforcement, expected):
    """The engine checks levels and each policy's config schema before it configures the pack; the
    offline check refuses the same documents instead of crashing inside a rule."""
    with pytest.raises(PolicyConfigError) as error:
        run_rules(ALL_RULES, [], enforcement)
    assert expected in str(error.value)


def test_seedance_check_reports_a_bad_policy_config_in_one_line(monkeypatch, capsys):
    import seedance.check_command
    from seedance.cli import main

    monkeypatch.setattr(
        seedance.check_command,
        "load_enforcement",
        lambda env: {"all": "mandatory", "budget-monthly-cost-limit": {"monthly_budget_usd": "lots"}},
    )
    assert main(["check", "--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert "policy config for dev: budget-monthly-cost-limit.monthly_budget_usd" in err and err.count("\n") == 1


LAUNCH_SETTINGS = {
    "aws:ec2/launchTemplate:LaunchTemplate": lambda public: {
        "networkInterfaces": [{"associatePublicIpAddress": public}]
    },
    "aws:ec2/instance:Instance": lambda public: {"associatePublicIpAddress": public},
    "aws:ec2/spotInstanceRequest:SpotInstanceRequest": lambda public: {"associatePublicIpAddress": public},
    "aws:ec2/launchConfiguration:LaunchConfiguration": lambda public: {"associatePublicIpAddress": public},
}


@pytest.mark.parametrize("resource_type", sorted(LAUNCH_SETTINGS))
def test_launch_time_rules_cover_every_resource_that_launches_instances(resource_type):
    """IMDSv1 and a public IP are as bad on an instance or a launch configuration as on a template."""

    def launcher(name, props):
        return PlanResource(f"urn:pulumi:s::p::{resource_type}::{name}", resource_type, name, props)

    safe = launcher(
        "safe",
        {
            "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
            **LAUNCH_SETTINGS[resource_type](False),
        },
    )
    unsafe = launcher("unsafe", LAUNCH_SETTINGS[resource_type](True))  # no metadata options: EC2's default, IMDSv1
    rules = [RULES["aws-ec2-instance-launch-require-imdsv2"], RULES["aws-ec2-instance-launch-disallow-public-ip"]]
    violations = run_rules(rules, [safe, unsafe], {"all": "mandatory"})
    assert sorted((v.policy, v.urn.rsplit("::", 1)[1]) for v in violations) == [
        ("aws-ec2-instance-launch-disallow-public-ip", "unsafe"),
        ("aws-ec2-instance-launch-require-imdsv2", "unsafe"),
    ]


def test_a_rules_resource_types_leave_out_only_resources_it_never_judges(stack_plan):
    """`resource_types` (or `type_prefix`, `type_suffix`) lets `seedance check` skip resources; the engine
    asks the rule of every resource, so the rule must find nothing in the others: every fixture's resources
    and every stack's plan, with their inputs as they are and unknown."""
    others = [
        r
        for name in RULES
        for case in ("pass", "fail")
        for r in resources(json.loads((FIXTURES / f"{name}.json").read_text())[case])
    ]
    others += plan_resources(stack_plan)
    narrowed = [r for r in ALL_RULES if r.narrowed]
    assert {r.name for r in narrowed if r.type_prefix} == {
        "aws-resource-tags-require-cost-tags",
        "kubernetes-admission-disallow-undeclared-mutation",
        "kubernetes-container-disallow-unsafe-options",
        "kubernetes-grafana-disallow-anonymous-access",
        "kubernetes-patch-restrict-to-audit-labels",
        "kubernetes-pod-enforce-pod-security-standards",
        "kubernetes-tenant-require-contract-fit",
        "kubernetes-workload-restrict-service-account",
    }
    assert {r.name for r in narrowed if r.type_suffix} == {"kubernetes-patch-restrict-to-audit-labels"}
    for rule in narrowed:
        fixture = json.loads((FIXTURES / f"{rule.name}.json").read_text())
        config = {**rule.defaults(), **fixture["config"]}
        for resource in (r for r in others if not rule.judges(r.type)):
            for props in (resource.props, {key: UNKNOWN for key in resource.props}):
                judged = PlanResource(resource.urn, resource.type, resource.name, props)
                assert list(rule.check_resource(judged, config)) == [], (rule.name, resource.type)


def test_an_io2_volume_of_unknown_size_or_iops_is_not_judged():
    """The rule prices only what it knows: an unknown size or IOPS (a preview's computed value) is no finding."""
    from policies.rules.aws_ebs_volume_flag_overprovisioned_io2 import check
    from tests.policies.spellings import resource

    config, unknown = {"region": "us-east-1"}, "(unknown)"  # as a plan file writes a value known only at apply
    for props in ({"type": "io2", "size": unknown, "iops": 4000}, {"type": "io2", "size": 100, "iops": unknown}):
        assert list(check(resource("aws:ebs/volume:Volume", props), config)) == []
    assert list(check(resource("aws:ebs/volume:Volume", {"type": "io2", "size": 100, "iops": 4000}), config))


def test_only_io2_volumes_are_judged_a_gp3_volume_of_the_same_size_and_iops_is_not():
    from policies.rules.aws_ebs_volume_flag_overprovisioned_io2 import check
    from tests.policies.spellings import resource

    config = {"region": "us-east-1"}
    assert list(check(resource("aws:ebs/volume:Volume", {"type": "io2", "size": 100, "iops": 4000}), config))
    for kind in ("gp3", "io1", None):
        assert list(check(resource("aws:ebs/volume:Volume", {"type": kind, "size": 100, "iops": 4000}), config)) == []


def test_triton_model_control_mode_is_everything_after_the_first_equals_sign():
    """Triton reads `--model-control-mode=none=explicit` as the mode "none=explicit" (and refuses it): not none."""
    from policies.rules.kubernetes_deployment_require_triton_model_control import mode_of

    assert mode_of(["tritonserver", "--model-control-mode=none=explicit"]) == "none=explicit"
    assert mode_of(["tritonserver", "--model-control-mode=EXPLICIT"]) == "explicit"


@pytest.mark.parametrize(
    "words, mode",
    [
        (["--model-cont=explicit"], "explicit"),  # getopt_long takes an unambiguous prefix
        (["--model-control=explicit"], "explicit"),
        (["--model-control-mode", "poll", "--model-contr", "explicit"], "explicit"),  # two words, the last wins
        (["--model-con=explicit"], "none"),  # also begins --model-config-name: Triton refuses it, no mode set
        (["--model-control-modes=explicit"], "none"),  # longer than the option: not it
        (["--model-config-name=explicit"], "none"),
    ],
)
def test_triton_reads_an_abbreviated_model_control_option_as_getopt_long_does(words, mode):
    from policies.rules.kubernetes_deployment_require_triton_model_control import mode_of

    assert mode_of(["tritonserver", *words]) == mode


def test_a_bare_pod_is_judged_by_its_own_labels():
    from components.common.manifests import COST_LABEL_KEYS
    from policies.rules.kubernetes_workload_require_cost_labels import check
    from tests.policies.spellings import resource

    config = {"label_keys": list(COST_LABEL_KEYS)}
    spec = {"containers": [{"name": "c", "image": "busybox"}]}
    labelled = {"metadata": {"labels": {key: "x" for key in COST_LABEL_KEYS}}, "spec": spec}
    assert list(check(resource("kubernetes:core/v1:Pod", labelled), config)) == []
    assert list(check(resource("kubernetes:core/v1:Pod", {"metadata": {}, "spec": spec}), config))


def test_an_io2_volume_at_gp3s_most_iops_is_flagged_and_one_above_is_not():
    """gp3 carries up to its maximum IOPS, that maximum included: at it, io2 costs more than it needs to."""
    from components.storage.checkpoint_sizing import GP3
    from policies.rules.aws_ebs_volume_flag_overprovisioned_io2 import check
    from tests.policies.spellings import resource

    config, most = {"region": "us-east-1"}, GP3["max_iops"]
    size = most // GP3["iops_per_gib"]
    assert list(check(resource("aws:ebs/volume:Volume", {"type": "io2", "size": size, "iops": most}), config))
    assert list(check(resource("aws:ebs/volume:Volume", {"type": "io2", "size": size, "iops": most + 1}), config)) == []


def test_an_autoscaled_deployment_that_also_states_replicas_is_judged_by_its_hpas_minimum():
    """`replicas` beside an HPA is the HPA's starting point, not a fixed size: the HPA's minimum decides."""
    from policies.rules.kubernetes_deployment_require_warm_pool import check
    from tests.policies.spellings import resource

    gpu = {"containers": [{"name": "t", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    deployment = resource(
        "kubernetes:apps/v1:Deployment",
        {"metadata": {"name": "triton"}, "spec": {"replicas": 3, "template": {"spec": gpu}}},
    )
    hpa = lambda minimum: resource(
        "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
        {"spec": {"scaleTargetRef": {"name": "triton"}, "minReplicas": minimum, "maxReplicas": 5}},
        name="h",
    )
    assert [message for _, message in check([deployment, hpa(1)], {"min_warm_pool": 2})] == [
        f"{deployment.name} keeps 1 warm replica(s); at least 2 stay loaded so a cold start never serves traffic"
    ]
    assert list(check([deployment, hpa(2)], {"min_warm_pool": 2})) == []
    assert list(check([deployment], {"min_warm_pool": 2})) == []  # no HPA: a fixed size (a canary)
    unsized = resource(
        "kubernetes:apps/v1:Deployment", {"metadata": {"name": "triton"}, "spec": {"template": {"spec": gpu}}}
    )
    assert [message for _, message in check([unsized], {"min_warm_pool": 2})] == [  # Kubernetes' default: 1
        f"{unsized.name} keeps 1 warm replica(s); at least 2 stay loaded so a cold start never serves traffic"
    ]
    canary = resource(
        "kubernetes:apps/v1:Deployment",
        {"metadata": {"name": "canary"}, "spec": {"replicas": 1, "template": {"spec": gpu}}},
        name="c",
    )
    assert [urn for urn, _ in check([canary, deployment, hpa(1)], {"min_warm_pool": 2})] == [deployment.urn]


@pytest.mark.parametrize(
    "type_, props",
    [
        ("aws:ec2/instance:Instance", {"instanceType": "p5.48xlarge"}),
        # A plain group (a Capacity Block's) takes its type from its template, not from overrides.
        (
            "aws:ec2/launchTemplate:LaunchTemplate",
            {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "capacity-block"}},
        ),
    ],
)
def test_a_denied_family_is_found_wherever_the_type_is_named(type_, props):
    from policies.rules.aws_autoscaling_group_allow_gpu_instance_types import check
    from tests.policies.spellings import resource

    config = {"denied_families": ["p4d", "p5"]}
    assert [m.split(";")[0] for m in check(resource(type_, props, name="r"), config)] == ["r may launch p5.48xlarge"]
    assert list(check(resource(type_, {**props, "instanceType": "g6.xlarge"}, name="r"), config)) == []


def test_every_denied_type_of_a_node_group_is_named():
    from policies.rules.aws_autoscaling_group_allow_gpu_instance_types import check
    from tests.policies.spellings import resource

    group = resource(
        "aws:eks/nodeGroup:NodeGroup", {"instanceTypes": ["p4d.24xlarge", "g6.xlarge", "p5.48xlarge"]}, name="n"
    )
    assert list(check(group, {"denied_families": ["p4d", "p5"]})) == [
        "n may launch p4d.24xlarge, p5.48xlarge; families p4d, p5 are not allowed here"
    ]


def test_an_admin_grant_in_a_roles_own_inline_policies_is_found_past_one_aws_refuses():
    from policies.rules.aws_iam_role_disallow_admin_policies import check
    from tests.policies.spellings import resource

    admin = json.dumps({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
    for policies in (
        [{"name": "a", "policy": admin}],
        [{"name": "bad", "policy": "{not json"}, {"name": "a", "policy": admin}],
    ):
        assert list(check(resource("aws:iam/role:Role", {"inlinePolicies": policies}, name="r"), {}))
    assert (
        list(
            check(
                resource("aws:iam/role:Role", {"inlinePolicies": [{"name": "bad", "policy": "{not json"}]}, name="r"),
                {},
            )
        )
        == []
    )


def test_a_statements_resources_and_conditions_are_read_in_any_shape():
    """NotResource is read as such; a Condition that is not an object (AWS refuses it) narrows nothing."""
    from policies.readers.iam import statement_of

    def read(**fields):
        return statement_of({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", **fields})

    assert read(NotResource="arn:aws:s3:::b/*").not_resource and not read(Resource="*").not_resource
    assert (
        read(Resource="*", Condition="aws:SourceVpc").conditions == read(Resource="*", Condition=["x"]).conditions == ()
    )


def test_an_identity_policy_is_not_judged_for_principals():
    """An identity policy names no principal (AWS refuses one that does): what it grants is
    aws-iam-role-disallow-admin-policies' to judge, not this rule's."""
    from policies.rules.aws_iam_policy_disallow_public_principal import check
    from tests.policies.spellings import resource

    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}],
    }
    role_policy = resource("aws:iam/rolePolicy:RolePolicy", {"policy": json.dumps(policy)}, name="p")
    home = {
        "home_accounts": ["123456789012"],
        "home_principals": [],
        "home_organisations": [],
        "home_federated_subjects": [],
    }
    assert list(check([role_policy], home)) == []
    bucket_policy = resource("aws:s3/bucketPolicy:BucketPolicy", {"policy": json.dumps(policy)}, name="b")
    assert [message for _, message in check([bucket_policy], home)]  # the same statement where a principal counts


def test_every_gpu_autoscaler_is_judged_whatever_comes_before_it():
    """An autoscaler of a CPU Deployment listed first does not end the look at the GPU ones after it."""
    from policies.rules.kubernetes_hpa_disallow_cpu_only_for_gpu import check
    from tests.policies.spellings import resource

    gpu = {"containers": [{"name": "t", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    deployment = resource(
        "kubernetes:apps/v1:Deployment", {"metadata": {"name": "triton"}, "spec": {"template": {"spec": gpu}}}
    )
    cpu_only = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]
    hpas = [
        resource(
            "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
            {"spec": {"scaleTargetRef": {"name": target}, "minReplicas": 2, "maxReplicas": 4, "metrics": cpu_only}},
            name=name,
        )
        for name, target in (("web", "web"), ("triton", "triton"))
    ]
    assert [urn for urn, _ in check([deployment, *hpas], {})] == [hpas[1].urn]


def test_an_inline_policy_without_a_slash_is_read_without_error():
    """The admin check reads every attached ARN and inline document; a document with no "/" in it is
    no managed policy and no finding (it must not break the rule)."""
    from policies.rules.aws_iam_role_disallow_admin_policies import check
    from tests.policies.spellings import resource

    document = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "sts:GetCallerIdentity", "Resource": "*"}],
        }
    )
    role = resource(
        "aws:iam/role:Role",
        {"inlinePolicies": [{"name": "who", "policy": document}], "managedPolicyArns": ["not-an-arn"]},
        name="r",
    )
    assert list(check(role, {})) == []


def test_a_group_is_held_to_its_class_only_when_the_table_has_it_and_the_breaker_is_off():
    from components.compute.labels import BREAKER_TAG, CLASS_TAG, NODE_GROUP_TAG
    from policies.rules._helpers import capped_class
    from tests.policies.spellings import resource

    def group(klass, breaker=None):
        tags = [{"key": CLASS_TAG, "value": klass, "propagateAtLaunch": True}]
        tags += [{"key": BREAKER_TAG, "value": breaker, "propagateAtLaunch": True}] if breaker else []
        return resource("aws:autoscaling/group:Group", {"tags": tags})

    config = {"caps": {"batch": 90, "online": 20}, "breaker_sets_caps_aside": True, "group_classes": {}}
    assert capped_class(group("batch"), config, "caps") == "batch"
    assert capped_class(group("batch", breaker="on"), config, "caps") is None  # the breaker set the caps aside
    assert capped_class(group("batch", breaker="degrade"), config, "caps") == "batch"  # growth stopped, caps hold
    assert capped_class(group("research"), config, "caps") is None  # a class the table does not cap
    prod = {**config, "breaker_sets_caps_aside": False}  # prod's breaker never moves a group: its tag excuses nothing
    assert capped_class(group("batch", breaker="on"), prod, "caps") == "batch"
    # The stack config's class of the node group wins over the class tag (plan data a hand can edit).
    relabelled = group("batch")
    relabelled.props["tags"].append({"key": NODE_GROUP_TAG, "value": "online", "propagateAtLaunch": True})
    assert capped_class(relabelled, {**config, "group_classes": {"online": "online"}}, "caps") == "online"
    assert capped_class(relabelled, config, "caps") == "batch"  # without the stack config: the tag


def test_a_rules_settings_keep_its_level_out_of_its_config():
    from policies.framework import rule_settings

    rule = RULES["kubernetes-deployment-require-warm-pool"]
    level, config = rule_settings(rule, {rule.name: {"enforcementLevel": "advisory", "min_warm_pool": 3}})
    assert (level, config) == ("advisory", {"min_warm_pool": 3})


def test_a_claim_costing_exactly_the_limit_is_not_flagged_and_one_cent_over_is():
    """The limit is the most a claim may cost a month: at it, no finding."""
    from components.cost.estimate import estimate_of_plan
    from components.plan.resources import K8S_CLAIM

    rule = RULES["kubernetes-claim-flag-costly-volume"]
    fixture = json.loads((FIXTURES / f"{rule.name}.json").read_text())
    plan = resources(fixture["fail"])
    config = {**rule.defaults(), **fixture["config"]}
    costs = {
        line.urn: line.monthly_usd
        for line in estimate_of_plan(plan, config["region"], config["storage_classes"]).lines
        if line.type == K8S_CLAIM and line.monthly_usd
    }
    urn, most = max(costs.items(), key=lambda item: item[1])
    assert [
        v.urn for v in run(rule, fixture["fail"], {**fixture["config"], "monthly_usd_limit": most}) if v.urn == urn
    ] == []
    assert [
        v.urn
        for v in run(rule, fixture["fail"], {**fixture["config"], "monthly_usd_limit": most - 0.01})
        if v.urn == urn
    ] == [urn]


def test_only_a_zone_spread_that_refuses_to_schedule_at_skew_1_is_flagged():
    """whenUnsatisfiable defaults to DoNotSchedule; ScheduleAnyway at skew 1 only prefers the spread."""
    from policies.rules.kubernetes_deployment_disallow_strict_zone_spread import check
    from tests.policies.spellings import resource

    def spread(**constraint):
        return resource(
            "kubernetes:apps/v1:Deployment",
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [],
                            "topologySpreadConstraints": [
                                {"topologyKey": "topology.kubernetes.io/zone", "maxSkew": 1, **constraint}
                            ],
                        }
                    }
                }
            },
        )

    assert list(check(spread(), {})) and list(check(spread(whenUnsatisfiable="DoNotSchedule"), {}))
    assert list(check(spread(whenUnsatisfiable="ScheduleAnyway"), {})) == []


def test_a_contract_the_pack_cannot_read_is_refused_naming_where_it_came_from():
    from policies.rules.kubernetes_tenant_require_contract_fit import check
    from seedance_client.contract import ContractVersionError
    from tests.policies.spellings import resource

    configmap = resource("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "x", "namespace": "video-ml"}})
    with pytest.raises(
        ContractVersionError, match="^the referenced platform stack: the platform stack exports contract 9.0"
    ):
        list(check(configmap, {"contracts": [{"contract_version": "9.0"}]}))


def test_gp2_is_found_in_a_launch_templates_volumes_with_its_saving_and_in_an_ebs_storage_class():
    from policies.rules.aws_ebs_volume_disallow_gp2_io1 import check
    from tests.policies.spellings import resource

    config = {"region": "us-east-1"}
    template = resource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeType": "gp2", "volumeSize": 100}}]},
        name="lt",
    )
    assert list(check(template, config)) == ["lt uses gp2: gp3 saves $2.00/month"]
    for provisioner, found in (("ebs.csi.aws.com", ["sc uses gp2"]), ("kubernetes.io/no-provisioner", [])):
        storage_class = resource(
            "kubernetes:storage.k8s.io/v1:StorageClass",
            {"provisioner": provisioner, "parameters": {"type": "gp2"}},
            name="sc",
        )
        assert list(check(storage_class, config)) == found


def test_memory_given_as_a_bare_number_is_bytes():
    from policies.rules.kubernetes_container_limit_memory_per_vcpu import check
    from tests.policies.spellings import resource

    def asking(memory):
        return resource(
            "kubernetes:apps/v1:Deployment",
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": memory}}}]
                        }
                    }
                }
            },
        )

    config = {"min_gib_per_vcpu": 2, "max_gib_per_vcpu": 8}
    assert list(check(asking(4 * 2**30), config)) == list(check(asking(str(4 * 2**30)), config)) == []
    assert list(check(asking(2**30), config)) == [
        "subject: container c asks 1.0 GiB per vCPU (1 CPU, 1073741824); allowed 2 to 8 (about 4 is right)"
    ]


@pytest.mark.parametrize(
    "flag, internal",
    [
        ("true", True),
        ("True", True),
        ("1", True),
        ("t", True),
        ("T", True),
        ("false", False),
        ("0", False),
        ("f", False),
        ("yes", False),
    ],
)
def test_the_controllers_internal_flag_is_read_as_go_parses_a_bool(flag, internal):
    """Without a scheme annotation, the AWS Load Balancer Controller reads -internal with strconv.ParseBool."""
    from policies.rules.kubernetes_service_require_internal_load_balancer import ANNOTATION, CONTROLLER_CLASS
    from policies.rules.kubernetes_service_require_internal_load_balancer import internal as is_internal

    props = {
        "spec": {"type": "LoadBalancer", "loadBalancerClass": CONTROLLER_CLASS},
        "metadata": {"annotations": {ANNOTATION + "internal": flag}},
    }
    assert is_internal(props)[0] is internal


@pytest.mark.parametrize(
    "route, public",
    [
        ({"destinationCidrBlock": "0.0.0.0/0", "gatewayId": "igw-1"}, True),
        ({"destinationCidrBlock": "0.0.0.0/0", "gatewayId": "gw-of-the-plan"}, True),
        ({"destinationCidrBlock": "0.0.0.0/0", "gatewayId": "vgw-1"}, False),
        ({"destinationCidrBlock": "0.0.0.0/0", "natGatewayId": "nat-1"}, False),
        ({"destinationCidrBlock": "10.0.0.0/8", "gatewayId": "igw-1"}, True),
        ({"destinationIpv6CidrBlock": "2000::/3", "gatewayId": "igw-1"}, True),
        ({"destinationCidrBlock": "0.0.0.0/1", "gatewayId": "gw-of-the-plan"}, True),
        ({"destinationIpv6CidrBlock": "::/0", "egressOnlyGatewayId": "eigw-1"}, False),
    ],
)
def test_a_subnet_is_public_by_any_route_to_an_internet_gateway(route, public):
    """AWS calls a subnet public when its route table has a route to an internet gateway, whatever the
    destination. An internet gateway is one whose id says so or one the plan creates; a VPN gateway, a NAT or
    an egress-only gateway is not."""
    rule = RULES["aws-autoscaling-group-require-private-subnets"]
    entries = [
        {
            "urn": "urn:igw",
            "type": "aws:ec2/internetGateway:InternetGateway",
            "name": "igw",
            "id": "gw-of-the-plan",
            "props": {},
        },
        {"urn": "urn:vgw", "type": "aws:ec2/vpnGateway:VpnGateway", "name": "vgw", "id": "vgw-1", "props": {}},
        {"urn": "urn:subnet", "type": "aws:ec2/subnet:Subnet", "name": "s", "id": "subnet-1", "props": {}},
        {"urn": "urn:route", "type": "aws:ec2/route:Route", "name": "r", "props": {**route, "routeTableId": "rtb-1"}},
        {
            "urn": "urn:assoc",
            "type": "aws:ec2/routeTableAssociation:RouteTableAssociation",
            "name": "a",
            "props": {"subnetId": "subnet-1", "routeTableId": "rtb-1"},
        },
        {
            "urn": "urn:group",
            "type": "aws:autoscaling/group:Group",
            "name": "g",
            "props": {"vpcZoneIdentifiers": ["subnet-1"]},
        },
    ]
    assert bool(run(rule, entries, {})) is public


def test_a_grace_period_at_the_minimum_drains_and_one_second_less_does_not():
    from policies.rules.kubernetes_deployment_require_graceful_drain import check
    from tests.policies.spellings import resource

    def deployment(grace):
        container = {
            "name": "triton",
            "image": "t",
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
            "resources": {"limits": {"nvidia.com/gpu": 1}},
        }
        return resource(
            "kubernetes:apps/v1:Deployment",
            {
                "metadata": {"name": "d"},
                "spec": {"template": {"spec": {"containers": [container], "terminationGracePeriodSeconds": grace}}},
            },
        )

    assert list(check(deployment(45), {"min_grace_seconds": 45})) == []
    assert list(check(deployment(44), {"min_grace_seconds": 45})) == [
        "subject gives pods 44 s to stop; at least 45 s to drain"
    ]


@pytest.mark.parametrize("quoted", ['--model-control-mode="poll"', "--model-control-mode='poll'"])
def test_a_quoted_allowed_model_control_mode_is_that_mode(quoted):
    """A shell strips the quotes before Triton reads the option: the mode is poll, allowed, not a finding."""
    from policies.rules.kubernetes_deployment_require_triton_model_control import check
    from tests.policies.spellings import resource

    triton = resource(
        "kubernetes:apps/v1:Deployment",
        {
            "metadata": {"name": "t", "namespace": "s"},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "triton",
                                "image": "nvcr.io/nvidia/tritonserver:26.07-py3",
                                "command": ["/bin/sh", "-c", f"tritonserver {quoted}"],
                            }
                        ]
                    }
                }
            },
        },
    )
    assert list(check(triton, {"allowed_modes": ["poll"], "namespace_modes": {}})) == []


def test_a_volume_or_template_device_without_a_type_is_gp2_as_ebs_makes_it():
    from policies.rules.aws_ebs_volume_disallow_gp2_io1 import RULE
    from tests.policies.spellings import resource

    volume = resource("aws:ebs/volume:Volume", {"size": 100, "availabilityZone": "us-east-1a"}, name="untyped")
    template = resource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        {
            "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "ebs": {"volumeSize": 100, "encrypted": "true", "kmsKeyId": "k"}}
            ]
        },
        name="lt",
    )
    found = run_rules([RULE], [volume, template], {RULE.name: {"enforcementLevel": "mandatory", "region": "us-east-1"}})
    assert {v.urn.rsplit("::", 1)[1] for v in found} == {"untyped", "lt"}
    assert all("gp2" in v.message for v in found)


def test_a_byte_count_written_as_a_decimal_string_is_bytes():
    from policies.rules._helpers import memory_gib

    assert memory_gib("1073741824.0") == memory_gib(1073741824) == memory_gib("1Gi") == 1.0
    assert memory_gib("1.5.0") is None  # two dots: not a number, and no crash


def test_a_role_granting_two_verbs_on_secrets_names_both():
    from policies.readers.rbac import escalations

    (grant,) = escalations([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}])
    assert grant.what == "grants get/list on secrets"


def test_under_the_stack_config_a_pod_in_a_namespace_it_does_not_name_is_held_to_restricted():
    from policies.expectations import stack_policy_config
    from tests.policies.spellings import resource
    from tests.stacks import stack_config

    rule = RULES["kubernetes-pod-enforce-pod-security-standards"]
    config = {**rule.defaults(), **stack_policy_config(stack_config("prod"))[rule.name]}
    pod = resource(
        "kubernetes:core/v1:Pod",
        {"metadata": {"name": "p", "namespace": "unnamed"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    )
    found = list(rule.check_resource(pod, config))
    assert found and all("namespace unnamed allows restricted" in f for f in found)


def test_a_pod_without_a_namespace_is_judged_as_the_default_namespaces():
    """A manifest that names no namespace lands in `default`, so it is held to default's level."""
    from tests.policies.spellings import resource

    rule = RULES["kubernetes-pod-enforce-pod-security-standards"]
    config = {**rule.defaults(), "namespace_levels": {"default": "baseline"}, "default_level": "restricted"}
    pod = resource(
        "kubernetes:core/v1:Pod",
        {
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {"runAsUser": 0}}]},
        },
    )  # baseline allows root
    assert list(rule.check_resource(pod, config)) == []
    assert list(rule.check_resource(pod, {**config, "namespace_levels": {}}))


def test_a_plan_without_a_policy_on_the_model_bucket_says_which_bucket():
    from policies.rules.aws_s3_bucket_require_model_publisher_deny import check

    config = {"bucket_prefix": "seedance-prod-models-", "prefixes": [{"prefix": "video", "publisher_roles": ["p"]}]}
    assert list(check([], config)) == [
        (None, "no policy on the model bucket (seedance-prod-models-<account>): anyone who may write it publishes")
    ]


def test_an_exemption_admits_the_capabilities_it_lists_in_a_restricted_namespace_and_no_other():
    from policies.readers.pods import Exemption, violations

    spec = {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "securityContext": {
                    "runAsNonRoot": True,
                    "allowPrivilegeEscalation": False,
                    "seccompProfile": {"type": "RuntimeDefault"},
                    "capabilities": {"drop": ["ALL"], "add": ["NET_RAW"]},
                },
            }
        ]
    }
    exempt = Exemption("ns", "w", frozenset(), frozenset({"NET_RAW"}))
    assert list(violations(spec, "restricted", {}, exempt)) == []
    assert list(violations(spec, "restricted", {}, None))


def test_a_gpu_deployment_that_sets_no_grace_period_gets_kubernetes_default_of_30_seconds():
    """Left out, terminationGracePeriodSeconds is 30 (the API's default): enough at a 30 s minimum, short
    at 31, and judged, not a crash."""
    rule = RULES["kubernetes-deployment-require-graceful-drain"]
    fixture = json.loads((FIXTURES / f"{rule.name}.json").read_text())
    deployment = copy.deepcopy(fixture["pass"][0])
    deployment["props"]["spec"]["template"]["spec"].pop("terminationGracePeriodSeconds")
    assert run(rule, [deployment], {"min_grace_seconds": 30}) == []
    assert [v.message for v in run(rule, [deployment], {"min_grace_seconds": 31})] == [
        "drains gives pods 30 s to stop; at least 31 s to drain"
    ]


def test_a_triton_finding_names_every_mode_its_namespace_allows():
    rule = RULES["kubernetes-deployment-require-triton-model-control"]
    fixture = json.loads((FIXTURES / f"{rule.name}.json").read_text())
    none = next(r for r in fixture["fail"] if r["name"] == "none-where-poll")
    messages = [v.message for v in run(rule, [none], {"namespace_modes": {"serving": ["poll", "explicit"]}})]
    assert len(messages) == 1 and messages[0].endswith("=none; allowed here: poll, explicit")


def test_the_budget_limit_fails_on_instances_it_cannot_price():
    """A budget is unchecked while instances have no price: a group whose overrides choose types by attributes,
    a node group of an unpriced type. One whose size is known only at apply reads as that unknown (the
    advisory; prod fails closed), and within budget nothing else is said."""
    rule = RULES["budget-monthly-cost-limit"]
    config = {"all": "mandatory", rule.name: {"monthly_budget_usd": 1_000_000}}
    by_attributes = PlanResource(
        "urn:abs",
        "aws:autoscaling/group:Group",
        "abs",
        {
            "desiredCapacity": 2,
            "mixedInstancesPolicy": {
                "instancesDistribution": {},
                "launchTemplate": {
                    "overrides": [{"instanceRequirements": {"acceleratorCount": {"min": 8}, "vcpuCount": {"min": 192}}}]
                },
            },
        },
    )
    unpriced = PlanResource(
        "urn:ng",
        "aws:eks/nodeGroup:NodeGroup",
        "ng",
        {"scalingConfig": {"desiredSize": 1}, "instanceTypes": ["zz9.large"]},
    )
    messages = {v.urn: v.message for v in run_rules([rule], [by_attributes, unpriced], config)}
    assert set(messages) == {"urn:abs", "urn:ng"}
    assert "budget cannot be checked" in messages["urn:abs"] and "zz9.large" in messages["urn:ng"]
    pending = PlanResource(
        "urn:pending",
        "aws:eks/nodeGroup:NodeGroup",
        "pending",
        {"scalingConfig": {"desiredSize": UNKNOWN}, "instanceTypes": ["g6.xlarge"]},
    )
    (advisory,) = run_rules([rule], [pending], config)
    assert advisory.kind == "preview" and "scalingConfig.desiredSize" in advisory.message
    (closed,) = run_rules([rule], [pending], config, unknowns="fail")
    assert closed.level == "mandatory"
    priced = PlanResource(
        "urn:ok",
        "aws:eks/nodeGroup:NodeGroup",
        "ok",
        {"scalingConfig": {"desiredSize": 1}, "instanceTypes": ["g6.xlarge"]},
    )
    assert run_rules([rule], [priced], config) == []
