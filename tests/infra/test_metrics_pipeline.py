"""The metrics pipeline in every stack: Prometheus scrapes what the HPAs and people read, the adapter
queries that Prometheus over windows of several scrapes, and nothing waits for a CRD nobody installs."""

import re

import yaml

from components.compute.labels import GPU_TAINT_KEY
from seedance_client.engine import Secret
from tests.helm import render_release, values_of
from tests.k8s_checks import node_labels, selects
from tests.stacks import stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
COUNTERS = (
    "nv_inference_queue_duration_us",
    "nv_inference_request_success",
    "nv_inference_count",
    "nv_inference_request_duration_us",
    "nv_inference_request_failure",
)


def releases(plan):
    return {r.inputs["chart"]: r for r in plan.of_type(RELEASE)}


def seconds(duration):
    value, unit = re.fullmatch(r"(\d+)([smh])", duration).groups()
    return int(value) * {"s": 1, "m": 60, "h": 3600}[unit]


def test_the_adapter_queries_the_prometheus_the_stack_installs(stack_plan):
    charts = releases(stack_plan)
    prometheus, adapter = charts["prometheus"], charts["prometheus-adapter"]
    service = f"http://{prometheus.inputs['name']}-server.{prometheus.inputs['namespace']}.svc"
    assert values_of(adapter)["prometheus"]["url"] == service
    assert values_of(adapter)["prometheus"]["port"] == 80  # the chart's server.service.servicePort
    assert prometheus.urn in adapter.dependencies


def test_prometheus_accepts_its_scrape_settings(stack_plan):
    """Prometheus refuses a config whose scrape timeout exceeds the interval; the chart's default
    timeout (10s) survives a values file that sets only the interval."""
    scrape = values_of(releases(stack_plan)["prometheus"])["server"]["global"]
    assert seconds(scrape.get("scrape_timeout", "10s")) <= seconds(scrape["scrape_interval"])


def test_fast_scrape_intervals_lower_the_timeout():
    from components.monitoring.config import MonitoringConfig
    from components.monitoring.metrics_pipeline import prometheus_values

    scrape = prometheus_values(MonitoringConfig(scrape_interval_seconds=5))["server"]["global"]
    assert (scrape["scrape_interval"], scrape["scrape_timeout"]) == ("5s", "5s")


def test_rule_windows_hold_several_scrapes_and_counters_are_rated(stack_plan):
    charts = releases(stack_plan)
    interval = seconds(values_of(charts["prometheus"])["server"]["global"]["scrape_interval"])
    for rule in values_of(charts["prometheus-adapter"])["rules"]["custom"]:
        query = rule["metricsQuery"]
        windows = re.findall(r"\[(\d+[smh])\]", query)
        assert windows and all(seconds(w) >= 4 * interval for w in windows), query
        for function, metric in re.findall(r"(\w+)\((\w+)\{", query):
            if metric in COUNTERS:
                assert function in ("rate", "increase", "irate"), query  # delta() misreads counter resets


def test_prometheus_scrapes_triton_and_dcgm_by_pod_annotation(stack_plan):
    """The kubernetes-pods job keeps pods annotated prometheus.io/scrape=true, at the annotated port and
    path: each exporter's annotation must name the port it serves metrics on."""
    for deployment in stack_plan.of_type("kubernetes:apps/v1:Deployment"):
        template = deployment.inputs["spec"]["template"]
        if not deployment.inputs["metadata"]["name"].startswith("triton-"):
            continue
        annotations = template["metadata"]["annotations"]
        ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
        assert annotations["prometheus.io/scrape"] == "true"
        assert int(annotations["prometheus.io/port"]) == ports["metrics"]
    dcgm = values_of(releases(stack_plan)["dcgm-exporter"])
    assert dcgm["podAnnotations"]["prometheus.io/scrape"] == "true"
    assert dcgm["podAnnotations"]["prometheus.io/port"] == "9400"  # the exporter's default listen port


def test_dcgm_exporter_runs_on_every_gpu_node(stack_plan):
    dcgm = values_of(releases(stack_plan)["dcgm-exporter"])
    assert any(t["key"] == GPU_TAINT_KEY and t["operator"] == "Exists" for t in dcgm["tolerations"])
    for asg in stack_plan.of_type("aws:autoscaling/group:Group"):
        assert selects(dcgm["affinity"], node_labels(asg)), asg.name


