"""The egress cost model on worked examples (prices: the bundled snapshot's us-east-1 figures)."""

import pytest

from components.network.egress import EgressTraffic, EndpointLayout, egress_report, report_lines
from components.pricing.prices import SnapshotPriceSource

PRICES = SnapshotPriceSource().service_prices(
    "us-east-1"
)  # NAT 0.045/h + 0.045/GB, endpoint 0.01, cross-AZ 0.01 each way


def layout(**changes):
    values = dict(az_count=2, nat_gateways=1, s3_gateway=True, interface_services=("kms",), interface_az_count=2)
    return EndpointLayout(**{**values, **changes})


def line(report, traffic):
    return next(entry for entry in report.lines if entry.traffic == traffic)


def test_single_nat_pays_processing_and_cross_zone_transfer_the_gateway_pays_nothing():
    report = egress_report(EgressTraffic(s3_gb=2000, ecr_image_pull_gb=500), layout(), PRICES)
    s3 = line(report, "S3 (incl. ECR image layers)")
    # half of the traffic is in the zone without the NAT gateway: +2 x $0.01 per GB for it
    assert s3.via_nat_usd == pytest.approx(2500 * (0.045 + 0.5 * 0.02))
    assert s3.via_endpoints_usd == 0 and s3.path == "S3 gateway endpoint (free)"
    assert report.nat_hours_usd == pytest.approx(730 * 0.045)


def test_interface_endpoint_costs_hours_and_processing_and_cross_zone_where_it_has_no_interface():
    report = egress_report(EgressTraffic(kms_gb=300), layout(az_count=3, nat_gateways=3, interface_az_count=1), PRICES)
    kms = line(report, "kms")
    assert kms.via_nat_usd == pytest.approx(300 * 0.045)  # a NAT gateway in every zone: no cross-zone
    assert kms.via_endpoints_usd == pytest.approx(300 * (0.01 + 2 / 3 * 0.02))
    assert report.endpoint_hours_usd == {"kms": pytest.approx(730 * 0.01 * 1)}


def test_an_s3_interface_endpoint_beside_the_gateway_costs_more_than_it_saves_and_says_so():
    report = egress_report(
        EgressTraffic(s3_gb=50_000), layout(az_count=3, interface_services=("kms", "s3"), interface_az_count=3), PRICES
    )
    assert report.endpoint_hours_usd["s3"] == pytest.approx(21.90)
    assert line(report, "S3 (incl. ECR image layers)").via_endpoints_usd == 0  # the gateway still carries it
    text = "\n".join(report_lines(report))
    assert "S3 interface endpoint costs $21.90/month and carries no in-VPC traffic" in text
    assert "costs more than it saves" in text


def test_without_a_gateway_s3_rides_the_interface_endpoint():
    report = egress_report(EgressTraffic(s3_gb=1000), layout(s3_gateway=False, interface_services=("s3",)), PRICES)
    assert line(report, "S3 (incl. ECR image layers)").via_endpoints_usd == pytest.approx(1000 * 0.01)


def test_public_image_pulls_always_pay_nat_and_the_total_saving_adds_up():
    traffic = EgressTraffic(s3_gb=10_000, public_image_pull_gb=1000, logs_gb=100)
    report = egress_report(traffic, layout(interface_services=("kms", "logs")), PRICES)
    public = line(report, "image pulls from outside AWS")
    assert public.via_nat_usd == public.via_endpoints_usd > 0
    assert report.saving_usd == pytest.approx(report.via_nat_usd - report.with_endpoints_usd)
    assert report.via_nat_usd == pytest.approx(11_100 * (0.045 + 0.01))
    (total,) = [text for text in report_lines(report) if text.startswith("  total")]
    assert f"saving ${report.saving_usd:,.2f}/month" in total
