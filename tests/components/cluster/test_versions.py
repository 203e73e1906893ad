"""One table of Kubernetes versions decides what the config accepts, the add-ons, the control plane's
price on a given day and the warning before a support date passes."""

from datetime import date, timedelta

import pytest

from components.cluster.versions import VERSIONS, WARNING_DAYS, kubernetes_version
from components.cost.estimate import catalog_for, estimate
from components.plan.resources import EKS_CLUSTER, PlanResource


def cluster(minor: str) -> PlanResource:
    return PlanResource(f"urn:pulumi:s::p::{EKS_CLUSTER}::c", EKS_CLUSTER, "c", {"version": minor})


@pytest.mark.parametrize(
    "minor, on, monthly",
    [
        ("1.34", date(2026, 12, 1), 73.0),  # the day before standard support ends
        ("1.34", date(2026, 12, 5), 438.0),  # extended support: $0.60 per cluster-hour
        ("1.35", date(2026, 12, 5), 73.0),
        ("1.33", date(2027, 7, 28), 438.0),
    ],
)
def test_the_control_plane_is_priced_at_its_versions_support_rate_on_the_day(minor, on, monthly):
    (line,) = estimate([cluster(minor)], catalog_for("us-east-1"), on=on).lines
    assert line.monthly_usd == pytest.approx(monthly) and f"Kubernetes {minor}" in line.basis


def test_a_version_past_extended_support_is_not_priced_as_if_it_ran():
    (line,) = estimate([cluster("1.33")], catalog_for("us-east-1"), on=date(2027, 7, 29)).lines
    assert line.monthly_usd is None and "past extended support" in line.basis


def test_the_table_is_ordered_and_every_version_has_its_add_ons():
    ends = [(v.end_of_standard, v.end_of_extended) for v in VERSIONS.values()]
    assert ends == sorted(ends) and all(s < e for s, e in ends)
    for minor, version in VERSIONS.items():
        assert version.autoscaler_image.startswith(f"v{minor}.") and version.descheduler_chart.startswith(
            f"0.{minor.split('.')[1]}."
        )


def test_a_plan_warns_within_sixty_days_of_an_end_date_and_in_extended_support():
    version = kubernetes_version("1.35")
    assert version.warning(date(2026, 12, 5)) is None
    soon = version.warning(date(2027, 3, 27) - timedelta(days=WARNING_DAYS))
    assert soon and "standard support ends on 2027-03-27 (in 60 days)" in soon
    assert "in extended support since 2027-03-27" in version.warning(date(2027, 6, 1))
    assert kubernetes_version("1.30") is None  # past extended support: not in the table, refused by the config
    assert "past extended support since 2028-03-27" in version.warning(date(2028, 4, 1))
    # Extended support bills from the start of the day standard support ends: that day warns as extended.
    assert version.support(date(2027, 3, 27)) == "extended" and "(in 0 days)" not in version.warning(date(2027, 3, 27))