def test_prometheus_runs_on_the_system_nodes(stack_plan):
    server = values_of(releases(stack_plan)["prometheus"])["server"]
    (system,) = stack_plan.of_type("aws:eks/nodeGroup:NodeGroup")
    assert server["nodeSelector"].items() <= system.inputs["labels"].items()


# The chart whose release installs each custom API group a stack declares objects of.
CHART_GROUPS = {"kueue.x-k8s.io": "kueue"}


def test_no_object_waits_for_a_crd_nobody_installs(stack_plan):
    """A custom resource declared before its CRD exists fails the first `pulumi up`. Metrics are scraped by
    annotation, not by ServiceMonitor; the only custom resources are Kueue's queues, each waiting for the
    release that installs its CRDs (and Kueue's webhooks, which judge them)."""
    releases = {str(r.inputs["chart"]).rsplit("/", 1)[-1]: r.urn for r in stack_plan.of_type(RELEASE)}
    for resource in stack_plan.resources:
        group = resource.type.split(":")[1].split("/")[0] if resource.type.startswith("kubernetes:") else "core"
        if group not in BUILT_IN_GROUPS:
            assert group in CHART_GROUPS, resource.type
            assert releases.get(CHART_GROUPS[group]) in resource.dependencies, resource.name
    for release in stack_plan.of_type(RELEASE):
        values = values_of(release)
        assert not values.get("serviceMonitor", {}).get("enabled", False), release.inputs["chart"]


BUILT_IN_GROUPS = {
    "core",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "helm.sh",
}


def rendered(plan, chart):
    from tests.helm import render_release

    return render_release(releases(plan)[chart], stack_config(plan.stack).cluster.kubernetes_version)


def test_prometheus_reads_no_kubelet_proxy_and_honours_no_scraped_labels(stack_plan):
    """Rendered with the pinned chart: the chart's ClusterRole (with nodes/proxy, the kubelet's exec and
    log path) gives way to the stack's, bound to the service account the chart runs the server as; and no
    scrape job honours a target's labels, so no annotated pod can publish series as Triton's pods."""
    objects = rendered(stack_plan, "prometheus")
    assert not [o for o in objects if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    (account,) = [o for o in objects if o["kind"] == "ServiceAccount" and "server" in o["metadata"]["name"]]
    (role,) = [
        r
        for r in stack_plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if r.inputs["metadata"]["name"] == "seedance-prometheus"
    ]
    assert not any("nodes/proxy" in rule["resources"] for rule in role.inputs["rules"])
    (binding,) = [
        b
        for b in stack_plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
        if b.inputs["roleRef"]["name"] == "seedance-prometheus"
    ]
    assert binding.inputs["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": account["metadata"]["namespace"]}
    ]
    (config,) = [o for o in objects if o["kind"] == "ConfigMap" and "prometheus.yml" in o.get("data", {})]
    jobs = {job["job_name"]: job for job in yaml.safe_load(config["data"]["prometheus.yml"])["scrape_configs"]}
    assert list(jobs) == ["kubernetes-pods", "kubernetes-cadvisor", "opencost"]
    # Only OpenCost's own job keeps its targets' labels (its series name the pods they price), and it
    # scrapes OpenCost's Service alone; the kubelets are read directly, not through the node proxy.
    assert [name for name, job in jobs.items() if job.get("honor_labels")] == ["opencost"]
    assert jobs["opencost"]["static_configs"] == [{"targets": ["opencost.opencost.svc:9003"]}]
    (opencost_service,) = [o for o in rendered(stack_plan, "opencost") if o["kind"] == "Service"]
    assert (opencost_service["metadata"]["name"], opencost_service["metadata"]["namespace"]) == ("opencost", "opencost")
    assert 9003 in [p["port"] for p in opencost_service["spec"]["ports"]]
    cadvisor = jobs["kubernetes-cadvisor"]
    assert cadvisor["kubernetes_sd_configs"] == [{"role": "node"}] and "proxy" not in cadvisor["metrics_path"]


