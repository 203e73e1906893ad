"""The pending-pod arithmetic, on worked examples."""

from components.serving.capacity import SURGE_PODS, ServingDemand, group_capacity, pods_per_node

TRITON = ServingDemand(name="video", gpus=1, cpu=3, memory_gib=12, hpa_min=2, hpa_max=20, canary=1)


def test_a_1_gpu_4_vcpu_node_holds_one_3_vcpu_replica_even_when_its_gpu_is_shared():
    # g6.xlarge: 4 vCPUs (3 usable), 16 GiB (13.6 usable), 1 GPU x 4 time-slices
    assert pods_per_node(["g6.xlarge"], 1, TRITON) == (1, "GPUs on g6.xlarge")
    assert pods_per_node(["g6.xlarge"], 4, TRITON) == (1, "vCPUs on g6.xlarge")
    small = ServingDemand(name="s", gpus=1, cpu=0.5, memory_gib=2, hpa_min=1, hpa_max=4, canary=0)
    assert pods_per_node(["g6.xlarge"], 4, small) == (4, "GPUs on g6.xlarge")


def test_the_smallest_type_bounds_a_mixed_group():
    big = ServingDemand(name="b", gpus=1, cpu=3, memory_gib=20, hpa_min=1, hpa_max=1, canary=0)
    # 20 GiB fits g6e.xlarge (32 GiB) but not g6.xlarge (16 GiB): the group cannot promise it anywhere
    assert pods_per_node(["g6e.xlarge", "g6.xlarge"], 1, big) == (0, "memory on g6.xlarge")


def test_needed_counts_hpa_max_surge_and_canary_against_max_nodes():
    capacity = group_capacity("online", ["g6.xlarge"], 1, 1, 24, [TRITON])
    assert (capacity.max_nodes, capacity.pods_per_node, capacity.schedulable) == (24, 1, 24)
    assert capacity.needed == 20 + SURGE_PODS + 1 and capacity.fits
    assert not group_capacity("online", ["g6.xlarge"], 1, 1, 21, [TRITON]).fits
