"""Prometheus's size follows the series the stack can hold, and the cost loop's share of the system nodes."""

from components.monitoring.sizing import BASE_MIB, KIB_PER_SERIES, cost_loop_monthly_usd, series_estimate


def test_memory_grows_with_the_series_and_a_bigger_stack_holds_more():
    small = series_estimate(system_nodes=2, gpu_nodes=2, gpus=2, triton_pods=2, namespaces=10)
    large = series_estimate(system_nodes=6, gpu_nodes=30, gpus=120, triton_pods=20, namespaces=30)
    assert small.total < large.total and small.memory_request_mib < large.memory_request_mib
    assert large.memory_request_mib == BASE_MIB + -(-large.total * KIB_PER_SERIES // 1024)
    assert large.memory_limit_mib > large.memory_request_mib
    # GPUs bring DCGM's series, Triton pods their models' quantiles.
    assert series_estimate(system_nodes=2, gpu_nodes=2, gpus=8, triton_pods=2, namespaces=10).by_source[
        "DCGM exporter"] == 4 * small.by_source["DCGM exporter"]


def test_the_cost_loop_costs_its_requests_and_prometheus_only_what_it_grows():
    small = series_estimate(system_nodes=1, gpu_nodes=0, gpus=0, triton_pods=0, namespaces=1)
    parts = cost_loop_monthly_usd(small)
    assert all(usd > 0 for part, usd in parts.items() if not part.startswith("prometheus"))
    assert parts["prometheus (memory sized from the series)"] < cost_loop_monthly_usd(
        series_estimate(system_nodes=10, gpu_nodes=100, gpus=400, triton_pods=100, namespaces=50))[
        "prometheus (memory sized from the series)"]
