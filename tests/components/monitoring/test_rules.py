"""Every rule the program ships, on Prometheus's engine (promtool): each alert fires at its anchor and
not below it, and each recorded series comes out as the dashboards and the cost gate read it."""

from components.monitoring.rules import rule_files
from tests.prometheus import check_rules
from tests.prometheus import test_rules as run_tests

BUDGET = 6000
REBALANCE = "the descheduler's LowNodeUtilization"
FILES = rule_files(BUDGET, REBALANCE)
NS = 'namespace="triton-video"'


def _alert(name, labels, summary, **annotations):
    return {"exp_labels": {"alertname": name, **labels}, "exp_annotations": {"summary": summary, **annotations}}


def _run(tmp_path, tests):
    done = run_tests(tmp_path, FILES, tests)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_rules_load(tmp_path):
    done = check_rules(tmp_path, FILES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_p99_above_50_ms_pages_and_50_does_not(tmp_path):
    _run(
        tmp_path,
        [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": f'nv_inference_request_summary_us{{quantile="0.99", {NS}, model="fast", pod="a"}}',
                        "values": "50000x30",
                    },
                    {
                        "series": f'nv_inference_request_summary_us{{quantile="0.99", {NS}, model="slow", pod="a"}}',
                        "values": "51000x30",
                    },
                    {
                        "series": f'nv_inference_request_summary_us{{quantile="0.99", {NS}, model="slow", pod="b"}}',
                        "values": "20000x30",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "9m", "alertname": "TritonP99LatencyHigh", "exp_alerts": []},
                    {
                        "eval_time": "15m",
                        "alertname": "TritonP99LatencyHigh",
                        "exp_alerts": [
                            _alert(
                                "TritonP99LatencyHigh",
                                {"namespace": "triton-video", "model": "slow", "severity": "page"},
                                "triton-video/slow: P99 51.0 ms, above the 50 ms anchor for 10 minutes",
                            )
                        ],
                    },
                    # A pod slow for half an hour is flagged for cost review, by name; the fast pod of the same
                    # model is not.
                    {"eval_time": "29m", "alertname": "HighLatencyPodCostReview", "exp_alerts": []},
                    {
                        "eval_time": "30m",
                        "alertname": "HighLatencyPodCostReview",
                        "exp_alerts": [
                            _alert(
                                "HighLatencyPodCostReview",
                                {"namespace": "triton-video", "pod": "a", "severity": "cost-review"},
                                "triton-video/a serves slowly for 30 minutes: review what it costs (its GPU, its "
                                "replicas) against what it delivers",
                            )
                        ],
                    },
                ],
            }
        ],
    )


def test_jitter_above_3_percent_fires_and_1_5_percent_does_not(tmp_path):
    # Alternating minute to minute: 20 and 22 ms is a 4.8 % spread of the P99, 20 and 20.6 ms 1.5 %.
    _run(
        tmp_path,
        [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": f'nv_inference_request_summary_us{{quantile="0.99", {NS}, model="shaky", pod="a"}}',
                        "values": " ".join(["20000 22000"] * 20),
                    },
                    {
                        "series": f'nv_inference_request_summary_us{{quantile="0.99", {NS}, model="steady", pod="a"}}',
                        "values": " ".join(["20000 20600"] * 20),
                    },
                    # Just below the anchor: about 2.9 %.
                    {
                        "series": f'nv_inference_request_summary_us{{quantile="0.99", {NS}, model="near", pod="a"}}',
                        "values": " ".join(["20000 21200"] * 20),
                    },
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "30m",
                        "alertname": "TritonLatencyJitterHigh",
                        "exp_alerts": [
                            _alert(
                                "TritonLatencyJitterHigh",
                                {"namespace": "triton-video", "model": "shaky", "severity": "ticket"},
                                "triton-video/shaky: the P99 varies by 0.05 of itself, above 0.03",
                            )
                        ],
                    }
                ],
                "promql_expr_test": [
                    {
                        "expr": 'round(seedance:triton_latency_jitter:ratio10m{model="steady"}, 0.001)',
                        "eval_time": "30m",
                        "exp_samples": [{"labels": '{namespace="triton-video", model="steady"}', "value": 0.015}],
                    }
                ],
            }
        ],
    )


