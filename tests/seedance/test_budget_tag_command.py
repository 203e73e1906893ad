"""`seedance budget-tag`: the budget's cost-allocation tag on recorded Cost Explorer answers (Stubber)."""

import boto3
import pytest
from botocore.stub import Stubber

from seedance import budget_tag_command
from seedance.cli import main

QUERY = {"TagKeys": ["cost-center"], "Type": "UserDefined"}


def tag(status):
    return {
        "CostAllocationTags": [
            {
                "TagKey": "cost-center",
                "Type": "UserDefined",
                "Status": status,
                "LastUpdatedDate": "2026-11-30T00:00:00Z",
                "LastUsedDate": "2026-12-01T00:00:00Z",
            }
        ]
    }


@pytest.fixture
def cost_explorer(monkeypatch):
    client = boto3.client("ce", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    stub = Stubber(client)
    stub.activate()
    regions = []
    monkeypatch.setattr(budget_tag_command, "clients", lambda service, region: regions.append(region) or client)
    yield stub
    stub.assert_no_pending_responses()
    assert set(regions) == {"us-east-1"}  # Cost Explorer's endpoint, whatever the stack's region


def test_active_tag_exits_0(cost_explorer, capsys):
    cost_explorer.add_response("list_cost_allocation_tags", tag("Active"), QUERY)
    assert main(["budget-tag", "--stack", "dev"]) == 0
    assert "user:cost-center=cc-ml-dev-4410" in capsys.readouterr().out


def test_tag_not_yet_in_billing_data_says_when_to_retry(cost_explorer, capsys):
    cost_explorer.add_response("list_cost_allocation_tags", {"CostAllocationTags": []}, QUERY)
    assert main(["budget-tag", "--stack", "dev", "--activate"]) == 1  # nothing to activate yet
    assert "up to 24 hours" in capsys.readouterr().out


def test_inactive_tag_is_reported_and_activated_only_when_asked(cost_explorer, capsys):
    cost_explorer.add_response("list_cost_allocation_tags", tag("Inactive"), QUERY)
    assert main(["budget-tag", "--stack", "dev"]) == 1
    assert "--activate" in capsys.readouterr().out
    cost_explorer.add_response("list_cost_allocation_tags", tag("Inactive"), QUERY)
    cost_explorer.add_response(
        "update_cost_allocation_tags_status",
        {"Errors": []},
        {"CostAllocationTagsStatus": [{"TagKey": "cost-center", "Status": "Active"}]},
    )
    assert main(["budget-tag", "--stack", "dev", "--activate"]) == 0
    assert "activated" in capsys.readouterr().out


def test_activation_error_is_reported(cost_explorer, capsys):
    cost_explorer.add_response("list_cost_allocation_tags", tag("Inactive"), QUERY)
    cost_explorer.add_response(
        "update_cost_allocation_tags_status",
        {"Errors": [{"TagKey": "cost-center", "Code": "TagKeysNotFoundException", "Message": "tag key not found"}]},
    )
    assert main(["budget-tag", "--stack", "dev", "--activate"]) == 1
    assert "TagKeysNotFoundException" in capsys.readouterr().out


def test_member_account_gets_one_line_not_a_traceback(cost_explorer, capsys):
    cost_explorer.add_client_error(
        "list_cost_allocation_tags",
        "AccessDeniedException",
        "Linked accounts can only access cost allocation tags of the management account",
    )
    assert main(["budget-tag", "--stack", "dev"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("seedance: error: AWS:") and "AccessDeniedException" in err and "Traceback" not in err
