"""Which EBS volume a training job's checkpoints need, and what each candidate costs. Pure.

From the job's profile: capacity for the kept checkpoints, write throughput so one checkpoint is
written within `max_write_seconds`, IOPS for that write (128 KiB IOs, as in the source's fio test)
or for random weight reads, whichever is more, and the latency the step time tolerates. gp3 and io2
are sized to meet all of it within their limits (FACTS.md, 2025 limits); the cheapest candidate that
meets every requirement wins, and the reason is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field, model_validator

from components.catalog.instance_types import GpuInstanceType
from components.common.validation import FieldError
from components.pricing.ebs import ebs_monthly
from components.pricing.prices import UnitPrice

GB, GIB, MIB = 10**9, 2**30, 2**20
WRITE_IO_KIB = 128  # the source's fio block size
FILESYSTEM_HEADROOM = 1.2


class _Gp3Limits(TypedDict):
    max_gib: int
    base_iops: int
    max_iops: int
    iops_per_gib: int
    base_mibps: int
    max_mibps: int
    mibps_per_iops: float


class _Io2Limits(TypedDict):
    min_gib: int
    max_gib: int
    min_iops: int
    max_iops: int
    iops_per_gib: int
    max_mibps: int
    mibps_per_iops: float
    non_nitro_max_iops: int


# Limits (EC2 CreateVolume docs): gp3 1-65,536 GiB, 3,000-80,000 IOPS (500 per GiB), 125-2,000 MiB/s
# (0.25 MiB/s per IOPS); io2 Block Express 4-65,536 GiB, 100-256,000 IOPS (1,000 per GiB),
# 4,000 MiB/s (0.256 MiB/s per IOPS), above 32,000 IOPS only on Nitro instances.
GP3 = _Gp3Limits(
    max_gib=65_536,
    base_iops=3_000,
    max_iops=80_000,
    iops_per_gib=500,
    base_mibps=125,
    max_mibps=2_000,
    mibps_per_iops=0.25,
)
IO2 = _Io2Limits(
    min_gib=4,
    max_gib=65_536,
    min_iops=100,
    max_iops=256_000,
    iops_per_gib=1_000,
    max_mibps=4_000,
    mibps_per_iops=0.256,
    non_nitro_max_iops=32_000,
)
# Tag on a volume that is io2 although gp3 is cheaper, saying why (the over-provisioning policy reads it).
IO2_REASON_TAG = "seedance.io/io2-reason"
# Typical latency: gp3 "single-digit milliseconds", io2 Block Express "sub-millisecond" (EBS user guide).
LATENCY_MS = {"gp3": 10.0, "io2": 1.0}


class CheckpointProfile(BaseModel):
    """What a training job asks of its checkpoint volume."""

    model_config = ConfigDict(extra="forbid")

    checkpoint_gb: float = Field(gt=0, le=10_000, description="Size of one checkpoint, GB.")
    interval_seconds: int = Field(ge=30, le=86_400, description="Time between checkpoints.")
    max_write_seconds: float = Field(gt=0, le=3_600, description="Longest one checkpoint write may take.")
    random_read_iops: int = Field(0, ge=0, le=1_000_000, description="Random-read IOPS (weight loading, data reads).")
    max_latency_ms: float = Field(10, gt=0, le=100, description="Highest mean IO latency the step time tolerates.")
    retention: int = Field(3, ge=1, le=1_000, description="Checkpoints kept on the volume.")

    @model_validator(mode="after")
    def _write_fits_interval(self) -> CheckpointProfile:
        if self.max_write_seconds >= self.interval_seconds:
            raise FieldError(
                "max_write_seconds",
                self.max_write_seconds,
                f"must be shorter than interval_seconds ({self.interval_seconds})",
            )
        return self


@dataclass(frozen=True)
class Requirement:
    capacity_gib: int
    write_mibps: float
    iops: int


@dataclass(frozen=True)
class VolumeCandidate:
    volume_type: str
    size_gib: int
    iops: int
    throughput_mibps: int | None  # gp3 only: io2 throughput follows its IOPS
    monthly_usd: float
    meets: bool
    why_not: str = ""


@dataclass(frozen=True)
class SizingDecision:
    requirement: Requirement
    chosen: VolumeCandidate
    candidates: tuple[VolumeCandidate, ...]
    reason: str
    price_sources: tuple[str, ...] = field(default=())

    def lines(self) -> list[str]:
        r = self.requirement
        out = [f"needs {r.capacity_gib} GiB, {r.write_mibps:,.0f} MiB/s writes, {r.iops:,} IOPS"]
        for c in self.candidates:
            shape = f"{c.size_gib} GiB, {c.iops:,} IOPS" + (
                f", {c.throughput_mibps} MiB/s" if c.throughput_mibps else ""
            )
            verdict = "meets the profile" if c.meets else f"does not meet it: {c.why_not}"
            out.append(f"{c.volume_type}: {shape}, ${c.monthly_usd:,.2f}/month, {verdict}")
        out.append(f"chosen: {self.chosen.volume_type} ({self.reason})")
        return out


def requirement(profile: CheckpointProfile) -> Requirement:
    capacity = math.ceil(profile.checkpoint_gb * GB / GIB * (profile.retention + 1) * FILESYSTEM_HEADROOM)
    write_mibps = profile.checkpoint_gb * GB / MIB / profile.max_write_seconds
    write_iops = math.ceil(write_mibps * 1024 / WRITE_IO_KIB)
    return Requirement(
        capacity_gib=max(1, capacity), write_mibps=write_mibps, iops=max(profile.random_read_iops, write_iops)
    )


def _gp3(need: Requirement, profile: CheckpointProfile, prices: dict[str, UnitPrice]) -> VolumeCandidate:
    throughput = max(GP3["base_mibps"], math.ceil(need.write_mibps))
    iops = max(GP3["base_iops"], need.iops, math.ceil(throughput / GP3["mibps_per_iops"]))
    size = max(need.capacity_gib, math.ceil(iops / GP3["iops_per_gib"]))
    problems = []
    if iops > GP3["max_iops"]:
        problems.append(f"{iops:,} IOPS is above gp3's {GP3['max_iops']:,}")
    if throughput > GP3["max_mibps"]:
        problems.append(f"{throughput:,} MiB/s is above gp3's {GP3['max_mibps']:,}")
    if size > GP3["max_gib"]:
        problems.append(f"{size:,} GiB is above gp3's {GP3['max_gib']:,}")
    if profile.max_latency_ms < LATENCY_MS["gp3"]:
        problems.append(f"gp3 latency is single-digit ms, the profile allows {profile.max_latency_ms:g} ms")
    cost = ebs_monthly("gp3", size, iops, throughput, prices)
    return VolumeCandidate(
        "gp3", size, min(iops, GP3["max_iops"]), throughput, round(cost, 2), not problems, "; ".join(problems)
    )


def _io2(need: Requirement, prices: dict[str, UnitPrice], instance_types: list[GpuInstanceType]) -> VolumeCandidate:
    iops = max(IO2["min_iops"], need.iops, math.ceil(need.write_mibps / IO2["mibps_per_iops"]))
    size = max(IO2["min_gib"], need.capacity_gib, math.ceil(iops / IO2["iops_per_gib"]))
    cost = ebs_monthly("io2", size, iops, None, prices)
    problems = []
    non_nitro = [t.name for t in instance_types if not t.nitro]
    if iops > IO2["non_nitro_max_iops"] and non_nitro:
        problems.append(f"above {IO2['non_nitro_max_iops']:,} IOPS needs Nitro; {', '.join(non_nitro)} are not")
    return VolumeCandidate("io2", size, iops, None, round(cost, 2), not problems, "; ".join(problems))


def size_checkpoint_volume(
    profile: CheckpointProfile, prices: dict[str, UnitPrice], instance_types: list[GpuInstanceType]
) -> SizingDecision:
    """The cheapest volume meeting the profile; a `FieldError` on the profile key past every limit."""
    need = requirement(profile)
    if need.iops > IO2["max_iops"]:
        raise FieldError(
            "random_read_iops",
            profile.random_read_iops,
            f"needs {need.iops:,} IOPS; the most one EBS volume gives is {IO2['max_iops']:,} (io2 Block Express)",
        )
    if need.write_mibps > IO2["max_mibps"]:
        raise FieldError(
            "max_write_seconds",
            profile.max_write_seconds,
            f"writing {profile.checkpoint_gb:g} GB that fast needs {need.write_mibps:,.0f} MiB/s; one EBS "
            f"volume gives at most {IO2['max_mibps']:,} MiB/s (io2 Block Express)",
        )
    if need.capacity_gib > IO2["max_gib"]:
        raise FieldError(
            "retention",
            profile.retention,
            f"keeping {profile.retention} checkpoints needs {need.capacity_gib:,} GiB; one EBS volume "
            f"holds at most {IO2['max_gib']:,} GiB",
        )
    candidates = (_gp3(need, profile, prices), _io2(need, prices, instance_types))
    meeting = [c for c in candidates if c.meets]
    if not meeting:
        io2 = candidates[1]
        raise FieldError(
            "random_read_iops",
            profile.random_read_iops,
            io2.why_not + f" (the group's types: "
            f"{', '.join(t.name for t in instance_types)}); allowed: <= {IO2['non_nitro_max_iops']:,} IOPS "
            "on these types, or Nitro types",
        )
    chosen = min(meeting, key=lambda c: c.monthly_usd)
    other = [c for c in candidates if c is not chosen][0]
    reason = (
        f"cheaper than {other.volume_type} (${other.monthly_usd:,.2f}/month)"
        if other.meets
        else f"{other.volume_type} does not meet the profile: {other.why_not}"
    )
    sources = sorted({f"{p.source}, {p.observed_at:%Y-%m-%d}" for k, p in prices.items() if k.startswith("ebs_")})
    return SizingDecision(need, chosen, candidates, reason, tuple(sources))
