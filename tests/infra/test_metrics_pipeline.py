"""The metrics pipeline in every stack: Prometheus scrapes what the HPAs and people read, the adapter
queries that Prometheus over windows of several scrapes, and nothing waits for a CRD nobody installs."""

import re

from components.compute.labels import GPU_TAINT_KEY
from tests.k8s_checks import node_labels, selects

RELEASE = "kubernetes:helm.sh/v3:Release"
COUNTERS = ("nv_inference_queue_duration_us", "nv_inference_request_success", "nv_inference_count",
            "nv_inference_request_duration_us", "nv_inference_request_failure")


def releases(plan):
    return {r.inputs["chart"]: r for r in plan.of_type(RELEASE)}


def seconds(duration):
    value, unit = re.fullmatch(r"(\d+)([smh])", duration).groups()
    return int(value) * {"s": 1, "m": 60, "h": 3600}[unit]


def test_the_adapter_queries_the_prometheus_the_stack_installs(stack_plan):
    charts = releases(stack_plan)
    prometheus, adapter = charts["prometheus"], charts["prometheus-adapter"]
    service = f"http://{prometheus.inputs['name']}-server.{prometheus.inputs['namespace']}.svc"
    assert adapter.inputs["values"]["prometheus"]["url"] == service
    assert adapter.inputs["values"]["prometheus"]["port"] == 80  # the chart's server.service.servicePort
    assert prometheus.urn in adapter.dependencies


def test_prometheus_accepts_its_scrape_settings(stack_plan):
    """Prometheus refuses a config whose scrape timeout exceeds the interval; the chart's default
    timeout (10s) survives a values file that sets only the interval."""
    scrape = releases(stack_plan)["prometheus"].inputs["values"]["server"]["global"]
    assert seconds(scrape.get("scrape_timeout", "10s")) <= seconds(scrape["scrape_interval"])


def test_fast_scrape_intervals_lower_the_timeout():
    from components.monitoring.config import MonitoringConfig
    from components.monitoring.metrics_pipeline import prometheus_values

    scrape = prometheus_values(MonitoringConfig(scrape_interval_seconds=5), {})["server"]["global"]
    assert (scrape["scrape_interval"], scrape["scrape_timeout"]) == ("5s", "5s")


def test_rule_windows_hold_several_scrapes_and_counters_are_rated(stack_plan):
    charts = releases(stack_plan)
    interval = seconds(charts["prometheus"].inputs["values"]["server"]["global"]["scrape_interval"])
    for rule in charts["prometheus-adapter"].inputs["values"]["rules"]["custom"]:
        query = rule["metricsQuery"]
        windows = re.findall(r"\[(\d+[smh])\]", query)
        assert windows and all(seconds(w) >= 4 * interval for w in windows), query
        for function, metric in re.findall(r"(\w+)\((\w+)\{", query):
            if metric in COUNTERS:
                assert function in ("rate", "increase", "irate"), query  # delta() misreads counter resets


def test_prometheus_scrapes_triton_and_dcgm_by_pod_annotation(stack_plan):
    """The chart's default kubernetes-pods job keeps pods annotated prometheus.io/scrape=true, at the
    annotated port and path: each exporter's annotation must name the port it serves metrics on."""
    for deployment in stack_plan.of_type("kubernetes:apps/v1:Deployment"):
        template = deployment.inputs["spec"]["template"]
        if not deployment.inputs["metadata"]["name"].startswith("triton-"):
            continue
        annotations = template["metadata"]["annotations"]
        ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
        assert annotations["prometheus.io/scrape"] == "true"
        assert int(annotations["prometheus.io/port"]) == ports["metrics"]
    dcgm = releases(stack_plan)["dcgm-exporter"].inputs["values"]
    assert dcgm["podAnnotations"]["prometheus.io/scrape"] == "true"
    assert dcgm["podAnnotations"]["prometheus.io/port"] == "9400"  # the exporter's default listen port


def test_dcgm_exporter_runs_on_every_gpu_node(stack_plan):
    dcgm = releases(stack_plan)["dcgm-exporter"].inputs["values"]
    assert any(t["key"] == GPU_TAINT_KEY and t["operator"] == "Exists" for t in dcgm["tolerations"])
    for asg in stack_plan.of_type("aws:autoscaling/group:Group"):
        assert selects(dcgm["affinity"], node_labels(asg)), asg.name


def test_prometheus_starts_on_a_fresh_cluster(stack_plan):
    """A fresh EKS cluster may have no default StorageClass: a volume claim without a declared class
    leaves Prometheus Pending and every HPA blind. Prometheus runs on the system nodes."""
    server = releases(stack_plan)["prometheus"].inputs["values"]["server"]
    volume = server.get("persistentVolume", {})
    if volume.get("enabled", True):
        declared = {c.inputs["metadata"]["name"] for c in stack_plan.of_type("kubernetes:storage.k8s.io/v1:StorageClass")}
        assert volume.get("storageClass") in declared
    else:  # an unbounded emptyDir gets the pod evicted when the node's disk fills
        limit = int(server["emptyDir"]["sizeLimit"].removesuffix("Gi"))
        assert int(server["retentionSize"].removesuffix("GB")) < limit
    (system,) = stack_plan.of_type("aws:eks/nodeGroup:NodeGroup")
    assert server["nodeSelector"].items() <= system.inputs["labels"].items()


def test_no_object_waits_for_a_crd_nobody_installs(stack_plan):
    """A custom resource declared before its CRD exists fails the first `pulumi up`. No stack declares
    one: metrics are scraped by annotation, not by ServiceMonitor; no chart here needs CRDs either."""
    custom = [r.type for r in stack_plan.resources if r.type.startswith("kubernetes:")
              and r.type.split(":")[1].split("/")[0] not in BUILT_IN_GROUPS]
    assert custom == []
    for release in stack_plan.of_type(RELEASE):
        values = release.inputs["values"]
        assert not values.get("serviceMonitor", {}).get("enabled", False), release.inputs["chart"]


BUILT_IN_GROUPS = {"core", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
                   "storage.k8s.io", "helm.sh"}