def test_only_its_readers_reach_the_prometheus_server(stack_plan):
    """The server answers the adapter's, OpenCost's and Grafana's pods only (labels as the pinned charts
    render them), and none of them can stop or reload it: test_prometheus_has_no_lifecycle_api."""
    (policy,) = [
        p
        for p in stack_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if p.inputs["metadata"]["name"] == "prometheus-server"
    ]
    server = [o for o in rendered(stack_plan, "prometheus") if o["kind"] == "Deployment"][0]
    assert (
        policy.inputs["spec"]["podSelector"]["matchLabels"].items()
        <= server["spec"]["template"]["metadata"]["labels"].items()
    )
    (rule,) = policy.inputs["spec"]["ingress"]
    readers = [
        (o["metadata"].get("namespace"), o["spec"]["template"]["metadata"]["labels"])
        for release in ("prometheus-adapter", "opencost", "grafana")
        for o in rendered(stack_plan, release)
        if o["kind"] == "Deployment"
    ]
    assert len(readers) == 3 and len(rule["from"]) == 3
    for peer, (namespace, labels) in zip(rule["from"], readers):
        assert peer["podSelector"]["matchLabels"].items() <= labels.items()
        assert peer.get("namespaceSelector", {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}) == {
            "matchLabels": {"kubernetes.io/metadata.name": namespace or "monitoring"}
        }
    assert rule["ports"] == [{"port": 9090, "protocol": "TCP"}]


