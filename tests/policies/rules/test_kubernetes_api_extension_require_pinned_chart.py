"""New kinds and validating webhooks over staging's plan: Kueue's, rendered from its pinned chart, pass the gate;
the same kinds declared by the program, or under a release the gate did not render, fail."""

from dataclasses import replace

import pytest

from components.cluster.provisioning import provisioning_request_crd
from components.plan.resources import HELM_RELEASE, K8S_CRD
from policies.rules.kubernetes_api_extension_require_pinned_chart import RULE, VALIDATING_WEBHOOKS
from seedance.check_command import check, plan_resources, rendered_releases
from tests.conftest import _stack_plan
from tests.policies.spellings import resource


@pytest.mark.parametrize("type_", [K8S_CRD, VALIDATING_WEBHOOKS])
def test_declared_extensions_fail_staging_and_a_pinned_charts_pass(type_):
    staging = plan_resources(_stack_plan("staging"))
    declared = resource(type_, {"metadata": {"name": "rayclusters.ray.io"}}, "extension")
    violations, _ = check([*staging, declared], "staging", "us-east-1", kubernetes_version="1.35")
    assert [(v.level, v.urn) for v in violations if v.policy == RULE.name] == [("mandatory", declared.urn)]

    kueue = next(r for r in staging if r.type == HELM_RELEASE and str(r.props.get("chart")).endswith("/kueue"))
    own = {"metadata": {"name": "things.kueue.x-k8s.io"}, "spec": {"group": "kueue.x-k8s.io"}}
    charted = replace(declared, parent=kueue.urn, props=own)
    assert list(RULE.check_resource(charted, {"release_charts": {kueue.urn: "kueue"}})) == []
    # The same object rendered by another pinned chart (Grafana's extraObjects render anything) is refused.
    assert list(RULE.check_resource(charted, {"release_charts": {kueue.urn: "grafana"}}))


def test_a_pinned_chart_defines_kinds_of_its_own_api_groups_only():
    foreign = resource(K8S_CRD, {"metadata": {"name": "rayclusters.ray.io"}, "spec": {"group": "ray.io"}}, "ray")
    charted = replace(foreign, parent="urn:release")
    assert list(RULE.check_resource(charted, {"release_charts": {"urn:release": "kueue"}}))


@pytest.mark.parametrize(
    "kind", ["ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck", "ProvisioningRequestConfig"]
)
def test_kueue_objects_rendered_by_any_chart_are_refused(kind):
    """The queues are the program's, from the stack config: a chart's values never bring one."""
    rendered = replace(resource(f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}", {"spec": {}}, "q"), parent="urn:r")
    for chart in ("grafana", "kueue"):
        assert list(RULE.check_resource(rendered, {"release_charts": {"urn:r": chart}}))
    assert list(RULE.check_resource(replace(rendered, parent=None), {"release_charts": {}})) == []


def test_kueues_own_crds_and_webhooks_are_rendered_and_pass():
    staging = plan_resources(_stack_plan("staging"))
    rendered, unrendered = rendered_releases(staging, "1.35")
    assert unrendered == [] and {K8S_CRD, VALIDATING_WEBHOOKS} <= {r.type for r in rendered}
    violations, _ = check(staging, "staging", "us-east-1", kubernetes_version="1.35")
    assert [v for v in violations if v.policy == RULE.name] == []


def _edited_crd(edit):
    crd = provisioning_request_crd()
    edit(crd)
    return resource(K8S_CRD, {k: v for k, v in crd.items() if k in ("metadata", "spec")}, "provisioning")


@pytest.mark.parametrize(
    "edit",
    [
        lambda crd: crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(
            {"x-kubernetes-preserve-unknown-fields": True}
        ),
        lambda crd: crd["spec"].update(group="autoscaling.example.com"),
        lambda crd: crd["metadata"].update(name="provisioningrequests.autoscaling.example.com"),
        lambda crd: crd["spec"]["names"].update(kind="Pod"),
    ],
)
def test_the_programs_own_provisioning_api_passes_only_as_vendored(edit):
    """The autoscaler's ProvisioningRequest API, which no chart ships: the program's copy passes, a changed one
    (a schema that keeps anything, another group or name) fails, and under a chart it is that chart's to bring."""
    assert list(RULE.check_resource(_edited_crd(lambda crd: None), RULE.defaults())) == []
    assert list(RULE.check_resource(_edited_crd(edit), RULE.defaults()))
    charted = replace(_edited_crd(lambda crd: None), parent="urn:release")
    assert list(RULE.check_resource(charted, {"release_charts": {"urn:release": "grafana"}}))
