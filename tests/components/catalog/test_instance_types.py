import pytest

from components.catalog.instance_types import gpu_instance_type, gpu_instance_types, shared_network_layers

FAMILY_GPUS = {"g4dn": "T4", "g5": "A10G", "g6": "L4", "g6e": "L40S", "p3": "V100", "p4d": "A100", "p5": "H100"}


def test_table_rows_are_consistent():
    for row in gpu_instance_types().values():
        assert row.gpu == FAMILY_GPUS[row.name.split(".")[0]]
        assert row.gpus in (1, 4, 8) and row.vcpus >= 4 * row.gpus and row.memory_gib >= row.vcpus * 2
        # MIG exists only on A100/H100-class GPUs.
        assert row.mig == (row.gpu in ("A100", "H100"))


def test_lookup_of_known_and_unknown_types():
    p5 = gpu_instance_type("p5.48xlarge")
    assert (p5.gpus, p5.gpu_memory_gib, p5.has_instance_store, p5.instance_store_disks) == (8, 80, True, 8)
    with pytest.raises(ValueError, match="'m7i.large' is not a known GPU instance type; known: g4dn"):
        gpu_instance_type("m7i.large")


def test_only_the_older_generation_lacks_nitro_and_instance_store():
    older = {row.name for row in gpu_instance_types().values() if not row.nitro}
    assert (
        older
        == {row.name for row in gpu_instance_types().values() if not row.has_instance_store}
        == {"p3.2xlarge", "p3.8xlarge"}
    )


def test_a_pool_has_a_network_depth_only_if_all_its_types_report_the_same_one():
    """EC2 reports instance topology for g6e and p types (3 layers), not for g6 and g5."""
    assert shared_network_layers(["g6e.12xlarge"]) == 3
    assert shared_network_layers(["p4d.24xlarge", "p5.48xlarge"]) == 3
    assert shared_network_layers(["g6e.12xlarge", "g6.12xlarge"]) == 0  # g6 reports none
    assert shared_network_layers(["g5.12xlarge"]) == 0
    reporting = {t.name for t in gpu_instance_types().values() if t.network_node_layers}
    assert reporting == {"g6e.xlarge", "g6e.12xlarge", "p4d.24xlarge", "p5.48xlarge"}
