"""What a fresh account pays beyond instances and volumes is in the estimate: each NAT gateway's public
IPv4 address and the data it processes, the Transit Gateway attachment of the deploy path, control-plane and
flow-log ingestion at the stack's stated assumption, the system nodes' root volumes, and the control plane at
its version's support rate."""

from datetime import UTC, datetime

import pytest

from components.cost.estimate import catalog_for, estimate
from components.plan.resources import EXPECTED_GB_TAG, tags_of
from components.stack.capacity import RunMode, table_zones
from components.stack.derivation import derive
from seedance.check_command import plan_resources
from tests.stacks import REPO, STACKS, stack_config


@pytest.mark.parametrize("stack", STACKS)
def test_nat_addresses_data_logs_and_root_volumes_are_priced(plan_of, stack):
    plan, config = plan_of(stack), stack_config(stack)
    catalog = catalog_for(config.region)
    resources = {r.urn: r for r in plan_resources(plan)}
    lines = {line.urn: line for line in estimate(resources.values(), catalog).lines}
    by_type = lambda kind: [lines[urn] for urn, r in resources.items() if r.type == kind]  # noqa: E731

    gateways, addresses = by_type("aws:ec2/natGateway:NatGateway"), by_type("aws:ec2/eip:Eip")
    assert len(addresses) == len(gateways) >= 1
    assert all(a.monthly_usd == pytest.approx(730 * catalog.unit("public_ipv4_hour")) for a in addresses)
    derived = derive(config, stack, table_zones(config), REPO / "stacks", datetime.now(UTC), RunMode.offline_plan())
    processed = derived.egress.nat_gb / len(gateways)
    for line in gateways:
        assert line.monthly_usd == pytest.approx(
            730 * catalog.unit("nat_gateway_hour") + processed * catalog.unit("nat_gateway_gb"), abs=0.01
        )

    for urn, resource in resources.items():
        if resource.type == "aws:cloudwatch/logGroup:LogGroup":
            gb = float(tags_of(resource)[EXPECTED_GB_TAG])  # every log group states its assumption
            assert lines[urn].monthly_usd == pytest.approx(gb * catalog.unit("cloudwatch_logs_ingestion_gb"))
    (system,) = by_type("aws:eks/nodeGroup:NodeGroup")
    assert "root volumes" in system.basis
    attachments = by_type("aws:ec2transitgateway/vpcAttachment:VpcAttachment")
    assert len(attachments) == (1 if config.network.transit_gateway_id else 0)
    assert all(
        a.monthly_usd == pytest.approx(730 * catalog.unit("transit_gateway_attachment_hour")) for a in attachments
    )
