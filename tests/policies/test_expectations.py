"""The rules' config from what they judge against: a stack's config (its budget, region, principals and
namespaces) or, for a team's plan, its platform's contract."""

import json

import pytest
import yaml

from components.stack.config import ConfigError
from components.tenancy.config import TenantConfig
from policies.expectations import (
    namespace_levels,
    stack_config_expectations,
    stack_policy_config,
    team_policy_config,
)
from tests.stacks import REPO, stack_config


def test_a_teams_plan_is_judged_against_its_platforms_contract():
    contract = {
        "region": "eu-west-1",
        "tenants": [{"name": "video-ml", "namespaces": ["video-api", "video-train"]}, {"name": "no-namespaces"}],
        "storage_classes": {"volumes": {"checkpoints": {"type": "io2", "iops": "64000"}}},
    }
    assert team_policy_config(contract) == {
        "kubernetes-tenant-require-contract-fit": {"contracts": [contract]},
        "kubernetes-rbac-role-disallow-escalation": {"tenant_namespaces": ["video-api", "video-train"]},
        "kubernetes-claim-flag-costly-volume": {
            "region": "eu-west-1",
            "storage_classes": {"checkpoints": {"type": "io2", "iops": "64000"}},
        },
    }


def test_a_contract_without_region_or_classes_gets_the_rules_defaults():
    config = team_policy_config({"tenants": []})
    assert config["kubernetes-claim-flag-costly-volume"] == {"region": "us-east-1", "storage_classes": {}}
    assert team_policy_config({"storage_classes": {}})["kubernetes-claim-flag-costly-volume"]["storage_classes"] == {}


def test_the_budget_and_region_rules_judge_against_the_stacks_own_values():
    config = stack_config("prod")
    rules = stack_policy_config(config)
    budget = {"monthly_budget_usd": config.budget.monthly_usd, "basis": config.budget.basis, "region": config.region}
    assert rules["budget-monthly-cost-limit"] == rules["budget-monthly-cost-warn-near-budget"] == budget
    for name in (
        "aws-ebs-volume-disallow-gp2-io1",
        "aws-ebs-volume-flag-overprovisioned-io2",
        "kubernetes-claim-flag-costly-volume",
    ):
        assert rules[name] == {"region": config.region}, name


def test_each_namespace_gets_the_level_its_workloads_need():
    config = stack_config("prod")
    levels = namespace_levels(config)
    assert all(levels[serving.namespace] == "restricted" for serving in config.serving)
    assert all(levels[ns] == "baseline" for tenant in config.tenants for ns in tenant.namespaces)
    assert levels[config.storage.checkpoints.namespace] == "baseline"
    assert levels["kube-system"] == "baseline"


def test_a_team_on_its_default_namespace_gets_baseline_there():
    """A team that lists no namespaces gets one named after it (TenantConfig.namespace_names); the gate must
    expect baseline there, not the platform's restricted default (it once read the team's explicit list)."""
    team = TenantConfig(name="vision", principal_arns=["arn:aws:iam::123456789012:role/vision"], gpus={"batch": 1})
    assert namespace_levels(stack_config("staging", tenants=[team]))["vision"] == "baseline"


def test_every_principal_the_config_names_is_listed_once_admins_and_the_deployer_together():
    from policies.expectations import named_principals

    config = stack_config("prod")
    config = config.model_copy(
        update={
            "cluster": config.cluster.model_copy(
                update={
                    "deployer_role_arn": "arn:aws:iam::123456789012:role/deployer",
                    "viewer_principal_arns": ["arn:aws:iam::123456789012:role/viewers"],
                }
            )
        }
    )
    named = named_principals(config)
    expected = [
        *config.cluster.break_glass_principal_arns,
        *config.cluster.admin_principal_arns,
        "arn:aws:iam::123456789012:role/viewers",
        "arn:aws:iam::123456789012:role/deployer",
        "arn:aws:iam::123456789012:role/video-ml-engineers",
        "arn:aws:iam::123456789012:role/video-ml-ci",
    ]
    assert named[: len(expected)] == list(dict.fromkeys(expected)) and len(named) == len(set(named))


def test_the_local_disks_exemption_follows_the_stacks_local_storage_namespace():
    from policies.expectations import platform_exemptions

    config = stack_config("prod")
    moved = config.model_copy(
        update={
            "storage": config.storage.model_copy(
                update={"local": config.storage.local.model_copy(update={"namespace": "nvme-disks"})}
            )
        }
    )
    rules = stack_policy_config(moved)
    assert rules["kubernetes-pod-enforce-pod-security-standards"]["exemptions"] == platform_exemptions("nvme-disks")
    assert rules["kubernetes-pod-enforce-pod-security-standards"]["exemptions"][0]["namespace"] == "nvme-disks"


def test_every_expectation_names_a_rule_of_the_pack_and_a_setting_the_rule_declares():
    """The rules read their config by name and take their defaults for any name they are not given, so a
    misspelt rule or setting here would silently judge the plan against the defaults."""
    from policies.rules import ALL_RULES

    declared = {rule.name: set(rule.config) for rule in ALL_RULES}
    contract = {"region": "us-east-1", "tenants": [], "storage_classes": {"volumes": {}}}
    for where, expectations in [
        *((env, stack_policy_config(stack_config(env))) for env in ("dev", "staging", "prod")),
        ("a team's contract", team_policy_config(contract)),
    ]:
        for rule, settings in expectations.items():
            assert rule in declared, (where, rule)
            assert set(settings) <= declared[rule], (where, rule, set(settings) - declared[rule])


def _engine_config(stack: str) -> str:
    """PULUMI_CONFIG as the language host hands it to a policy pack: namespaced keys, string values."""
    document = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return json.dumps({k: v if isinstance(v, str) else json.dumps(v) for k, v in document.items()})


def test_the_pack_takes_the_stacks_expectations_from_the_config_the_engine_hands_it():
    assert stack_config_expectations(_engine_config("prod")) == stack_policy_config(stack_config("prod"))


def test_another_projects_stack_and_no_stack_add_no_expectations():
    assert stack_config_expectations(None) == {}
    assert stack_config_expectations(json.dumps({"training-job:team": "video-ml", "aws:region": "us-east-1"})) == {}


def test_a_config_the_program_refuses_stops_the_pack_with_its_error():
    broken = json.loads(_engine_config("prod"))
    broken["seedance-gpu:env"] = "qa"
    with pytest.raises(ConfigError, match="seedance-gpu:env"):
        stack_config_expectations(json.dumps(broken))
