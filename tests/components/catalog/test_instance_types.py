import pytest

from components.catalog.instance_types import gpu_instance_type, gpu_instance_types

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