def test_node_utilisation_spread_above_0_32_fires_with_what_rebalances(tmp_path):
    def node(name, cores_busy, job="kubernetes-cadvisor"):
        return [
            {
                "series": f'container_cpu_usage_seconds_total{{job="{job}", node="{name}", namespace="x", pod="p", '
                f'container="c"}}',
                "values": f"0+{cores_busy * 60:g}x60",
            },
            {"series": f'kube_node_status_capacity_cpu_cores{{job="opencost", node="{name}"}}', "values": "4x60"},
        ]

    def spread(busy, idle):  # two nodes at these utilisations: their coefficient of variation
        return abs(busy - idle) / (busy + idle)

    _run(
        tmp_path,
        [
            {
                "interval": "1m",
                "input_series": node("busy", 3.6) + node("idle", 0.4),
                "alert_rule_test": [
                    {
                        "eval_time": "40m",
                        "alertname": "NodeUtilisationImbalanced",
                        "exp_alerts": [
                            _alert(
                                "NodeUtilisationImbalanced",
                                {"severity": "ticket"},
                                "node CPU utilisation spread (coefficient of variation) 0.80 above 0.32",
                                rebalance=REBALANCE,
                            )
                        ],
                    }
                ],
            },
            # Just above and just below the anchor: 0.33 fires, 0.31 does not.
            {
                "interval": "1m",
                "input_series": node("a", 2.66) + node("b", 1.34),
                "alert_rule_test": [
                    {
                        "eval_time": "40m",
                        "alertname": "NodeUtilisationImbalanced",
                        "exp_alerts": [
                            _alert(
                                "NodeUtilisationImbalanced",
                                {"severity": "ticket"},
                                "node CPU utilisation spread (coefficient of variation) "
                                f"{spread(2.66, 1.34):.2f} above 0.32",
                                rebalance=REBALANCE,
                            )
                        ],
                    }
                ],
            },
            {
                "interval": "1m",
                "input_series": node("a", 2.62) + node("b", 1.38),
                "alert_rule_test": [{"eval_time": "40m", "alertname": "NodeUtilisationImbalanced", "exp_alerts": []}],
            },
            # Series another job publishes under the same names count for nothing.
            {
                "interval": "1m",
                "input_series": node("a", 2.0) + node("b", 1.6) + node("c", 3.9, "kubernetes-pods"),
                "alert_rule_test": [{"eval_time": "40m", "alertname": "NodeUtilisationImbalanced", "exp_alerts": []}],
                "promql_expr_test": [
                    {
                        "expr": "round(seedance:node_cpu_utilisation:cv, 0.01)",
                        "eval_time": "40m",
                        "exp_samples": [{"labels": "{}", "value": 0.11}],
                    }
                ],
            },
        ],
    )


def test_memory_per_vcpu_far_from_four_is_flagged_and_within_two_and_eight_is_not(tmp_path):
    def pod(name, gib, cpus):
        return [
            {
                "series": f'kube_pod_container_resource_requests{{job="opencost", resource="{kind}", namespace="x", '
                f'pod="{name}", container="c"}}',
                "values": f"{value}x70",
            }
            for kind, value in (("memory", gib * 1073741824), ("cpu", cpus))
        ]

    pods = (
        pod("thin", 3.8, 2)
        + pod("edge-low", 4.2, 2)
        + pod("packed", 8, 2)
        + pod("edge-high", 15.8, 2)
        + pod("fat", 16.2, 2)
    )
    _run(
        tmp_path,
        [
            {
                "interval": "1m",
                "input_series": pods,
                "alert_rule_test": [
                    {
                        "eval_time": "65m",
                        "alertname": "MemoryPerVcpuFarFromOneToFour",
                        "exp_alerts": [
                            _alert(
                                "MemoryPerVcpuFarFromOneToFour",
                                {"namespace": "x", "pod": "fat", "severity": "cost-review"},
                                "x/fat requests 8.1 GiB per vCPU; the packing anchor is 4",
                            ),
                            _alert(
                                "MemoryPerVcpuFarFromOneToFour",
                                {"namespace": "x", "pod": "thin", "severity": "cost-review"},
                                "x/thin requests 1.9 GiB per vCPU; the packing anchor is 4",
                            ),
                        ],
                    }
                ],
            }
        ],
    )


