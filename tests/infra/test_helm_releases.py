"""Every Helm release of every stack rendered with Helm's own engine from the pinned chart source, as a
cluster of the stack's version would get it: every object valid against the official schemas (strict),
and every value the program sets read by the chart (without it, or with another value there, the chart
renders something else). A key the chart ignores would be a setting that silently does nothing."""

import copy

from tests.helm import render_release, values_of
from tests.k8s_checks import schema_errors
from tests.stacks import stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"


def leaves(value, path=()):
    """Paths to every value the program sets (a list is one value)."""
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from leaves(inner, (*path, key))
    else:
        yield path


def variants(values, path):
    """The values without the one at `path`, and with another of its kind there."""
    for remove in (True, False):
        copied = copy.deepcopy(values)
        holder = copied
        for key in path[:-1]:
            holder = holder[key]
        value = holder[path[-1]]
        if remove:
            del holder[path[-1]]
        else:
            holder[path[-1]] = (
                not value
                if isinstance(value, bool)
                else value + 1
                if isinstance(value, (int, float))
                else f"{value}x"
                if isinstance(value, str)
                else []
                if value
                else ["x"]
            )
        yield copied


def _renders_otherwise(release, version, values, full) -> bool:
    try:
        return render_release(release, version, values) != full
    except Exception:
        return True


def test_every_release_renders_valid_objects(stack_plan):
    version = stack_config(stack_plan.stack).cluster.kubernetes_version
    for release in stack_plan.of_type(RELEASE):
        objects = render_release(release, version)
        assert objects, release.inputs["chart"]
        assert schema_errors(objects, version) == [], release.inputs["chart"]


def test_every_value_the_program_sets_is_read_by_the_chart(stack_plan):
    version = stack_config(stack_plan.stack).cluster.kubernetes_version
    ignored = []
    for release in stack_plan.of_type(RELEASE):
        values = values_of(release)
        full = render_release(release, version)
        for path in leaves(values):
            if not path:
                continue
            if any(_renders_otherwise(release, version, variant, full) for variant in variants(values, path)):
                continue
            ignored.append(f"{release.inputs['chart'].rsplit('/', 1)[-1]}: {'.'.join(map(str, path))}")
    assert ignored == []


# Containers a chart renders with no resources and no value to give them: the device plugin's
# config-manager sidecars (templates/daemonset-device-plugin.yml at v0.17.1). Their pods are Burstable
# all the same: the plugin container beside them has requests.
UNSIZABLE = {"nvidia-device-plugin-sidecar", "mps-control-daemon-sidecar"}


def test_no_add_on_runs_best_effort(stack_plan):
    """Every container every chart runs requests CPU and memory and limits memory (but the unsizable
    sidecars), and no pod is BestEffort: the first the kubelet evicts under pressure."""
    version = stack_config(stack_plan.stack).cluster.kubernetes_version
    bare = []
    for release in stack_plan.of_type(RELEASE):
        for obj in render_release(release, version):
            if obj["kind"] not in ("Deployment", "DaemonSet", "StatefulSet"):
                continue
            containers = obj["spec"]["template"]["spec"]["containers"]
            sized = [
                c
                for c in containers
                if {"cpu", "memory"} <= set((c.get("resources") or {}).get("requests") or {})
                and "memory" in ((c.get("resources") or {}).get("limits") or {})
            ]
            bare += [
                f"{release.inputs['name']}: {obj['kind']} {obj['metadata']['name']}/{c['name']}"
                for c in containers
                if c not in sized and c["name"] not in UNSIZABLE
            ]
            assert sized, f"{obj['metadata']['name']} would be BestEffort"
    assert bare == []


def test_the_custom_metrics_api_survives_one_adapter_down(stack_plan):
    (adapter,) = [r for r in stack_plan.of_type(RELEASE) if r.inputs["name"] == "prometheus-adapter"]
    objects = render_release(adapter, stack_config(stack_plan.stack).cluster.kubernetes_version)
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["spec"]["replicas"] >= 2
    (budget,) = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    assert budget["spec"]["maxUnavailable"] == 1


def test_the_resource_metrics_api_is_served(stack_plan):
    """kubectl top and any CPU or memory HPA need the metrics server."""
    (server,) = [r for r in stack_plan.of_type(RELEASE) if r.inputs["name"] == "metrics-server"]
    services = [
        o
        for o in render_release(server, stack_config(stack_plan.stack).cluster.kubernetes_version)
        if o["kind"] == "APIService"
    ]
    assert [s["metadata"]["name"] for s in services] == ["v1beta1.metrics.k8s.io"]
