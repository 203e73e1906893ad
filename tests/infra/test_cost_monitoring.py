"""The running cost loop in every stack's plan, rendered with the pinned charts: Alertmanager delivers
Prometheus's alerts to the stack's topic, OpenCost prices allocations from the capacity plans, Grafana
serves the dashboards by port-forward only, and Prometheus is sized from the series it will hold."""

import json

import yaml

from components.monitoring.rules import rule_files
from components.pricing.prices import HOURS_PER_MONTH
from seedance_client.engine import Secret
from tests.helm import render_release, values_of
from tests.policy_evaluation import Request, allows
from tests.stacks import stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"


def release(plan, chart):
    (found,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == chart]
    return found


def rendered(plan, chart):
    return render_release(release(plan, chart), stack_config(plan.stack).cluster.kubernetes_version)


def test_alertmanager_delivers_the_rules_alerts_to_the_stacks_topic(stack_plan):
    config = stack_config(stack_plan.stack)
    objects = rendered(stack_plan, "prometheus")
    server = next(o for o in objects if o["kind"] == "ConfigMap" and "prometheus.yml" in o.get("data", {}))
    prometheus = yaml.safe_load(server["data"]["prometheus.yml"])
    assert prometheus["alerting"]["alertmanagers"]  # the chart points the server at its Alertmanager
    shipped = rule_files(config.budget.monthly_usd, "x")
    assert yaml.safe_load(server["data"]["recording_rules.yml"]) == shipped["recording_rules.yml"]
    budget = next(
        r
        for g in yaml.safe_load(server["data"]["alerting_rules.yml"])["groups"]
        for r in g["rules"]
        if r["alert"] == "BudgetBurnRateHigh"
    )
    assert budget["expr"].endswith(f"> {config.budget.monthly_usd:g}")  # the stack's own budget
    alert_names = {
        r["alert"] for g in yaml.safe_load(server["data"]["alerting_rules.yml"])["groups"] for r in g["rules"]
    }
    assert {
        "TritonP99LatencyHigh",
        "GpuIdleWhileBilled",
        "BudgetBurnRateHigh",
        "NodeUtilisationImbalanced",
    } <= alert_names
    manager = next(o for o in objects if o["kind"] == "ConfigMap" and "alertmanager.yml" in o.get("data", {}))
    receiver = yaml.safe_load(manager["data"]["alertmanager.yml"])["receivers"][0]["sns_configs"][0]
    (topic,) = stack_plan.of_type("aws:sns/topic:Topic")
    assert receiver["topic_arn"].endswith(f":{topic.id}") and receiver["sigv4"] == {"region": config.region}
    # It signs as its own role, which its service account alone assumes and which may publish there only.
    account = next(o for o in objects if o["kind"] == "ServiceAccount" and "alertmanager" in o["metadata"]["name"])
    (role,) = [r for r in stack_plan.of_type("aws:iam/role:Role") if r.name.endswith("metrics-alertmanager")]
    assert account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].endswith(f"/{role.id}")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Condition"]["StringEquals"]
    assert f"system:serviceaccount:monitoring:{account['metadata']['name']}" in trust.values()
    (policy,) = [
        p for p in stack_plan.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("alertmanager-publish")
    ]
    document = json.loads(policy.inputs["policy"])
    assert allows(document, Request("sns:Publish", receiver["topic_arn"]))
    assert not allows(document, Request("sns:Publish", receiver["topic_arn"] + "-other"))
    # No claim for a volume: EKS has no default StorageClass, and a Pending Alertmanager would drop alerts.
    assert not [o for o in objects if o["kind"] == "StatefulSet" and o["spec"].get("volumeClaimTemplates")]


def test_opencost_prices_gpus_from_the_plans_below_on_demand_when_they_run_spot(mixed_stack_plan):
    from components.catalog.instance_types import gpu_instance_type
    from components.cost.estimate import catalog_for

    config = stack_config(mixed_stack_plan.stack)
    model = values_of(release(mixed_stack_plan, "opencost"))["opencost"]["customPricing"]["costModel"]
    gpu_hourly = float(model["GPU"]) / HOURS_PER_MONTH
    catalog = catalog_for(config.region)
    # The cheapest on-demand GPU-hour any group could buy, less its host's CPU and memory at the same rates.
    on_demand = min(
        (
            catalog.instance_hour(t)
            - gpu_instance_type(t).vcpus * float(model["CPU"]) / HOURS_PER_MONTH
            - gpu_instance_type(t).memory_gib * float(model["RAM"]) / HOURS_PER_MONTH
        )
        / gpu_instance_type(t).gpus
        for g in config.gpu_node_groups
        for t in g.instance_types
    )
    spot = any(g["spot_types"] for g in mixed_stack_plan.outputs["reports"]["capacity"]["groups"].values())
    assert 0 < gpu_hourly
    if spot:
        assert gpu_hourly < on_demand  # spot capacity is not priced at on-demand
    objects = rendered(mixed_stack_plan, "opencost")
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["PROMETHEUS_SERVER_ENDPOINT"].startswith("http://prometheus-server.monitoring.svc")
    assert [c["name"] for c in deployment["spec"]["template"]["spec"]["containers"]] == ["opencost"]  # no UI


