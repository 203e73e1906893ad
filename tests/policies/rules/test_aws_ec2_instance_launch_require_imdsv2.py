"""The hop limit as the provider takes it: a number or a numeric string, judged alike (a string once
crashed the rule: found by an adversarial review)."""

import pytest

from policies.rules.aws_ec2_instance_launch_require_imdsv2 import RULE, check
from tests.policies.spellings import resource

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


@pytest.mark.parametrize("hops", [2, "2", 2.0, "3"])
def test_a_hop_limit_over_one_is_found_in_every_spelling(hops):
    options = {"httpTokens": "required", "httpPutResponseHopLimit": hops}
    (finding,) = check(resource(TEMPLATE, {"metadataOptions": options}), RULE.defaults())
    assert f"reach {float(hops):g} hops" in finding


@pytest.mark.parametrize("hops", [1, "1"])
def test_one_hop_passes_in_every_spelling(hops):
    options = {"httpTokens": "required", "httpPutResponseHopLimit": hops}
    assert list(check(resource(TEMPLATE, {"metadataOptions": options}), RULE.defaults())) == []
