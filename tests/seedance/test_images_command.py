"""`seedance images pin` on recorded SSM and EC2 answers (Stubber): it writes the file the program reads,
keeps an unchanged pin as it was, and says what moved."""

import json

import boto3
import pytest
from botocore.stub import Stubber

from seedance import images_command
from seedance.cli import main
from tests.stacks import REPO, stack_config

AL2023 = "/aws/service/eks/optimized-ami/{v}/amazon-linux-2023/x86_64/nvidia/recommended/image_id"
BOTTLEROCKET = "/aws/service/bottlerocket/aws-k8s-{v}-nvidia/x86_64/latest/image_id"


@pytest.fixture
def account(monkeypatch, tmp_path):
    ssm = boto3.client("ssm", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    ec2 = boto3.client("ec2", region_name="us-west-2", aws_access_key_id="x", aws_secret_access_key="x")
    stubs = Stubber(ssm), Stubber(ec2)
    for stub in stubs:
        stub.activate()
    monkeypatch.setattr(images_command, "clients", lambda service, region: {"ssm": ssm, "ec2": ec2}[service])
    # A copy of the project whose stacks directory is the test's.
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    (project / "stacks" / "Pulumi.dev.yaml").write_text((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    (project / "infra").mkdir()
    yield stubs, project
    for stub in stubs:
        stub.assert_no_pending_responses()


def _answer(stubs, parameter, image_id, name):
    ssm, ec2 = stubs
    ssm.add_response(
        "get_parameter",
        {"Parameter": {"Name": parameter, "Type": "String", "Value": image_id, "Version": 7}},
        {"Name": parameter},
    )
    ec2.add_response("describe_images", {"Images": [{"ImageId": image_id, "Name": name}]}, {"ImageIds": [image_id]})


def _pin(project):
    return main(["images", "pin", "--stack", "dev", "--program", str(project / "infra")])


def test_pin_writes_each_family_once_and_a_second_pin_keeps_what_did_not_move(account, capsys):
    stubs, project = account
    version = stack_config("dev").cluster.kubernetes_version
    _answer(
        stubs,
        AL2023.format(v=version),
        "ami-0a1b2c3d4e5f60718",
        f"amazon-eks-node-al2023-x86_64-nvidia-{version}-v20261120",
    )
    _answer(stubs, BOTTLEROCKET.format(v=version), "ami-0b1b2c3d4e5f60718", "bottlerocket-aws-k8s-nvidia-v1.50.0")
    assert _pin(project) == 0
    first = json.loads((project / "stacks" / "node-images.dev.json").read_text())
    assert first["images"]["al2023/x86_64"]["image_id"] == "ami-0a1b2c3d4e5f60718"
    assert first["kubernetes_version"] == version and set(first["images"]) == {"al2023/x86_64", "bottlerocket/x86_64"}
    capsys.readouterr()
    _answer(
        stubs,
        AL2023.format(v=version),
        "ami-0f0e0d0c0b0a09080",
        f"amazon-eks-node-al2023-x86_64-nvidia-{version}-v20261204",
    )
    _answer(stubs, BOTTLEROCKET.format(v=version), "ami-0b1b2c3d4e5f60718", "bottlerocket-aws-k8s-nvidia-v1.50.0")
    assert _pin(project) == 0
    out = capsys.readouterr().out
    assert "al2023/x86_64: ami-0a1b2c3d4e5f60718 (amazon-eks-node" in out and "-> ami-0f0e0d0c0b0a09080" in out
    assert "bottlerocket/x86_64: ami-0b1b2c3d4e5f60718 (bottlerocket-aws-k8s-nvidia-v1.50.0) is still" in out
    second = json.loads((project / "stacks" / "node-images.dev.json").read_text())
    assert second["images"]["bottlerocket/x86_64"] == first["images"]["bottlerocket/x86_64"]  # same pin, same time


def test_an_unreadable_parameter_writes_nothing_and_says_why(account, capsys):
    (ssm, _ec2), project = account
    ssm.add_client_error("get_parameter", "AccessDeniedException", "not authorized to perform: ssm:GetParameter")
    assert _pin(project) == 2
    assert "AccessDeniedException" in capsys.readouterr().err
    assert not (project / "stacks" / "node-images.dev.json").exists()


def test_a_broken_file_is_pinned_afresh(account, capsys):
    stubs, project = account
    version = stack_config("dev").cluster.kubernetes_version
    (project / "stacks" / "node-images.dev.json").write_text('{"images_version": 1, "images": {"evil/x": {}}}')
    _answer(stubs, AL2023.format(v=version), "ami-0a1b2c3d4e5f60718", "amazon-eks-node-al2023")
    _answer(stubs, BOTTLEROCKET.format(v=version), "ami-0b1b2c3d4e5f60718", "bottlerocket-aws-k8s-nvidia")
    assert _pin(project) == 0
    assert "replaced: every image is pinned afresh" in capsys.readouterr().out
    written = json.loads((project / "stacks" / "node-images.dev.json").read_text())
    assert set(written["images"]) == {"al2023/x86_64", "bottlerocket/x86_64"}


def _images(stubs, parameter, pinned, recommended, owners):
    ssm, ec2 = stubs
    ssm.add_response(
        "get_parameter",
        {"Parameter": {"Name": parameter, "Type": "String", "Value": recommended, "Version": 9}},
        {"Name": parameter},
    )
    ec2.add_response(
        "describe_images", {"Images": [{"ImageId": recommended, "Name": "recommended"}]}, {"ImageIds": [recommended]}
    )
    ec2.add_response(
        "describe_images",
        {"Images": [{"ImageId": i, "OwnerId": o} for i, o in owners.items()]},
        {"ImageIds": sorted({pinned, recommended})},
    )


def test_check_says_whether_the_pins_exist_come_from_aws_and_are_still_recommended(account, capsys):
    stubs, project = account
    version = stack_config("dev").cluster.kubernetes_version
    al2023, bottlerocket = AL2023.format(v=version), BOTTLEROCKET.format(v=version)
    _answer(stubs, al2023, "ami-0a1b2c3d4e5f60718", "amazon-eks-node-al2023")
    _answer(stubs, bottlerocket, "ami-0b1b2c3d4e5f60718", "bottlerocket")
    assert _pin(project) == 0
    capsys.readouterr()
    check = ["images", "check", "--stack", "dev", "--program", str(project / "infra")]
    # Pinned and still recommended; pinned, and a newer one recommended by the same publisher.
    _images(stubs, al2023, "ami-0a1b2c3d4e5f60718", "ami-0a1b2c3d4e5f60718", {"ami-0a1b2c3d4e5f60718": "602401143452"})
    _images(
        stubs,
        bottlerocket,
        "ami-0b1b2c3d4e5f60718",
        "ami-0c1b2c3d4e5f60718",
        {"ami-0b1b2c3d4e5f60718": "092701018921", "ami-0c1b2c3d4e5f60718": "092701018921"},
    )
    assert main(check) == 0
    out = capsys.readouterr().out
    assert "al2023/x86_64: ami-0a1b2c3d4e5f60718 is pinned and recommended" in out
    assert "AWS now recommends ami-0c1b2c3d4e5f60718" in out
    # A hand edit naming someone else's AMI: refused.
    path = project / "stacks" / "node-images.dev.json"
    path.write_text(path.read_text().replace("ami-0a1b2c3d4e5f60718", "ami-0d0d0d0d0d0d0d0d0"))
    _images(
        stubs,
        al2023,
        "ami-0d0d0d0d0d0d0d0d0",
        "ami-0a1b2c3d4e5f60718",
        {"ami-0d0d0d0d0d0d0d0d0": "444455556666", "ami-0a1b2c3d4e5f60718": "602401143452"},
    )
    _images(
        stubs, bottlerocket, "ami-0b1b2c3d4e5f60718", "ami-0b1b2c3d4e5f60718", {"ami-0b1b2c3d4e5f60718": "092701018921"}
    )
    assert main(check) == 1
    assert "FAILED  al2023/x86_64: ami-0d0d0d0d0d0d0d0d0 is owned by 444455556666" in capsys.readouterr().out


def test_check_fails_a_stack_that_pins_nothing(account, capsys):
    _stubs, project = account
    assert main(["images", "check", "--stack", "dev", "--program", str(project / "infra")]) == 1
    assert "FAILED  al2023/x86_64: not pinned" in capsys.readouterr().out
