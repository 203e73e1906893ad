"""Preview values: every rule over every stack's plan with values made unknown at each depth of the
inputs, as a preview sends them. A rule never crashes and never raises a mandatory finding that the
known plan does not have; one that reads an unknown says so as the SDK does, as an advisory."""

import pytest

from components.cost.estimate import catalog_for, estimate
from components.plan.resources import PlanResource
from policies.framework import load_enforcement, run_rules
from policies.rules import ALL_RULES
from seedance.check_command import plan_resources
from tests.unknowns import UNKNOWN, unknown_at


def mandatory(violations):
    return {(v.policy, v.urn) for v in violations if v.level == "mandatory"}


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_no_rule_crashes_or_invents_a_mandatory_finding_on_unknowns(stack_plan, depth):
    resources = plan_resources(stack_plan)
    enforcement = load_enforcement(stack_plan.stack)
    known = mandatory(run_rules(ALL_RULES, resources, enforcement))
    previewed = [
        PlanResource(r.urn, r.type, r.name, unknown_at(r.props, depth), r.parent, r.dependencies, r.id)
        for r in resources
    ]
    violations = run_rules(ALL_RULES, previewed, enforcement)  # raises if any rule crashes
    assert mandatory(violations) <= known
    for v in violations:
        if v.kind == "preview":
            assert v.level == "advisory" and "can't be known during preview" in v.message, v


def test_a_known_violation_survives_unrelated_unknowns():
    """A gp2 volume is gp2 whatever its key ARN turns out to be."""
    volume = PlanResource(
        "urn:pulumi:s::p::aws:ebs/volume:Volume::v",
        "aws:ebs/volume:Volume",
        "v",
        {"type": "gp2", "size": 100, "kmsKeyId": UNKNOWN, "encrypted": True},
    )
    (rule,) = [r for r in ALL_RULES if r.name == "aws-ebs-volume-disallow-gp2-io1"]
    (violation,) = run_rules([rule], [volume], {"all": "mandatory", rule.name: {"region": "us-east-1"}})
    assert violation.level == "mandatory" and "uses gp2" in violation.message


def test_unknown_tags_are_not_missing_tags():
    instance = PlanResource(
        "urn:pulumi:s::p::aws:ec2/instance:Instance::i",
        "aws:ec2/instance:Instance",
        "i",
        {"instanceType": "m7i.large", "tags": UNKNOWN},
    )
    (rule,) = [r for r in ALL_RULES if r.name == "aws-resource-tags-require-cost-tags"]
    (violation,) = run_rules([rule], [instance], {"all": "mandatory"})
    assert violation.level == "advisory"
    assert violation.message == (
        "can't run policy 'aws-resource-tags-require-cost-tags' from policy pack "
        "'seedance-cost-policies@v0.0.1' during preview: string value at .tags "
        "can't be known during preview"
    )


def test_a_plan_files_unknown_marker_is_an_advisory_not_a_crash():
    """Plan files write unknowns as "(unknown)", a value the policy SDK's own error does not know."""
    volume = PlanResource(
        "urn:pulumi:s::p::aws:ebs/volume:Volume::v",
        "aws:ebs/volume:Volume",
        "v",
        {"type": "io2", "size": "(unknown)", "iops": 3000},
    )
    (rule,) = [r for r in ALL_RULES if r.name == "aws-ebs-volume-limit-io2-iops-per-gib"]
    (violation,) = run_rules([rule], [volume], {"all": "mandatory"})
    assert violation.level == "advisory" and "unknown value at .size can't be known during preview" in violation.message


def test_an_unknown_root_volume_size_makes_the_groups_cost_unknown(stack_plan):
    """The estimate reads launch templates through the same unknown checks as the groups that use them."""
    resources = plan_resources(stack_plan)
    previewed = [
        PlanResource(
            r.urn,
            r.type,
            r.name,
            {
                **r.props,
                "blockDeviceMappings": [
                    {**m, "ebs": {**m["ebs"], "volumeSize": UNKNOWN}} for m in r.props["blockDeviceMappings"]
                ],
            },
            r.parent,
            r.dependencies,
            r.id,
        )
        if r.type == "aws:ec2/launchTemplate:LaunchTemplate" and r.props.get("blockDeviceMappings")
        else r
        for r in resources
    ]
    lines = estimate(previewed, catalog_for("us-east-1")).lines
    groups = [line for line in lines if line.type == "aws:autoscaling/group:Group"]
    assert groups and all(line.monthly_usd is None and "volumeSize" in line.basis for line in groups)


@pytest.mark.parametrize("unknown_part", ["name", "parameters"])
def test_a_storage_class_an_estimate_cannot_read_makes_its_claims_cost_unknown(unknown_part):
    """An autonamed class in a preview has no name yet: its claims are priced unknown, never as another
    class, and the estimate of everything else stands (it used to raise and stop `seedance check`)."""
    klass = PlanResource(
        "urn:sc",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        "sc",
        {
            "metadata": {"name": UNKNOWN if unknown_part == "name" else "fast"},
            "provisioner": "ebs.csi.aws.com",
            "parameters": UNKNOWN if unknown_part == "parameters" else {"type": "gp3"},
        },
    )
    claim = PlanResource(
        "urn:pvc",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "pvc",
        {
            "metadata": {"name": "data"},
            "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "100Gi"}}},
        },
    )
    volume = PlanResource(
        "urn:vol", "aws:ebs/volume:Volume", "vol", {"type": "gp3", "size": 100, "availabilityZone": "us-east-1a"}
    )
    lines = {line.urn: line for line in estimate([klass, claim, volume], catalog_for("us-east-1")).lines}
    assert lines["urn:pvc"].monthly_usd is None and "fast" in lines["urn:pvc"].basis
    assert lines["urn:vol"].monthly_usd > 0


@pytest.mark.parametrize("unknowns, level", [("advisory", "advisory"), ("fail", "mandatory")])
def test_a_mandatory_rule_that_cannot_decide_fails_closed_where_asked_and_names_the_value(unknowns, level):
    """Prod's gate cannot pass a trust policy it cannot read: it might let anyone in."""
    role = PlanResource(
        "urn:pulumi:s::p::aws:iam/role:Role::r", "aws:iam/role:Role", "r", {"assumeRolePolicy": UNKNOWN}
    )
    (rule,) = [r for r in ALL_RULES if r.name == "aws-iam-policy-disallow-public-principal"]
    (violation,) = run_rules([rule], [role], {"all": "mandatory"}, unknowns=unknowns)
    assert violation.level == level and violation.kind == "preview" and ".assumeRolePolicy" in violation.message
    assert ("fails closed" in violation.message) is (unknowns == "fail")
    advisory_rule = run_rules([rule], [role], {"all": "advisory"}, unknowns=unknowns)
    assert [v.level for v in advisory_rule] == ["advisory"]
