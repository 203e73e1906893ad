"""EBS CSI StorageClasses judged as the driver reads them: a parameter's name in any letter case is the same
parameter, a name given twice in two cases may be either value (Go's map order decides), no type is gp3,
and only "true" encrypts. Every generated spelling of a gp2 or io1 class, a plain class or a class under
another account's key fails its rule; every spelling of a good class passes
(aws-ebs-volume-disallow-gp2-io1, aws-ebs-volume-require-customer-key, aws-kms-key-require-home-account)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan.resources import K8S_STORAGE_CLASS
from components.storage.ebs_csi import EBS_CSI
from policies.framework import run_rules
from policies.rules.aws_ebs_volume_disallow_gp2_io1 import RULE as GP2_IO1
from policies.rules.aws_ebs_volume_require_customer_key import RULE as CUSTOMER_KEY
from policies.rules.aws_kms_key_require_home_account import RULE as HOME_KEY
from tests.policies.spellings import HOME, OTHER, any_case, resource

HOME_KEY_ARN = f"arn:aws:kms:us-east-1:{HOME}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
OTHER_KEY_ARN = f"arn:aws:kms:us-east-1:{OTHER}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
GOOD = {"type": "io2", "encrypted": "true", "kmsKeyId": HOME_KEY_ARN}


def storage_class(parameters: dict):
    return resource(
        K8S_STORAGE_CLASS, {"metadata": {"name": "subject"}, "provisioner": EBS_CSI, "parameters": parameters}
    )


def judged(rule, parameters: dict) -> list[str]:
    config = {rule.name: {"home_accounts": [HOME]}} if rule is HOME_KEY else {}
    return [v.message for v in run_rules([rule], [storage_class(parameters)], {"all": "mandatory"}, config)]


@st.composite
def spelled(draw, parameters: dict, also: dict | None = None) -> dict:
    """`parameters` with each name in a drawn letter case; `also`'s entries added under another spelling of
    their names (a second value the driver may take instead)."""
    out = {draw(any_case(name)): value for name, value in parameters.items()}
    for name, value in (also or {}).items():
        other = draw(any_case(name).filter(lambda n: n not in out))
        out[other] = value
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_spelling_of_a_good_class_passes(data):
    parameters = data.draw(spelled(GOOD))
    for rule in (GP2_IO1, CUSTOMER_KEY, HOME_KEY):
        assert judged(rule, parameters) == [], (rule.name, parameters)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["gp2", "GP2", "io1", "Io1"]), st.booleans())
def test_a_gp2_or_io1_class_fails_however_its_type_is_spelled(data, bad, beside_a_good_type):
    good = {key: value for key, value in GOOD.items() if key != "type"}
    parameters = data.draw(
        spelled({**good, "type": "gp3"}, {"type": bad}) if beside_a_good_type else spelled({**good, "type": bad})
    )
    assert judged(GP2_IO1, parameters), parameters


def test_a_class_that_names_no_type_is_gp3_and_passes():
    assert judged(GP2_IO1, {"encrypted": "true"}) == []


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["false", "True", "TRUE", "1", "yes", ""]), st.booleans())
def test_a_class_the_driver_makes_plain_fails_however_it_is_spelled(data, value, beside_true):
    plain = {key: v for key, v in GOOD.items() if key != "encrypted"}
    parameters = data.draw(
        spelled({**plain, "encrypted": "true"}, {"encrypted": value})
        if beside_true
        else spelled({**plain, "encrypted": value})
    )
    (message,) = judged(CUSTOMER_KEY, parameters)
    assert "unencrypted" in message


@settings(max_examples=60, deadline=None)
@given(st.data(), st.booleans())
def test_another_accounts_key_fails_however_its_name_is_spelled(data, beside_a_home_key):
    parameters = data.draw(
        spelled(GOOD, {"kmsKeyId": OTHER_KEY_ARN})
        if beside_a_home_key
        else spelled({**GOOD, "kmsKeyId": OTHER_KEY_ARN})
    )
    (message,) = judged(HOME_KEY, parameters)
    assert OTHER in message


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_the_aws_managed_key_beside_the_stack_key_fails(data):
    parameters = data.draw(spelled(GOOD, {"kmsKeyId": "alias/aws/ebs"}))
    (message,) = judged(CUSTOMER_KEY, parameters)
    assert "AWS-managed key" in message
