"""The dashboards the program provisions: every panel's query run on Prometheus's engine (promtool) over
one synthetic cluster, returning the series the panel is meant to draw."""

import json

from components.monitoring.dashboards import DATASOURCE_UID, ServedSet, dashboards, queries
from components.monitoring.rules import rule_files
from tests.prometheus import test_rules as run_tests

FILES = dashboards([ServedSet("triton-video", 100)], 6000, {"batch": 0.9})
GPU = 'exported_namespace="triton-video", exported_pod="t"'
SERIES = {
    f'DCGM_FI_DEV_GPU_UTIL{{namespace="gpu-monitoring", Hostname="n1", gpu="0", {GPU}}}': "60x70",
    f'DCGM_FI_DEV_FB_USED{{namespace="gpu-monitoring", Hostname="n1", gpu="0", {GPU}}}': "1024x70",
    'kube_node_labels{job="opencost", node="n1", label_seedance_io_node_group="online"}': "1x70",
    'kube_node_labels{job="opencost", node="s1"}': "1x70",
    'nv_inference_request_success{namespace="triton-video", model="m", pod="t"}': "0+60x70",
    'nv_inference_queue_duration_us{namespace="triton-video", model="m", pod="t"}': "0+6000x70",
    'nv_inference_request_summary_us{quantile="0.99", namespace="triton-video", model="m", pod="t"}': "30000x70",
    'nv_inference_request_summary_us{quantile="0.5", namespace="triton-video", model="m", pod="t"}': "10000x70",
    'node_cpu_hourly_cost{job="opencost", node="n1"}': "1x70",
    'node_ram_hourly_cost{job="opencost", node="n1"}': "0.5x70",
    'node_gpu_hourly_cost{job="opencost", node="n1"}': "10x70",
    'node_total_hourly_cost{job="opencost", node="n1"}': "2x70",
    'container_cpu_allocation{job="opencost", node="n1", namespace="triton-video", pod="t", '
    'container="triton"}': "2x70",
    'container_memory_allocation_bytes{job="opencost", node="n1", namespace="triton-video", pod="t", '
    'container="triton"}': f"{4 * 1073741824}x70",
    'container_gpu_allocation{job="opencost", node="n1", namespace="triton-video", pod="t", '
    'container="triton"}': "1x70",
    'container_cpu_allocation{job="opencost", node="n1", namespace="etl", pod="e", container="job"}': "1x70",
    'kube_pod_labels{job="opencost", namespace="triton-video", pod="t", label_team="video-ml"}': "1x70",
    'kube_pod_labels{job="opencost", namespace="etl", pod="e", label_team="data"}': "1x70",
    'container_cpu_usage_seconds_total{job="kubernetes-cadvisor", node="n1", namespace="triton-video", pod="t", '
    'container="triton"}': "0+30x70",
    'kube_node_status_capacity_cpu_cores{job="opencost", node="n1"}': "4x70",
    # The termination handler drained n1 for two spot interruptions and once for a scale-in.
    'actions_node_total{namespace="kube-system", node_name="n1", node_action="cordon-and-drain", '
    'node_status="success", node_event_id="spot-itn-event-61"}': "1x70",
    'actions_node_total{namespace="kube-system", node_name="n1", node_action="cordon-and-drain", '
    'node_status="success", node_event_id="spot-itn-event-62"}': "_x30 1x40",
    'actions_node_total{namespace="kube-system", node_name="n1", node_action="cordon-and-drain", '
    'node_status="success", node_event_id="asg-lifecycle-term-63"}': "1x70",
}
POOL = '{label_seedance_io_node_group="online"}'
TRITON = '{namespace="triton-video", model="m"}'
# Panel title -> the series (labels: value) its query returns at 65 minutes.
EXPECTED = {
    "GPU utilisation by pool": [(POOL, 60)],
    "GPU memory used by pool": [(POOL, 1024)],
    "GPU utilisation by pod": [(f"{{{GPU}}}", 60)],
    "GPU memory used by pod": [(f"{{{GPU}}}", 1024)],
    "Requests per second": [(f"seedance:triton_requests:rate5m{TRITON}", 1)],
    "Queue time (mean)": [(f"seedance:triton_queue_ms:mean5m{TRITON}", 0.1)],
    "P99 latency (anchor 50 ms)": [(f"seedance:triton_latency_p99_ms{TRITON}", 30)],
    "P50 latency": [(f"seedance:triton_latency_p50_ms{TRITON}", 10)],
    "Jitter of the P99 (anchor 3%)": [(f"seedance:triton_latency_jitter:ratio10m{TRITON}", 0)],
    "triton-video: replicas and the HPA's target": [("{}", 1)],
    "Cost per namespace, USD a day": [('{namespace="triton-video"}', 336), ('{namespace="etl"}', 24)],
    "Cost per team, USD a day": [('{team="video-ml"}', 336), ('{team="data"}', 24)],
    "Cost per 1,000 requests": [('seedance:cost_per_1000_requests_usd:1h{namespace="triton-video"}', 14 / 3.6)],
    "vCPU-seconds per request (P95 over 1 h)": [
        ('seedance:request_vcpu_seconds:p95_1h{namespace="triton-video"}', 0.5)
    ],
    "Node utilisation spread (rebalance above 0.32)": [("seedance:node_cpu_utilisation:cv", 0)],
    "Budget burn, USD a month at the current rate (budget 6,000)": [("{}", 1460)],
    "GPU nodes per group": [(POOL, 1)],
    "Spot interruptions drained per group, last day": [(f"seedance:spot_interruptions:count1d{POOL}", 2)],
    "batch: planned spot share at its maximum": [("{}", 0.9)],
}


def test_every_panel_query_returns_the_series_it_draws(tmp_path):
    shipped = queries(FILES)
    assert {title for _, title, _ in shipped} == set(EXPECTED)  # every panel is checked, and no other
    tests = [
        {
            "expr": expr,
            "eval_time": "65m",
            "exp_samples": [{"labels": labels, "value": value} for labels, value in EXPECTED[title]],
        }
        for _, title, expr in shipped
    ]
    done = run_tests(
        tmp_path,
        rule_files(6000, "the descheduler"),
        [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in SERIES.items()],
                "promql_expr_test": tests,
            }
        ],
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_dashboards_read_the_provisioned_datasource_and_draw_the_anchors():
    for name, text in FILES.items():
        document = json.loads(text)
        assert document["uid"] == name.removesuffix(".json")
        for panel in document["panels"]:
            assert panel["datasource"]["uid"] == DATASOURCE_UID, panel["title"]
    serving = json.loads(FILES["seedance-serving.json"])
    (p99,) = [p for p in serving["panels"] if p["title"].startswith("P99")]
    assert [s["value"] for s in p99["fieldConfig"]["defaults"]["thresholds"]["steps"]] == [None, 50]
