"""Prometheus's size follows the series the stack can hold, and the cost loop's share of the system nodes."""

from components.monitoring.sizing import BASE_MIB, KIB_PER_SERIES, cost_loop_monthly_usd, series_estimate


def test_memory_grows_with_the_series_and_a_bigger_stack_holds_more():
    small = series_estimate(system_nodes=2, gpu_nodes=2, gpus=2, triton_pods=2, namespaces=10)
    large = series_estimate(system_nodes=6, gpu_nodes=30, gpus=120, triton_pods=20, namespaces=30)
    assert small.total < large.total and small.memory_request_mib < large.memory_request_mib
    assert large.memory_request_mib == BASE_MIB + -(-large.total * KIB_PER_SERIES // 1024)
    assert large.memory_limit_mib > large.memory_request_mib
    # GPUs bring DCGM's series, Triton pods their models' quantiles.
    assert (
        series_estimate(system_nodes=2, gpu_nodes=2, gpus=8, triton_pods=2, namespaces=10).by_source["DCGM exporter"]
        == 4 * small.by_source["DCGM exporter"]
    )


def test_the_cost_loop_costs_its_requests_and_prometheus_only_what_it_grows():
    small = series_estimate(system_nodes=1, gpu_nodes=0, gpus=0, triton_pods=0, namespaces=1)
    parts = cost_loop_monthly_usd(small)
    assert all(usd > 0 for part, usd in parts.items() if not part.startswith("prometheus"))
    assert (
        parts["prometheus (memory sized from the series)"]
        < cost_loop_monthly_usd(
            series_estimate(system_nodes=10, gpu_nodes=100, gpus=400, triton_pods=100, namespaces=50)
        )["prometheus (memory sized from the series)"]
    )


def test_the_history_volume_holds_the_retention_at_two_bytes_a_sample_with_room_for_the_wal():
    from components.monitoring.config import MonitoringConfig
    from components.monitoring.sizing import MIN_HISTORY_GIB, history_volume_gib

    large = series_estimate(system_nodes=20, gpu_nodes=500, gpus=4000, triton_pods=400, namespaces=200)
    samples = large.total * 720 * 3600 / 15  # a month at one sample every 15 s
    gib = large.history_gib(720, 15)
    assert gib == -(-samples * 2 * 1.25 // 2**30) + 2 and gib > MIN_HISTORY_GIB
    assert large.history_gib(720, 30) < gib and large.history_gib(360, 15) < gib  # fewer samples, less disk
    small = series_estimate(system_nodes=1, gpu_nodes=0, gpus=0, triton_pods=0, namespaces=1)
    assert small.history_gib(2, 60) == MIN_HISTORY_GIB
    assert history_volume_gib(MonitoringConfig(retention_hours=720), large) == gib
    assert history_volume_gib(MonitoringConfig(storage_gib=500), large) == 500  # the config's size wins
