"""Who is home: the accounts the config names, else the account of the node roles the plan creates (found
by an adversarial review: an access entry for another account's role made that account home, and a bucket
policy granting it then passed)."""

from components.plan.resources import PlanResource
from policies.framework import run_rules
from policies.rules._helpers import home_accounts
from policies.rules.aws_iam_policy_disallow_public_principal import RULE as PUBLIC_PRINCIPAL
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan

OUTSIDE = "arn:aws:iam::999999999999:role/partner-gpu-nodes"


def _entry(arn: str) -> PlanResource:
    props = {"clusterName": "seedance-prod", "principalArn": arn, "type": "EC2_LINUX"}
    return PlanResource(
        f"urn:pulumi:prod::p::aws:eks/accessEntry:AccessEntry::{arn}", "aws:eks/accessEntry:AccessEntry", arn, props
    )


def test_home_is_the_account_of_the_node_roles_the_plan_creates():
    prod = plan_resources(_stack_plan("prod"))
    assert home_accounts(prod, []) == {"123456789012"}
    assert home_accounts([*prod, _entry(OUTSIDE)], []) == {"123456789012"}
    assert home_accounts([_entry(OUTSIDE)], []) == frozenset()
    assert home_accounts([_entry(OUTSIDE)], ["999999999999"]) == {"999999999999"}  # named by the config


def test_an_outside_node_entry_does_not_let_its_account_into_the_model_bucket():
    prod = plan_resources(_stack_plan("prod"))
    (policy,) = [r for r in prod if r.type == "aws:s3/bucketPolicy:BucketPolicy" and "models" in r.name]
    document = policy.props["policy"]
    grant = (
        '{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::999999999999:root"},"Action":"s3:GetObject",'
        '"Resource":"arn:aws:s3:::seedance-prod-models-123456789012/*"}'
    )
    opened = document.replace('"Statement": [', f'"Statement": [{grant}, ', 1).replace(
        '"Statement":[', f'"Statement":[{grant},', 1
    )
    assert opened != document
    edited = [PlanResource(r.urn, r.type, r.name, {**r.props, "policy": opened}) if r is policy else r for r in prod]
    findings = run_rules([PUBLIC_PRINCIPAL], [*edited, _entry(OUTSIDE)], {"all": "mandatory"})
    assert any("999999999999" in f.message for f in findings)
