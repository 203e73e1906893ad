"""A plan file read as untrusted input: every field kept as written, every malformed shape refused with
one whole message naming the resource and the field."""

import math

import pytest

from components.plan.document import PlanDocumentError, plan_document_resources
from components.plan.resources import PlanResource

URN = "urn:pulumi:dev::seedance-gpu::aws:ebs/volume:Volume::ckpt"


def entry(**fields):
    return {"urn": URN, "type": "aws:ebs/volume:Volume", **fields}


def test_every_field_is_kept_as_written():
    (read,) = plan_document_resources(
        {
            "resources": [
                entry(
                    name="ckpt-volume",
                    parent="urn:parent",
                    id="vol-1",
                    dependencies=["urn:key"],
                    inputs={"size": 64, "tags": {"team": "ml"}, "sizes": [1, 2.5]},
                )
            ]
        }
    )
    assert read == PlanResource(
        URN,
        "aws:ebs/volume:Volume",
        "ckpt-volume",
        {"size": 64, "tags": {"team": "ml"}, "sizes": [1, 2.5]},
        "urn:parent",
        ("urn:key",),
        "vol-1",
    )


def test_defaults_name_the_resource_after_its_urn_and_give_it_nothing_else():
    (read,) = plan_document_resources({"resources": [entry()]})
    assert (read.name, read.props, read.parent, read.dependencies, read.id) == ("ckpt", {}, None, (), None)


def test_a_secret_input_is_judged_by_its_value():
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": 64}
    (read,) = plan_document_resources({"resources": [entry(inputs={"size": secret})]})
    assert read.props == {"size": 64}


@pytest.mark.parametrize(
    "document, message",
    [
        ([], "not a plan JSON: expected an object with a resources list (as `seedance plan --json` writes)"),
        (
            {"resources": {}},
            "not a plan JSON: expected an object with a resources list (as `seedance plan --json` writes)",
        ),
        ({"resources": ["x"]}, "resources[0] is not an object"),
        ({"resources": [entry(), {"urn": 1, "type": "t"}]}, "resources[1]: urn and type must be strings"),
        ({"resources": [{"urn": URN}]}, "resources[0]: urn and type must be strings"),
        ({"resources": [entry(), entry()]}, f"resource {URN} appears twice: URNs are unique in a plan"),
        ({"resources": [entry(inputs=[])]}, f"resource {URN}: inputs must be an object, not list"),
        ({"resources": [entry(dependencies="urn:x")]}, f"resource {URN}: dependencies must be a list of URNs"),
        ({"resources": [entry(dependencies=[1])]}, f"resource {URN}: dependencies must be a list of URNs"),
        ({"resources": [entry(name=3)]}, f"resource {URN}: name, parent and id must be strings"),
        ({"resources": [entry(parent=["p"])]}, f"resource {URN}: name, parent and id must be strings"),
        ({"resources": [entry(id=7)]}, f"resource {URN}: name, parent and id must be strings"),
    ],
)
def test_a_malformed_document_is_refused_naming_what(document, message):
    with pytest.raises(PlanDocumentError) as refused:
        plan_document_resources(document)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    "inputs, where, shown, problem",
    [
        ({"size": -150000}, "size", "-150000", "is negative"),
        ({"size": True}, "size", "True", "is a boolean, not a number"),
        ({"size": "big"}, "size", "'big'", "is not a number"),
        ({"size": {"gib": 1}}, "size", "{'gib': 1}", "is not a number"),
        ({"size": [1]}, "size", "[1]", "is not a number"),
        ({"size": b"1"}, "size", "b'1'", "is not a number"),
        ({"size": "nan"}, "size", "'nan'", "is not a finite number"),
        ({"size": math.inf}, "size", "inf", "is not a finite number"),
        ({"ebs": {"volumeSize": -1}}, "ebs.volumeSize", "-1", "is negative"),
        ({"overrides": [{"weightedCapacity": "0"}]}, "overrides[0].weightedCapacity", "'0'", "is zero"),
    ],
)
def test_a_quantity_that_is_not_a_finite_amount_is_refused_naming_its_path(inputs, where, shown, problem):
    with pytest.raises(PlanDocumentError) as refused:
        plan_document_resources({"resources": [entry(inputs=inputs)]})
    assert str(refused.value) == (
        f"resource {URN}: inputs.{where} = {shown} {problem}; a quantity must be a finite number of zero or more"
    )


def test_a_non_finite_number_anywhere_is_refused():
    with pytest.raises(PlanDocumentError) as refused:
        plan_document_resources({"resources": [entry(inputs={"labels": [{"ratio": math.nan}]})]})
    assert str(refused.value) == f"resource {URN}: inputs.labels[0].ratio = nan is not a finite number"


@pytest.mark.parametrize("value", [0, 0.0, "12", 3.5, None, "04da6b54-80e4-46f7-96ec-b56ff0331ba9"])
def test_an_amount_of_zero_or_more_or_unknown_is_read(value):
    (read,) = plan_document_resources({"resources": [entry(inputs={"size": value})]})
    assert read.props == {"size": value}
