"""The vendored ProvisioningRequest API and the rules the autoscaler's older chart lacks for it."""

from __future__ import annotations

import pytest

from components.cluster.provisioning import (
    PROVISIONING_CRD_NAME,
    PROVISIONING_GROUP,
    PROVISIONING_RULES,
    provisioning_request_crd,
    rbac_rules_for,
)


def test_the_vendored_crd_serves_the_v1_api_kueue_and_the_autoscaler_speak():
    """Kueue 0.19.2 and the autoscaler both use autoscaling.x-k8s.io/v1 (Kueue's go.mod pins the autoscaler's
    apis module); a request names its pods by a PodTemplate and a count."""
    crd = provisioning_request_crd()
    assert crd["kind"] == "CustomResourceDefinition" and crd["metadata"]["name"] == PROVISIONING_CRD_NAME
    spec = crd["spec"]
    assert (spec["group"], spec["scope"], spec["names"]["kind"]) == (
        PROVISIONING_GROUP,
        "Namespaced",
        "ProvisioningRequest",
    )
    served = {v["name"]: v for v in spec["versions"] if v["served"]}
    assert served["v1"]["storage"] is True
    pod_set = served["v1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["podSets"]["items"]
    assert set(pod_set["required"]) == {"count", "podTemplateRef"}


def test_each_caller_gets_its_own_copy_of_the_crd():
    first = provisioning_request_crd()
    first["spec"]["group"] = "changed"
    assert provisioning_request_crd()["spec"]["group"] == PROVISIONING_GROUP


@pytest.mark.parametrize(
    ("version", "added"), [("9.53.0", True), ("9.58.9", True), ("9.59.0", False), ("10.0.0", False)]
)
def test_charts_before_9_59_get_the_rules_their_cluster_role_lacks(version, added):
    rules = rbac_rules_for(version)
    assert rules == (PROVISIONING_RULES if added else [])
    if added:  # a copy: a caller's change is not the next caller's
        rules[0]["verbs"].append("delete")
        assert "delete" not in rbac_rules_for(version)[0]["verbs"]
