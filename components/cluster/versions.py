"""The Kubernetes versions a stack may run, with their EKS support dates, and what follows from each:
what the config accepts, the add-ons built for that minor, the control plane's price on a given day,
and the warning before a date passes. Pure; the one table of versions.

Dates: the EKS User Guide's release calendar ("Understand the Kubernetes version lifecycle on EKS",
kubernetes-versions.adoc) for 1.33 and 1.34; 1.35 and 1.36 from the same calendar as endoflife.date
records it (the stored guide stops at 1.34). The rule behind them: standard support for 14 months
after the EKS release, then extended support for 12 more; extended support bills from the start of the
day standard support ends (UTC), so that day is already extended support. The account's own answer is EKS
DescribeClusterVersions (versionStatus, endOfStandardSupportDate, endOfExtendedSupportDate); the table is kept
in step with it.
Add-ons follow the minor: the cluster autoscaler's minor must match the cluster's (its compatibility
rule; newest patch tags of kubernetes/autoscaler), the descheduler's minor is built and tested for the
same Kubernetes minor (its README's compatibility matrix; charts in ../shared/charts).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

Support = Literal["standard", "extended", "unsupported"]
# A plan within this many days of a support end date says so.
WARNING_DAYS = 60


@dataclass(frozen=True)
class KubernetesVersion:
    minor: str
    end_of_standard: date
    end_of_extended: date
    autoscaler_image: str  # registry.k8s.io/autoscaling/cluster-autoscaler tag
    autoscaler_chart: str  # the cluster-autoscaler chart whose templates that image is run with
    descheduler_chart: str

    def support(self, on: date) -> Support:
        if on < self.end_of_standard:
            return "standard"
        return "extended" if on < self.end_of_extended else "unsupported"

    def warning(self, on: date) -> str | None:
        """What a plan on `on` should say about this version's support, or None."""
        if self.support(on) == "unsupported":
            return (
                f"Kubernetes {self.minor} is past extended support since {self.end_of_extended:%Y-%m-%d}: EKS "
                "creates no cluster of it and upgrades running ones itself; move to a newer version"
            )
        for end, what in (
            (self.end_of_standard, "standard support ends"),
            (self.end_of_extended, "extended support ends"),
        ):
            if on < end <= on + timedelta(days=WARNING_DAYS):
                after = (
                    "the control plane then bills at the extended-support rate"
                    if end == self.end_of_standard
                    else "EKS then upgrades the cluster itself"
                )
                return f"Kubernetes {self.minor}: {what} on {end:%Y-%m-%d} (in {(end - on).days} days); {after}"
        if self.support(on) == "extended":
            return (
                f"Kubernetes {self.minor} is in extended support since {self.end_of_standard:%Y-%m-%d} (billed "
                f"at the extended-support rate) until {self.end_of_extended:%Y-%m-%d}: move to a newer version"
            )
        return None


VERSIONS = {
    v.minor: v
    for v in (
        KubernetesVersion("1.33", date(2026, 7, 29), date(2027, 7, 29), "v1.33.6", "9.53.0", "0.33.0"),
        KubernetesVersion("1.34", date(2026, 12, 2), date(2027, 12, 2), "v1.34.5", "9.53.0", "0.34.0"),
        KubernetesVersion("1.35", date(2027, 3, 27), date(2028, 3, 27), "v1.35.2", "9.59.0", "0.35.1"),
        KubernetesVersion("1.36", date(2027, 8, 2), date(2028, 8, 2), "v1.36.1", "9.59.0", "0.36.0"),
    )
}


def kubernetes_version(minor: str) -> KubernetesVersion | None:
    return VERSIONS.get(minor)
