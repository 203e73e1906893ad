"""The cluster autoscaler's IAM policy and Helm values, the values rendered by its pinned charts."""

from __future__ import annotations

import pytest

from components.cluster.autoscaling import NAMESPACE, autoscaler_policy, autoscaler_values
from components.cluster.config import ClusterAutoscalerConfig
from components.cluster.provisioning import PROVISIONING_GROUP
from seedance import charts


def test_it_changes_only_groups_tagged_for_its_own_cluster():
    policy = autoscaler_policy("aws", "us-east-1", "123456789012", "prod")
    by_sid = {s["Sid"]: s for s in policy["Statement"]}
    scale = by_sid["ScaleThisClustersGroups"]
    assert set(scale["Action"]) == {"autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"}
    assert scale["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/prod": "owned"}}
    assert all(a.split(":")[1].startswith(("Describe", "Get")) for a in by_sid["Discover"]["Action"])
    assert by_sid["DescribeThisClustersManagedNodeGroups"]["Resource"].endswith(":nodegroup/prod/*/*")


def _rendered(chart_version: str, provisioning_requests: bool) -> list[dict]:
    values = autoscaler_values(
        ClusterAutoscalerConfig(),
        cluster_name="prod",
        region="us-east-1",
        image_tag="v1.35.2",
        chart_version=chart_version,
        role_arn="arn:aws:iam::123456789012:role/autoscaler",
        provisioning_requests=provisioning_requests,
    )
    release = {"name": "cluster-autoscaler", "namespace": NAMESPACE, "chart": "cluster-autoscaler"}
    return charts.render({**release, "version": chart_version, "values": values}, "1.35")


def _grants(rendered: list[dict], group: str, resource: str) -> set[str]:
    (role,) = [o for o in rendered if o["kind"] == "ClusterRole"]
    return {
        verb
        for rule in role["rules"]
        if group in rule.get("apiGroups", []) and resource in rule.get("resources", [])
        for verb in rule["verbs"]
    }


@pytest.mark.parametrize("chart_version", ["9.53.0", "9.59.0"])
def test_with_multi_node_pools_it_answers_provisioning_requests_on_either_pinned_chart(chart_version):
    """The flag on, and the API's requests and their PodTemplates readable: 9.59.0's own ClusterRole grants
    them, 9.53.0's gets them from the values."""
    rendered = _rendered(chart_version, provisioning_requests=True)
    (deployment,) = [o for o in rendered if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert "--enable-provisioning-requests=true" in container["command"]
    for resource in ("provisioningrequests", "provisioningrequests/status"):
        assert {"get", "list", "watch", "update", "patch"} <= _grants(rendered, PROVISIONING_GROUP, resource)
    assert {"get", "list", "watch"} <= _grants(rendered, "", "podtemplates")


def test_without_them_the_older_chart_grants_nothing_of_the_api_and_the_flag_is_off():
    rendered = _rendered("9.53.0", provisioning_requests=False)
    (deployment,) = [o for o in rendered if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert not any("provisioning-requests" in arg for arg in container["command"])
    assert _grants(rendered, PROVISIONING_GROUP, "provisioningrequests") == set()