def test_an_idle_billed_gpu_node_and_a_budget_overrun_fire_and_their_neighbours_do_not(tmp_path):
    def cost(per_node):  # two nodes: $9/h is $6,570 a month, above the $6,000 budget; $8/h ($5,840) is not
        return [
            {"series": f'node_total_hourly_cost{{job="opencost", node="{node}"}}', "values": f"{per_node}x90"}
            for node in "ab"
        ]

    _run(
        tmp_path,
        [
            {
                "interval": "1m",
                "input_series": [
                    {
                        "series": 'DCGM_FI_DEV_GPU_UTIL{namespace="gpu-monitoring", Hostname="idle", gpu="0"}',
                        "values": "4.9x70",
                    },
                    {
                        "series": 'DCGM_FI_DEV_GPU_UTIL{namespace="gpu-monitoring", Hostname="busy", gpu="0"}',
                        "values": "5x70",
                    },
                    # A pod elsewhere publishing the exporter's names is not the exporter.
                    {
                        "series": 'DCGM_FI_DEV_GPU_UTIL{namespace="video-api", Hostname="busy", gpu="0"}',
                        "values": "0x70",
                    },
                    *cost(4.5),
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "35m",
                        "alertname": "GpuIdleWhileBilled",
                        "exp_alerts": [
                            _alert(
                                "GpuIdleWhileBilled",
                                {"Hostname": "idle", "severity": "cost-review"},
                                "idle: GPUs 5% busy for 30 minutes, billed by the hour",
                            )
                        ],
                    },
                    {"eval_time": "59m", "alertname": "BudgetBurnRateHigh", "exp_alerts": []},
                    {
                        "eval_time": "61m",
                        "alertname": "BudgetBurnRateHigh",
                        "exp_alerts": [
                            _alert(
                                "BudgetBurnRateHigh",
                                {"severity": "ticket"},
                                "the cluster runs at 6.57k USD a month, above the 6,000 budget (the budget's own "
                                "alerts act at 85 and 95 %)",
                            )
                        ],
                    },
                ],
            },
            # $8.20/h ($5,986 a month) is just below the budget; a pod publishing the name is not OpenCost.
            {
                "interval": "1m",
                "input_series": cost(4.1)
                + [{"series": 'node_total_hourly_cost{job="kubernetes-pods", node="x"}', "values": "99x90"}],
                "alert_rule_test": [{"eval_time": "85m", "alertname": "BudgetBurnRateHigh", "exp_alerts": []}],
            },
        ],
    )


def test_cost_is_attributed_to_namespaces_teams_and_requests(tmp_path):
    """A node at $1/vCPU-h, $0.5/GiB-h and $10/GPU-h; the Triton pod holds 2 vCPUs, 4 GiB and a GPU and
    served 3,600 requests in the hour; a CPU-only pod of another team holds 1 vCPU."""
    oc = 'job="opencost"'
    series = [
        (f'node_cpu_hourly_cost{{{oc}, node="n1", instance_type="g6.xlarge"}}', "1x70"),
        (f'node_ram_hourly_cost{{{oc}, node="n1", instance_type="g6.xlarge"}}', "0.5x70"),
        (f'node_gpu_hourly_cost{{{oc}, node="n1", instance_type="g6.xlarge"}}', "10x70"),
        (f'container_cpu_allocation{{{oc}, node="n1", namespace="triton-video", pod="t", container="triton"}}', "2x70"),
        (
            f'container_memory_allocation_bytes{{{oc}, node="n1", namespace="triton-video", pod="t", '
            'container="triton"}',
            f"{4 * 1073741824}x70",
        ),
        (f'container_gpu_allocation{{{oc}, node="n1", namespace="triton-video", pod="t", container="triton"}}', "1x70"),
        (f'container_cpu_allocation{{{oc}, node="n1", namespace="etl", pod="e", container="job"}}', "1x70"),
        (f'kube_pod_labels{{{oc}, namespace="triton-video", pod="t", label_team="video-ml"}}', "1x70"),
        (f'kube_pod_labels{{{oc}, namespace="etl", pod="e", label_team="data"}}', "1x70"),
        ('nv_inference_request_success{namespace="triton-video", model="m", pod="t"}', "0+60x70"),
        (
            'container_cpu_usage_seconds_total{job="kubernetes-cadvisor", node="n1", namespace="triton-video", '
            'pod="t", container="triton"}',
            "0+30x70",
        ),
    ]
    _run(
        tmp_path,
        [
            {
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in series],
                "promql_expr_test": [
                    {
                        "expr": "seedance:namespace_cost_usd:hourly",
                        "eval_time": "65m",
                        "exp_samples": [
                            {"labels": 'seedance:namespace_cost_usd:hourly{namespace="triton-video"}', "value": 14},
                            {"labels": 'seedance:namespace_cost_usd:hourly{namespace="etl"}', "value": 1},
                        ],
                    },
                    {
                        "expr": "seedance:team_cost_usd:hourly",
                        "eval_time": "65m",
                        "exp_samples": [
                            {"labels": 'seedance:team_cost_usd:hourly{team="video-ml"}', "value": 14},
                            {"labels": 'seedance:team_cost_usd:hourly{team="data"}', "value": 1},
                        ],
                    },
                    {
                        "expr": "seedance:cost_per_1000_requests_usd:1h",
                        "eval_time": "65m",
                        "exp_samples": [
                            {
                                "labels": 'seedance:cost_per_1000_requests_usd:1h{namespace="triton-video"}',
                                "value": 14 / 3.6,
                            }
                        ],
                    },
                    # Half a vCPU busy for one request a second: 0.5 vCPU-seconds per request.
                    {
                        "expr": "seedance:request_vcpu_seconds:p95_1h",
                        "eval_time": "65m",
                        "exp_samples": [
                            {"labels": 'seedance:request_vcpu_seconds:p95_1h{namespace="triton-video"}', "value": 0.5}
                        ],
                    },
                ],
            }
        ],
    )
