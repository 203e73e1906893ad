"""Placeholders in the committed stacks (documentation ranges, the AWS documentation's example account,
example domains) plan offline, listed; a real `pulumi up` refuses them by key before declaring anything."""

import pulumi.runtime.mocks
import pytest

from components.stack.config import ConfigError
from components.stack.placeholders import placeholders, refuse_placeholders
from seedance.cli import main
from tests.stacks import stack_config


def test_every_kind_of_placeholder_is_found_and_real_values_are_not():
    config = stack_config("dev")
    cluster = config.cluster.model_copy(
        update={
            "public_endpoint_cidrs": ["203.0.113.0/26", "198.51.100.7/32", "52.94.0.0/22"],
            "admin_principal_arns": ["arn:aws:iam::123456789012:role/admins", "arn:aws:iam::210987654321:role/admins"],
        }
    )
    budget = config.budget.model_copy(
        update={
            "alert_emails": ["ops@example.com", "ops@team.example.org", "ops@examples.io"],
            "alert_topic_arns": ["arn:aws:sns:us-east-1:123456789012:chat"],
        }
    )
    serving = [
        config.serving[0].model_copy(
            update={
                "publisher_principal_arns": ["arn:aws:iam::210987654321:role/ci", "arn:aws:iam::123456789012:role/ci"]
            }
        )
    ]
    found = {
        key
        for key, _value, _what in placeholders(
            config.model_copy(update={"cluster": cluster, "budget": budget, "serving": serving})
        )
    }
    assert found == {
        "cluster.public_endpoint_cidrs[0]",
        "cluster.public_endpoint_cidrs[1]",
        "cluster.admin_principal_arns[0]",
        "budget.alert_emails[0]",
        "budget.alert_emails[1]",
        "budget.alert_topic_arns[0]",
        "serving[0].publisher_principal_arns[1]",
    }
    with pytest.raises(ConfigError, match=r"public_endpoint_cidrs\[0\] = '203.0.113.0/26': a documentation address"):
        refuse_placeholders(config.model_copy(update={"cluster": cluster}))


def test_an_offline_plan_lists_them(capsys):
    assert main(["plan", "--stack", "dev"]) == 0
    out = capsys.readouterr().out
    assert "Placeholders (an offline plan keeps them; a real `pulumi up` refuses them):" in out
    assert "seedance-gpu:cluster.public_endpoint_cidrs[0] = 203.0.113.0/26" in out


@pytest.mark.parametrize(
    "stack, key", [("dev", "cluster.public_endpoint_cidrs[0]"), ("prod", "network.transit_gateway_id")]
)
def test_a_real_run_refuses_them_before_any_resource(monkeypatch, capsys, stack, key):
    """The program takes a runtime that is not Pulumi's mock runtime for a real one."""
    monkeypatch.setattr(pulumi.runtime.mocks, "MockMonitor", type("NotTheMockRuntime", (), {}))
    assert main(["plan", "--stack", stack]) == 2
    err = capsys.readouterr().err
    assert f"invalid config seedance-gpu:{key} = " in err and "placeholder" in err