def test_gpu_agents_are_privileged_only_in_their_own_namespace(stack_plan):
    namespaces = {
        n.inputs["metadata"]["name"]: n.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        for n in stack_plan.of_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces["monitoring"] == "baseline" and namespaces["gpu-monitoring"] == "privileged"
    assert namespaces["nvidia-device-plugin"] == "privileged"  # the device plugin: a GPU agent of its own
    denied = {
        p.inputs["metadata"]["namespace"]
        for p in stack_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if p.inputs["metadata"]["name"] == "default-deny"
    }
    assert {"monitoring", "gpu-monitoring", "nvidia-device-plugin"} <= denied
    assert releases(stack_plan)["dcgm-exporter"].inputs["namespace"] == "gpu-monitoring"
    assert {
        r.inputs["namespace"] for c, r in releases(stack_plan).items() if c in ("prometheus", "prometheus-adapter")
    } == {"monitoring"}


def test_the_api_server_verifies_the_metrics_adapter(stack_plan):
    """The chart's APIService skips TLS verification unless it is given a certificate: the stack's own CA
    signs the adapter's, for the Service name the chart renders; the key stays secret."""
    import base64

    objects = rendered(stack_plan, "prometheus-adapter")
    services = [o for o in objects if o["kind"] == "APIService"]
    tls = values_of(releases(stack_plan)["prometheus-adapter"])["tls"]
    assert services and all("insecureSkipTLSVerify" not in s["spec"] for s in services)
    assert all(base64.b64decode(s["spec"]["caBundle"]).decode() == tls["ca"] for s in services)
    (service,) = [o for o in objects if o["kind"] == "Service"]
    (csr,) = stack_plan.of_type("tls:index/certRequest:CertRequest")
    assert f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc" in csr.inputs["dnsNames"]
    (signed,) = stack_plan.of_type("tls:index/locallySignedCert:LocallySignedCert")
    assert signed.inputs["caCertPem"] == tls["ca"] and "server_auth" in signed.inputs["allowedUses"]
    # The key is secret, and only the key: the rest of the values stays readable for the gate to render.
    held = releases(stack_plan)["prometheus-adapter"].inputs["values"]["tls"]
    assert isinstance(held["key"], Secret) and not isinstance(held["ca"], Secret)


def test_the_monitoring_namespaces_deny_by_default_and_allow_what_scraping_needs(stack_plan):
    policies = {
        (p.inputs["metadata"]["namespace"], p.inputs["metadata"]["name"]): p.inputs["spec"]
        for p in stack_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    }
    for namespace in ("monitoring", "gpu-monitoring"):
        assert policies[(namespace, "default-deny")] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    server = policies[("monitoring", "prometheus-server")]
    scraped = {port["port"] for rule in server["egress"] for port in rule["ports"]}
    assert {8002, 9400} <= scraped  # Triton's metrics port and the DCGM exporter's
    (adapter,) = [o for o in rendered(stack_plan, "prometheus-adapter") if o["kind"] == "Deployment"]
    container_ports = {p["containerPort"] for p in adapter["spec"]["template"]["spec"]["containers"][0]["ports"]}
    (from_api,) = policies[("monitoring", "prometheus-adapter")]["ingress"]
    assert {p["port"] for p in from_api["ports"]} <= container_ports
    assert from_api["from"] == [{"ipBlock": {"cidr": stack_config(stack_plan.stack).network.vpc_cidr}}]
    # Both reach the API at the `kubernetes` Service address (judged before translation), not only the VPC's.
    api_ip = stack_config(stack_plan.stack).cluster.api_service_ip
    for name in ("prometheus-server", "prometheus-adapter"):
        assert any(
            {"ipBlock": {"cidr": f"{api_ip}/32"}} in rule.get("to", []) and rule["ports"][0]["port"] == 443
            for rule in policies[("monitoring", name)]["egress"]
        ), name
    (exporter,) = [o for o in rendered(stack_plan, "dcgm-exporter") if o["kind"] == "DaemonSet"]
    assert (
        policies[("gpu-monitoring", "dcgm-exporter")]["podSelector"]["matchLabels"].items()
        <= exporter["spec"]["template"]["metadata"]["labels"].items()
    )


def test_prometheus_has_no_lifecycle_api(stack_plan):
    """Without `--web.enable-lifecycle` any pod that reaches 9090 (the adapter, OpenCost, Grafana) can
    neither POST /-/quit nor /-/reload; Prometheus 3.6 rereads its changed config file by itself
    (cmd/prometheus/main.go at v3.6.0: auto-reload-config, --config.auto-reload-interval), so the chart's
    reloader sidecar is gone too."""
    (server,) = [
        o
        for o in rendered(stack_plan, "prometheus")
        if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("server")
    ]
    containers = {c["name"]: c for c in server["spec"]["template"]["spec"]["containers"]}
    assert list(containers) == ["prometheus-server"]
    args = containers["prometheus-server"]["args"]
    assert not [a for a in args if "lifecycle" in a]
    assert "--enable-feature=auto-reload-config" in args and "--config.auto-reload-interval=30s" in args


def test_prometheus_history_survives_a_node_on_the_stacks_own_claim(stack_plan):
    """Issue 37, item 4: the TSDB on a gp3 claim of a class the stack declares (a fresh EKS cluster has no
    default StorageClass), encrypted with the stack key, made where the server is first scheduled, after
    the EBS CSI driver, sized above the retention size the TSDB keeps to (so the kubelet never evicts it), and
    mounted by the chart at its version (the rendered Deployment, with the chart's Recreate strategy so
    the new pod can attach it). A stack without a system node in every zone keeps a bounded emptyDir."""
    config = stack_config(stack_plan.stack)
    prometheus = releases(stack_plan)["prometheus"]
    server = values_of(prometheus)["server"]
    kept_gib = int(server["retentionSize"].removesuffix("GB"))
    rendered = render_release(prometheus, config.cluster.kubernetes_version)
    deployment = next(o for o in rendered if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-server"))
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "storage-volume")
    claims = {r.inputs["metadata"]["name"]: r for r in stack_plan.of_type("kubernetes:core/v1:PersistentVolumeClaim")}
    if not config.monitoring.persistent:
        assert "persistentVolumeClaim" not in volume and int(volume["emptyDir"]["sizeLimit"][:-2]) == kept_gib + 2
        assert "prometheus-history" not in claims
        return
    assert volume["persistentVolumeClaim"]["claimName"] == "prometheus-history"
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    claim = claims["prometheus-history"]
    assert (
        claim.inputs["metadata"]["namespace"] == prometheus.inputs["namespace"] and claim.urn in prometheus.dependencies
    )
    assert int(claim.inputs["spec"]["resources"]["requests"]["storage"][:-2]) == kept_gib + 2
    classes = {r.inputs["metadata"]["name"]: r for r in stack_plan.of_type("kubernetes:storage.k8s.io/v1:StorageClass")}
    storage_class = classes[claim.inputs["spec"]["storageClassName"]]
    assert storage_class.urn in claim.dependencies
    assert storage_class.inputs["volumeBindingMode"] == "WaitForFirstConsumer"
    assert storage_class.inputs["provisioner"] == "ebs.csi.aws.com"
    parameters = storage_class.inputs["parameters"]
    assert parameters["type"] == "gp3" and parameters["encrypted"] == "true"
    keys = stack_plan.of_type("aws:kms/key:Key")
    assert len(keys) == 1 and parameters["kmsKeyId"].startswith(f"arn:aws:kms:{config.region}:")  # the stack key
    assert parameters["kmsKeyId"].rsplit("/", 1)[1].startswith(keys[0].id.rsplit("-", 1)[1])
    csi = next(r for r in stack_plan.of_type("aws:eks/addon:Addon") if r.inputs["addonName"] == "aws-ebs-csi-driver")
    assert csi.urn in storage_class.dependencies