def _restricted(pod_spec):
    """Pod Security Standards `restricted` for one pod (what its namespace enforces)."""
    pod_context = pod_spec.get("securityContext", {})
    for container in (pod_spec.get("initContainers") or []) + pod_spec["containers"]:
        context = {**pod_context, **container.get("securityContext", {})}
        assert context.get("runAsNonRoot") is True, container["name"]
        assert context.get("allowPrivilegeEscalation") is False, container["name"]
        assert "ALL" in context.get("capabilities", {}).get("drop", []), container["name"]
        assert context.get("seccompProfile", {}).get("type") == "RuntimeDefault", container["name"]
    assert not any(v.get("hostPath") for v in pod_spec.get("volumes") or [])
    assert not pod_spec.get("hostNetwork")


def test_opencost_and_grafana_run_restricted_and_grafana_is_reachable_only_by_port_forward(stack_plan):
    namespaces = {
        n.inputs["metadata"]["name"]: n.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        for n in stack_plan.of_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces["opencost"] == namespaces["grafana"] == "restricted"
    for chart in ("opencost", "grafana"):
        for deployment in [o for o in rendered(stack_plan, chart) if o["kind"] == "Deployment"]:
            _restricted(deployment["spec"]["template"]["spec"])
    objects = rendered(stack_plan, "grafana")
    assert not [o for o in objects if o["kind"] in ("Ingress", "HTTPRoute")]
    assert all(o["spec"].get("type", "ClusterIP") == "ClusterIP" for o in objects if o["kind"] == "Service")
    policies = {
        (p.inputs["metadata"]["namespace"], p.inputs["metadata"]["name"]): p.inputs["spec"]
        for p in stack_plan.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
    }
    assert policies[("grafana", "default-deny")] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert "ingress" not in policies[("grafana", "grafana")]  # nothing in: port-forward goes through the kubelet
    # The admin password is the chart's random one, in the cluster: never a value the stack holds.
    values = values_of(release(stack_plan, "grafana"))
    assert "adminPassword" not in values and "existingSecret" not in values.get("admin", {})
    assert not isinstance(release(stack_plan, "grafana").inputs["values"], Secret)
    (secret,) = [o for o in objects if o["kind"] == "Secret"]
    assert "admin-password" in secret["data"]


def test_grafana_mounts_the_generated_dashboards_and_reads_the_stacks_prometheus(stack_plan):
    (boards,) = [
        c
        for c in stack_plan.of_type("kubernetes:core/v1:ConfigMap")
        if c.inputs["metadata"]["name"] == "seedance-dashboards"
    ]
    assert set(boards.inputs["data"]) == {"seedance-gpus.json", "seedance-serving.json", "seedance-cost.json"}
    (deployment,) = [o for o in rendered(stack_plan, "grafana") if o["kind"] == "Deployment"]
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert any(v.get("configMap", {}).get("name") == "seedance-dashboards" for v in volumes.values())
    assert not deployment["spec"]["template"]["spec"].get("initContainers")  # no download, no chown
    source = values_of(release(stack_plan, "grafana"))["datasources"]["datasources.yaml"]["datasources"][0]
    assert source["url"] == stack_config(stack_plan.stack).monitoring.prometheus_url


def test_prometheus_memory_is_sized_from_the_series_it_will_hold(stack_plan):
    from components.stack.derivation import monitoring_series

    series = monitoring_series(stack_config(stack_plan.stack))
    (server,) = [
        o for o in rendered(stack_plan, "prometheus") if o["kind"] == "Deployment" and "server" in o["metadata"]["name"]
    ]
    container = next(c for c in server["spec"]["template"]["spec"]["containers"] if c["name"] == "prometheus-server")
    assert container["resources"]["requests"]["memory"] == f"{series.memory_request_mib}Mi"
    assert series.memory_request_mib >= 512 + series.total * 4 // 1024
