"""Rendered node user data: golden files, and parsed back the way the node agents read it.

Regenerate the golden files after an intended change, then review the diff:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/components/compute/test_node_bootstrap.py
"""

import base64
import email
import os
import tomllib
from pathlib import Path

import pytest
import yaml

from components.compute.efa import EFA_HUGEPAGES
from components.compute.labels import GPU_TAINT, NODE_GROUP_LABEL, WORKLOAD_CLASS_LABEL
from components.compute.node_bootstrap import ClusterJoin, ami_ssm_parameter, render_user_data
from policies.readers.user_data import findings

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "user_data"
JOIN = ClusterJoin(
    cluster_name="seedance-prod",
    endpoint="https://ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com",
    certificate_authority="LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
    service_cidr="172.20.0.0/16",
)
LABELS = {WORKLOAD_CLASS_LABEL: "batch", NODE_GROUP_LABEL: "batch"}


@pytest.mark.parametrize(
    "family, local_disks, golden_name",
    [
        ("al2023", False, "al2023_gpu_batch.txt"),
        ("bottlerocket", False, "bottlerocket_gpu_batch.txt"),
        ("al2023", True, "al2023_gpu_batch_local_nvme.txt"),
    ],
)
def test_user_data_matches_golden_file(family, local_disks, golden_name):
    rendered = render_user_data(family, JOIN, LABELS, [GPU_TAINT], local_disks)
    golden = GOLDEN / golden_name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()


def test_al2023_user_data_is_a_nodeadm_mime_document():
    message = email.message_from_string(render_user_data("al2023", JOIN, LABELS, [GPU_TAINT]))
    (part,) = [p for p in message.walk() if p.get_content_type() == "application/node.eks.aws"]
    config = yaml.safe_load(part.get_payload())
    assert config["kind"] == "NodeConfig" and config["apiVersion"] == "node.eks.aws/v1alpha1"
    assert config["spec"]["cluster"] == {
        "name": "seedance-prod",
        "apiServerEndpoint": JOIN.endpoint,
        "certificateAuthority": JOIN.certificate_authority,
        "cidr": "172.20.0.0/16",
    }
    assert config["spec"]["kubelet"]["flags"] == [
        "--node-labels=seedance.io/node-group=batch,seedance.io/workload-class=batch",
        "--register-with-taints=nvidia.com/gpu=true:NoSchedule",
    ]


def test_al2023_local_disks_use_the_mount_strategy():
    message = email.message_from_string(render_user_data("al2023", JOIN, LABELS, [GPU_TAINT], local_disks=True))
    (part,) = [p for p in message.walk() if p.get_content_type() == "application/node.eks.aws"]
    assert yaml.safe_load(part.get_payload())["spec"]["instance"] == {"localStorage": {"strategy": "Mount"}}
    with pytest.raises(ValueError, match="need the al2023"):
        render_user_data("bottlerocket", JOIN, LABELS, [GPU_TAINT], local_disks=True)


def test_bottlerocket_user_data_is_valid_toml_with_labels_and_taints():
    settings = tomllib.loads(render_user_data("bottlerocket", JOIN, LABELS, [GPU_TAINT]))["settings"]["kubernetes"]
    assert settings["cluster-name"] == "seedance-prod" and settings["api-server"] == JOIN.endpoint
    assert settings["node-labels"] == LABELS
    assert settings["node-taints"] == {"nvidia.com/gpu": ["true:NoSchedule"]}


def test_bottlerocket_time_slicing_goes_to_its_own_device_plugin():
    rendered = render_user_data("bottlerocket", JOIN, LABELS, [GPU_TAINT], time_slicing_replicas=4)
    golden = GOLDEN / "bottlerocket_gpu_online_time_slicing.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()
    plugin = tomllib.loads(rendered)["settings"]["kubelet-device-plugins"]["nvidia"]
    assert plugin == {
        "device-sharing-strategy": "time-slicing",
        "time-slicing": {"replicas": 4, "rename-by-default": False, "fail-requests-greater-than-one": False},
    }
    with pytest.raises(ValueError, match="config map"):
        render_user_data("al2023", JOIN, LABELS, [GPU_TAINT], time_slicing_replicas=4)


def test_ami_parameters_follow_the_published_paths():
    assert (
        ami_ssm_parameter("al2023", "1.34", "x86_64")
        == "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/nvidia/recommended/image_id"
    )
    assert (
        ami_ssm_parameter("bottlerocket", "1.34", "arm64")
        == "/aws/service/bottlerocket/aws-k8s-1.34-nvidia/arm64/latest/image_id"
    )


def test_an_efa_pools_nodes_reserve_huge_pages_before_the_kubelet_starts():
    """AL2023: a script part, which cloud-init runs before nodeadm starts the kubelet, raising the pages to at
    least the count and keeping it across reboots; Bottlerocket: its sysctl setting. Nothing in either is
    what the gate's user data rule refuses."""
    rendered = render_user_data("al2023", JOIN, LABELS, [GPU_TAINT], hugepages=EFA_HUGEPAGES)
    kinds = [(p.get_content_type(), p.get_payload()) for p in email.message_from_string(rendered).walk()]
    (script,) = [payload for kind, payload in kinds if kind == "text/x-shellscript"]
    assert script.startswith("#!/bin/bash") and f"-lt {EFA_HUGEPAGES} ]" in script
    assert f"sysctl -w vm.nr_hugepages={EFA_HUGEPAGES}" in script
    assert f"vm.nr_hugepages = {EFA_HUGEPAGES}" in script and "/etc/sysctl.d/" in script
    assert [k for k, _ in kinds].count("application/node.eks.aws") == 1  # the NodeConfig still the only one
    assert "text/x-shellscript" not in render_user_data("al2023", JOIN, LABELS, [GPU_TAINT])
    rocket = render_user_data("bottlerocket", JOIN, LABELS, [GPU_TAINT], hugepages=EFA_HUGEPAGES)
    assert tomllib.loads(rocket)["settings"]["kernel"]["sysctl"] == {"vm.nr_hugepages": str(EFA_HUGEPAGES)}
    for document in (rendered, rocket):
        assert findings(base64.b64encode(document.encode()).decode()) == ()
