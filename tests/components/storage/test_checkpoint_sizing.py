"""Checkpoint volume sizing: the source's case, a small gp3 case, and every limit at its boundary."""

import pytest

from components.catalog.instance_types import gpu_instance_type
from components.common.validation import FieldError
from components.pricing.ebs import ebs_monthly
from components.pricing.prices import SnapshotPriceSource
from components.storage.checkpoint_sizing import CheckpointProfile, requirement, size_checkpoint_volume

PRICES = SnapshotPriceSource().service_prices("us-east-1")
NITRO = [gpu_instance_type("g6e.12xlarge")]
XEN = [gpu_instance_type("p3.8xlarge")]


def profile(**changes):
    values = dict(
        checkpoint_gb=1.2,
        interval_seconds=300,
        max_write_seconds=3,
        random_read_iops=64_000,
        max_latency_ms=1,
        retention=3,
    )
    return CheckpointProfile(**{**values, **changes})


def test_the_sources_job_gets_io2():
    decision = size_checkpoint_volume(profile(), PRICES, NITRO)
    assert decision.chosen.volume_type == "io2"
    assert (decision.chosen.size_gib, decision.chosen.iops) == (64, 64_000)  # 1,000 IOPS per GiB at most
    assert decision.chosen.monthly_usd == pytest.approx(64 * 0.125 + 32_000 * 0.065 + 32_000 * 0.0455)
    gp3 = decision.candidates[0]
    assert not gp3.meets and "single-digit ms" in gp3.why_not
    assert "gp3 does not meet the profile" in decision.reason


def test_a_small_job_gets_the_cheaper_gp3():
    small = profile(
        checkpoint_gb=0.2, interval_seconds=1800, max_write_seconds=60, random_read_iops=2_000, max_latency_ms=20
    )
    decision = size_checkpoint_volume(small, PRICES, NITRO)
    assert decision.chosen.volume_type == "gp3" and decision.chosen.iops == 3_000  # included in the price
    assert decision.chosen.size_gib == 6  # 3,000 IOPS need 6 GiB at 500 IOPS per GiB
    assert decision.chosen.monthly_usd == pytest.approx(6 * 0.08)
    assert "cheaper than io2" in decision.reason


def test_requirement_from_the_profile():
    need = requirement(profile())
    assert need.write_mibps == pytest.approx(1.2e9 / 2**20 / 3)
    assert need.capacity_gib == 6  # 4 checkpoints (3 kept + 1 being written) x 1.2 GB x 1.2 headroom
    assert need.iops == 64_000


@pytest.mark.parametrize("iops, gp3_meets", [(80_000, True), (80_001, False)])
def test_gp3_up_to_its_iops_limit(iops, gp3_meets):
    decision = size_checkpoint_volume(profile(random_read_iops=iops, max_latency_ms=10), PRICES, NITRO)
    assert decision.candidates[0].meets is gp3_meets
    assert decision.chosen.volume_type == ("gp3" if gp3_meets else "io2")


def test_io2_limit_of_256000_iops_is_an_error_past_it():
    assert size_checkpoint_volume(profile(random_read_iops=256_000), PRICES, NITRO).chosen.iops == 256_000
    with pytest.raises(FieldError) as error:
        size_checkpoint_volume(profile(random_read_iops=256_001), PRICES, NITRO)
    assert error.value.field == "random_read_iops" and "256,000" in error.value.allowed


def test_above_32000_iops_needs_nitro_instances():
    assert size_checkpoint_volume(profile(random_read_iops=32_000), PRICES, XEN).chosen.iops == 32_000
    with pytest.raises(FieldError) as error:
        size_checkpoint_volume(profile(random_read_iops=32_001), PRICES, XEN)
    assert error.value.field == "random_read_iops"
    assert "p3.8xlarge are not" in error.value.allowed and "Nitro" in error.value.allowed


def test_throughput_and_capacity_limits():
    with pytest.raises(FieldError, match="at most 4,000 MiB/s") as error:
        size_checkpoint_volume(profile(checkpoint_gb=100, max_write_seconds=20), PRICES, NITRO)
    assert error.value.field == "max_write_seconds"
    with pytest.raises(FieldError, match="at most 65,536 GiB") as error:
        size_checkpoint_volume(
            profile(checkpoint_gb=5_000, retention=20, interval_seconds=86_400, max_write_seconds=3_600), PRICES, NITRO
        )
    assert error.value.field == "retention"


def test_io2_iops_tiers():
    assert ebs_monthly("io2", 0, 32_000, None, PRICES) == pytest.approx(32_000 * 0.065)
    assert ebs_monthly("io2", 0, 64_001, None, PRICES) == pytest.approx(32_000 * 0.065 + 32_000 * 0.0455 + 0.032)


def test_a_write_as_long_as_the_interval_is_refused():
    with pytest.raises(ValueError, match="must be shorter than interval_seconds"):
        profile(max_write_seconds=300)
