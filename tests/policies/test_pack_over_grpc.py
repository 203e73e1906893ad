"""The pack as the engine runs it, driven over gRPC with the SDK's client, against every stack's plan, a
bad plan, plans with unknowns and plans with secrets: the engine's diagnostics are `seedance check`'s."""

import pytest

from components.plan.resources import PlanResource
from policies.framework import load_enforcement, run_rules
from policies.rules import ALL_RULES
from seedance.check_command import plan_resources
from seedance_client.engine import Secret
from tests.policies.analyzer_harness import Diagnostic, RunningPack
from tests.unknowns import unknown_at

RULES = {rule.name: rule for rule in ALL_RULES}
SECRET_SIG = "4dabf18193072939515e22adb298388d"


def wire(value):
    """A value as the engine puts it in a Struct: secrets as its secret objects."""
    if isinstance(value, Secret):
        return {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "value": wire(value.value)}
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire(v) for v in value]
    return value


def sent(resources):
    return [
        {"urn": r.urn, "type": r.type, "name": r.name, "inputs": wire(r.props), "dependencies": r.dependencies}
        for r in resources
    ]


def expected(resources, stack):
    """`seedance check`'s violations as the engine shows them: the SDK puts the policy's description
    before a violation's message (its preview advisory has none)."""
    found = []
    for v in run_rules(ALL_RULES, resources, load_enforcement(stack)):
        preview = v.message.startswith("can't run policy ")
        message = v.message if preview else f"{RULES[v.policy].description}\n{v.message}"
        found.append(Diagnostic(v.policy, v.level, v.urn or "", message))
    return sorted(found)


@pytest.fixture(scope="module")
def pack():
    running = {}
    yield lambda stack: running.get(stack) or running.setdefault(stack, _started(stack))
    for process in running.values():
        process.close()


def _started(stack):
    pack = RunningPack(stack)
    pack.configure_with_defaults()
    return pack


def revealed(resources):
    """What the SDK hands the rules: secret objects unwrapped."""
    from components.plan.resources import reveal_secrets

    return [
        PlanResource(r.urn, r.type, r.name, reveal_secrets(wire(r.props)), r.parent, r.dependencies, r.id)
        for r in resources
    ]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_every_stack_gets_the_same_diagnostics_from_the_engine_and_from_seedance_check(pack, plan_of, stack):
    resources = plan_resources(plan_of(stack))
    diagnostics = pack(stack).analyze(sent(resources))
    assert diagnostics == expected(revealed(resources), stack)
    assert not [d for d in diagnostics if d.level == "mandatory"]


def test_a_bad_plan_blocks_through_the_engine_as_offline(pack):
    tags = {"team": "ml", "env": "dev", "cost-center": "cc"}
    resources = [
        PlanResource(
            "urn:pulumi:dev::app::aws:ebs/volume:Volume::scratch",
            "aws:ebs/volume:Volume",
            "scratch",
            {
                "type": "gp2",
                "size": 500.0,
                "encrypted": True,
                "kmsKeyId": "arn:aws:kms:us-west-2:1:key/k",
                "tags": tags,
            },
        ),
        PlanResource(
            "urn:pulumi:dev::app::aws:ec2/instance:Instance::box",
            "aws:ec2/instance:Instance",
            "box",
            {"instanceType": "g5.xlarge", "associatePublicIpAddress": True},
        ),
    ]
    diagnostics = pack("dev").analyze(sent(resources))
    assert diagnostics == expected(resources, "dev")
    mandatory = {(d.policy, d.urn.rsplit("::", 1)[1]) for d in diagnostics if d.level == "mandatory"}
    assert {
        ("aws-ebs-volume-disallow-gp2-io1", "scratch"),
        ("aws-resource-tags-require-cost-tags", "box"),
        ("aws-ec2-instance-launch-require-imdsv2", "box"),
        ("aws-ec2-instance-launch-disallow-public-ip", "box"),
    } <= mandatory


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_preview_with_unknowns_never_aborts_and_agrees(pack, plan_of, depth):
    resources = [
        PlanResource(r.urn, r.type, r.name, unknown_at(r.props, depth), r.parent, r.dependencies, r.id)
        for r in plan_resources(plan_of("prod"))
    ]
    diagnostics = pack("prod").analyze(sent(resources))  # a rule that raised would fail the RPC
    assert diagnostics == expected(resources, "prod")
    assert not [d for d in diagnostics if d.level == "mandatory"]


def test_secret_values_are_judged_by_what_they_hold(pack):
    tags = {"team": Secret("ml"), "env": "dev", "cost-center": Secret("cc")}
    resources = [
        PlanResource(
            "urn:pulumi:dev::app::aws:ebs/volume:Volume::v",
            "aws:ebs/volume:Volume",
            "v",
            {
                "type": Secret("gp2"),
                "size": 100.0,
                "encrypted": True,
                "kmsKeyId": "arn:aws:kms:us-west-2:1:key/k",
                "tags": tags,
            },
        )
    ]
    diagnostics = pack("dev").analyze(sent(resources))
    assert diagnostics == expected(revealed(resources), "dev")
    assert [d.policy for d in diagnostics] == ["aws-ebs-volume-disallow-gp2-io1"]
