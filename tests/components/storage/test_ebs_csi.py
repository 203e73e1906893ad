"""An EBS CSI StorageClass read as the driver reads it (pkg/driver/controller.go CreateVolume): names in any
letter case, every value of a name given twice, gp3 when no type is named, encryption only for "true"; and
the estimate prices a claim of such a class from what the driver would make."""

from datetime import date

import pytest
from hypothesis import given as drawn
from hypothesis import settings

from components.cost.estimate import catalog_for, estimate
from components.plan.resources import PlanResource
from components.plan.unknowns import UnknownValueError, checking
from components.storage.ebs_csi import EBS_CSI, encrypts, given, kms_keys, volume_types
from tests.policies.spellings import any_case

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


@settings(max_examples=100, deadline=None)
@drawn(any_case("kmsKeyId"), any_case("type"))
def test_a_name_in_any_letter_case_is_the_drivers_parameter(key_name, type_name):
    parameters = {key_name: "arn:aws:kms:us-east-1:123456789012:key/k", type_name: "IO2", "iops": "4000"}
    assert kms_keys(parameters) == ["arn:aws:kms:us-east-1:123456789012:key/k"]
    assert volume_types(parameters) == ["io2"]
    assert given(parameters, "iops") == ["4000"] and given(parameters, "throughput") == []


def test_a_name_given_twice_gives_both_values_and_no_type_is_gp3():
    assert volume_types({"type": "gp3", "TYPE": "gp2"}) == ["gp3", "gp2"]
    assert volume_types({"encrypted": "true"}) == ["gp3"]


@pytest.mark.parametrize(
    "parameters, encrypted",
    [
        ({"encrypted": "true"}, True),
        ({"Encrypted": "true"}, True),
        ({}, False),
        ({"encrypted": "True"}, False),
        ({"encrypted": "TRUE"}, False),
        ({"encrypted": True}, False),
        ({"encrypted": "1"}, False),
        ({"encrypted": "true", "ENCRYPTED": "false"}, False),
    ],
)
def test_volumes_are_encrypted_only_when_every_encrypted_is_exactly_true(parameters, encrypted):
    assert encrypts(parameters) is encrypted


def test_only_the_parameter_asked_for_is_read():
    """A key created by the same program is unknown at preview: the class's type is still read."""
    parameters = checking({"type": "io2", "kmsKeyId": UNKNOWN})
    assert volume_types(parameters) == ["io2"]
    with pytest.raises(UnknownValueError):
        kms_keys(parameters)


def _class(name, parameters):
    return PlanResource(
        f"urn:{name}",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        name,
        {"metadata": {"name": name}, "provisioner": EBS_CSI, "parameters": parameters},
    )


def _claim_line(parameters, size="100Gi"):
    claim = PlanResource(
        "urn:claim",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "claim",
        {"spec": {"storageClassName": "c", "resources": {"requests": {"storage": size}}}},
    )
    (line,) = [
        line
        for line in estimate([_class("c", parameters), claim], catalog_for("us-east-1"), on=date(2026, 12, 1)).lines
        if line.urn == "urn:claim"
    ]
    return line


def test_a_claim_is_priced_as_the_volume_the_driver_makes():
    gp3 = _claim_line({})  # no type: the driver's gp3, not free instance store
    assert (gp3.monthly_usd, gp3.basis) == (8.0, "claim of class c: gp3 100 GiB")
    assert _claim_line({"Type": "IO2", "IOPS": "4000"}).basis == "claim of class c: io2 100 GiB, 4,000 IOPS"
    per_gib = _claim_line({"type": "io2", "iopsPerGB": "50"})  # the driver's IOPS: 50 x 100 GiB
    assert per_gib.basis == "claim of class c: io2 100 GiB, 5,000 IOPS"
    assert per_gib.monthly_usd == _claim_line({"type": "io2", "iops": "5000"}).monthly_usd


def test_a_claim_of_a_class_whose_key_is_unknown_is_still_priced():
    assert _claim_line({"type": "io2", "iops": "4000", "kmsKeyId": UNKNOWN}).monthly_usd is not None


@pytest.mark.parametrize(
    "parameters, why",
    [
        ({"type": "gp3", "TYPE": "io2"}, "gives type as gp3 and io2 in two spellings: the driver takes either"),
        ({"iops": "3000", "Iops": "9000"}, "gives iops as 3000 and 9000 in two spellings: the driver takes either"),
        (
            {"type": "io2", "iops": "3000", "iopsPerGB": "10"},
            "gives both iops and iopsPerGB: the EBS CSI driver refuses to make its volumes",
        ),
    ],
)
def test_a_class_the_driver_could_read_two_ways_is_not_priced(parameters, why):
    line = _claim_line(parameters)
    assert line.monthly_usd is None and line.basis == f"unknown: storage class 'c' {why}"


def test_a_class_whose_priced_parameter_is_unknown_prices_its_claims_as_unknown():
    line = _claim_line({"type": UNKNOWN})
    assert (
        line.monthly_usd is None and line.basis == "unknown: storage class 'c''s parameters are not known until apply"
    )
