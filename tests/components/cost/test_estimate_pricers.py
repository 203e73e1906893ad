"""Every pricer of the estimate on a catalogue of resources (each priced type, each branch: defaults,
units, support dates, links to launch templates, unknown and unreadable inputs), kept line by line with
its basis in tests/golden/cost/pricers.json: the dollars and the words a user reads are both pinned.

Regenerate after an intended change, then review the diff:
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/components/cost/test_estimate_pricers.py
"""

import json
import os
from datetime import UTC, date
from pathlib import Path

import pytest

from components.capacity.mix import EXPECTED_SPOT_TAG, HOLDINGS_TAG
from components.compute.labels import CAPACITY_BLOCK_TAG
from components.cost.estimate import catalog_for, estimate
from components.plan.resources import EXPECTED_GB_TAG, PlanResource

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "cost" / "pricers.json"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def resource(name, type_, props, dependencies=(), id_=None):
    return PlanResource(f"urn:{name}", type_, name, props, None, tuple(dependencies), id_)


def asg(name, desired, base, percentage, tags=(), dependencies=(), template_id=None, weight=None):
    override = {"instanceType": "g6.xlarge", **({"weightedCapacity": weight} if weight else {})}
    spec = {"launchTemplateSpecification": {"launchTemplateId": template_id}} if template_id else {}
    return resource(
        name,
        "aws:autoscaling/group:Group",
        {
            "desiredCapacity": desired,
            "maxSize": desired * 2,
            "minSize": 0,
            "tags": [{"key": k, "value": v, "propagateAtLaunch": True} for k, v in tags],
            "mixedInstancesPolicy": {
                "instancesDistribution": {
                    "onDemandBaseCapacity": base,
                    "onDemandPercentageAboveBaseCapacity": percentage,
                },
                "launchTemplate": {**spec, "overrides": [override]},
            },
        },
        dependencies,
    )


TEMPLATE = resource(
    "template",
    "aws:ec2/launchTemplate:LaunchTemplate",
    {
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {"volumeSize": 200, "volumeType": "gp3", "iops": 6000, "throughput": 250},
            },
            {"deviceName": "/dev/xvde", "ebs": {"volumeSize": 20, "volumeType": "io2", "iops": 3000}},
            {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": 100}},
            {"deviceName": "/dev/xvdc", "ebs": {}},
        ]
    },
    id_="lt-0123",
)
CATALOGUE = [
    TEMPLATE,
    resource("gp3", "aws:ebs/volume:Volume", {"type": "gp3", "size": 100, "availabilityZone": "us-east-1a"}),
    resource("io2", "aws:ebs/volume:Volume", {"type": "io2", "size": 200, "iops": 10000}),
    resource("default-type", "aws:ebs/volume:Volume", {"size": 50}),
    resource("gp3-fast", "aws:ebs/volume:Volume", {"type": "gp3", "size": 100, "iops": 5000, "throughput": 500}),
    resource("no-size", "aws:ebs/volume:Volume", {"type": "gp3"}),
    resource("unreadable-size", "aws:ebs/volume:Volume", {"type": "gp3", "size": "big"}),
    resource("st9", "aws:ebs/volume:Volume", {"type": "st9", "size": 50}),
    resource("size-unknown", "aws:ebs/volume:Volume", {"type": "gp3", "size": UNKNOWN}),
    resource("instance", "aws:ec2/instance:Instance", {"instanceType": "m7i.large"}),
    resource("instance-unpriced", "aws:ec2/instance:Instance", {"instanceType": "zz9.large"}),
    resource("instance-unknown", "aws:ec2/instance:Instance", {"instanceType": UNKNOWN}),
    resource("instance-untyped", "aws:ec2/instance:Instance", {}),
    resource("gateway-endpoint", "aws:ec2/vpcEndpoint:VpcEndpoint", {"vpcEndpointType": "Gateway"}),
    resource("default-endpoint", "aws:ec2/vpcEndpoint:VpcEndpoint", {}),
    resource(
        "interface-endpoint",
        "aws:ec2/vpcEndpoint:VpcEndpoint",
        {"vpcEndpointType": "Interface", "subnetIds": ["a", "b", "c"]},
    ),
    resource("cluster-service", "kubernetes:core/v1:Service", {"spec": {"type": "ClusterIP"}}),
    resource("lb-service", "kubernetes:core/v1:Service", {"spec": {"type": "LoadBalancer"}}),
    resource("nat", "aws:ec2/natGateway:NatGateway", {"tags": {EXPECTED_GB_TAG: "1000"}}),
    resource("nat-untagged", "aws:ec2/natGateway:NatGateway", {}),
    resource("nat-negative", "aws:ec2/natGateway:NatGateway", {"tags": {EXPECTED_GB_TAG: "-5"}}),
    resource("nat-unreadable", "aws:ec2/natGateway:NatGateway", {"tags": {EXPECTED_GB_TAG: "lots"}}),
    resource("logs", "aws:cloudwatch/logGroup:LogGroup", {"tags": {EXPECTED_GB_TAG: "20"}}),
    resource("eip", "aws:ec2/eip:Eip", {}),
    resource("lb", "aws:lb/loadBalancer:LoadBalancer", {}),
    resource("key", "aws:kms/key:Key", {}),
    resource("attachment", "aws:ec2transitgateway/vpcAttachment:VpcAttachment", {}),
    resource("eks-standard", "aws:eks/cluster:Cluster", {"version": "1.35"}),
    resource("eks-extended", "aws:eks/cluster:Cluster", {"version": "1.33"}),
    resource("eks-unlisted", "aws:eks/cluster:Cluster", {"version": "1.99"}),
    resource("eks-unknown", "aws:eks/cluster:Cluster", {"version": UNKNOWN}),
    resource("eks-unversioned", "aws:eks/cluster:Cluster", {}),
    resource(
        "nodes",
        "aws:eks/nodeGroup:NodeGroup",
        {"scalingConfig": {"desiredSize": 3}, "instanceTypes": ["m7i.xlarge"]},
        ["urn:template"],
    ),
    resource(
        "nodes-by-id",
        "aws:eks/nodeGroup:NodeGroup",
        {"scalingConfig": {"desiredSize": 2}, "instanceTypes": ["m7i.xlarge"], "launchTemplate": {"id": "lt-0123"}},
    ),
    resource("nodes-bare", "aws:eks/nodeGroup:NodeGroup", {"scalingConfig": {"desiredSize": 1}}),
    resource(
        "nodes-no-template",
        "aws:eks/nodeGroup:NodeGroup",
        {"scalingConfig": {"desiredSize": 2}, "instanceTypes": ["m7i.xlarge"], "launchTemplate": {"id": "lt-none"}},
    ),
    resource("nodes-unsized", "aws:eks/nodeGroup:NodeGroup", {"scalingConfig": {}, "instanceTypes": ["m7i.xlarge"]}),
    resource(
        "unnamed-class",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        {"metadata": {"name": UNKNOWN}, "provisioner": "ebs.csi.aws.com", "parameters": {"type": "io2"}},
    ),
    resource(
        "ebs-class",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        {
            "metadata": {"name": "fast"},
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "iops": "4000", "throughput": "250"},
        },
    ),
    resource(
        "local-class",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        {"metadata": {"name": "nvme"}, "provisioner": "kubernetes.io/no-provisioner", "parameters": {"type": "io2"}},
    ),
    *[
        resource(
            f"claim-{size}",
            "kubernetes:core/v1:PersistentVolumeClaim",
            {
                "metadata": {"name": "c"},
                "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": size}}},
            },
        )
        for size in ("100Gi", "1Ti", "512Mi", "2097152Ki", "53687091200", "2Pi")
    ],
    resource(
        "claim-local",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"spec": {"storageClassName": "nvme", "resources": {"requests": {"storage": "1Ti"}}}},
    ),
    resource(
        "claim-classless",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"spec": {"resources": {"requests": {"storage": "10Gi"}}}},
    ),
    resource("claim-unsized", "kubernetes:core/v1:PersistentVolumeClaim", {"spec": {"storageClassName": "fast"}}),
    resource(
        "claim-bound",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"spec": {"volumeName": "pv-1", "storageClassName": "fast"}},
    ),
    resource(
        "claim-elsewhere",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"spec": {"storageClassName": "team-class", "resources": {"requests": {"storage": "10Gi"}}}},
    ),
    resource(
        "claim-platform",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"spec": {"storageClassName": "platform-io2", "resources": {"requests": {"storage": "64Gi"}}}},
    ),
    asg("group-on-demand", 8, 8, 100, dependencies=["urn:template"]),
    asg("group-spot", 10, 2, 20, tags=[(EXPECTED_SPOT_TAG, "0.300000")], template_id="lt-0123"),
    asg("group-reserved", 6, 6, 100, tags=[(HOLDINGS_TAG, "g6.xlarge=4@0.507000")]),
    asg("group-weighted", 8, 0, 50, tags=[(EXPECTED_SPOT_TAG, "1.200000")], weight="4"),
    asg("group-spot-untagged", 10, 0, 0),
    asg(
        "group-weighted-cheap",
        8,
        0,
        50,
        tags=[(EXPECTED_SPOT_TAG, "0.400000")],
        weight="4",
        dependencies=["urn:template"],
    ),
    asg("group-reserved-spot", 10, 4, 50, tags=[(HOLDINGS_TAG, "g6.xlarge=2@0.400000"), (EXPECTED_SPOT_TAG, "0.2")]),
    resource(
        "group-unsized",
        "aws:autoscaling/group:Group",
        {
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 0},
                "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]},
            }
        },
    ),
    resource(
        "group-no-overrides",
        "aws:autoscaling/group:Group",
        {
            "desiredCapacity": 2,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 2},
                "launchTemplate": {"overrides": []},
            },
        },
    ),
    resource("group-plain", "aws:autoscaling/group:Group", {"desiredCapacity": 2}),
    asg("group-unknown-size", UNKNOWN, 0, 100),
    *[
        resource(
            name,
            "aws:autoscaling/group:Group",
            {
                "desiredCapacity": desired,
                "launchTemplate": {"id": template, "version": "1"},
                "tags": [{"key": CAPACITY_BLOCK_TAG, "value": "cr-0a1b2c3d4e5f60718", "propagateAtLaunch": True}],
            },
        )
        for name, desired, template in (
            ("block-running", 2, "lt-0123"),
            ("block-outside-its-window", 0, "lt-0123"),
            ("block-no-template", 2, "lt-none"),
            ("block-unknown-size", UNKNOWN, "lt-0123"),
        )
    ],
    resource(
        "claim-unreadable-size",
        "kubernetes:core/v1:PersistentVolumeClaim",
        {"spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "ten gigs"}}}},
    ),
    # A launcher that names no type runs its template's; a group that names no desired capacity runs its minimum.
    resource("typed-template", "aws:ec2/launchTemplate:LaunchTemplate", {"instanceType": "g6.xlarge"}, id_="lt-typed"),
    resource(
        "nodes-template-type",
        "aws:eks/nodeGroup:NodeGroup",
        {"scalingConfig": {"desiredSize": 2}, "launchTemplate": {"id": "lt-typed"}},
    ),
    resource("instance-template-type", "aws:ec2/instance:Instance", {"launchTemplate": {"id": "lt-typed"}}),
    resource(
        "group-at-its-minimum",
        "aws:autoscaling/group:Group",
        {
            "minSize": 4,
            "maxSize": 8,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 4},
                "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]},
            },
        },
    ),
    resource(
        "group-scheduled",
        "aws:autoscaling/group:Group",
        {
            "name": "nightly",
            "desiredCapacity": 1,
            "minSize": 1,
            "maxSize": 8,
            "mixedInstancesPolicy": {
                "instancesDistribution": {"onDemandBaseCapacity": 8},
                "launchTemplate": {"overrides": [{"instanceType": "g6.xlarge"}]},
            },
        },
    ),
    resource(
        "nightly-scale-up",
        "aws:autoscaling/schedule:Schedule",
        {"autoscalingGroupName": "nightly", "recurrence": "0 22 * * *", "minSize": 6, "desiredCapacity": 6},
    ),
    resource(
        "nightly-minimum",
        "aws:autoscaling/schedule:Schedule",
        {"autoscalingGroupName": "nightly", "recurrence": "0 23 * * *", "minSize": 7},
    ),
    resource(
        "reservation",
        "aws:ec2/capacityReservation:CapacityReservation",
        {"instanceType": "g6.xlarge", "instanceCount": 2, "endDateType": "unlimited"},
    ),
    resource(
        "reservation-unpriced",
        "aws:ec2/capacityReservation:CapacityReservation",
        {"instanceType": "zz9.large", "instanceCount": 2},
    ),
]
PLATFORM_CLASSES = {"platform-io2": {"type": "io2", "iops": "64000"}}


def pricer_table() -> dict:
    cost = estimate(CATALOGUE, catalog_for("us-east-1"), on=date(2026, 12, 1), storage_classes=PLATFORM_CLASSES)
    return {
        "monthly_usd_worst_case": cost.monthly_usd,
        "monthly_usd_expected": cost.expected_monthly_usd,
        "lines": {
            line.urn: {"monthly_usd": line.monthly_usd, "expected_usd": line.expected_usd, "basis": line.basis}
            for line in cost.lines
        },
    }


def test_every_pricer_matches_its_golden_lines():
    table = pricer_table()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    assert table == json.loads(GOLDEN.read_text()), f"regenerate: UPDATE_GOLDEN=1 pytest {__file__}"


def test_the_catalogue_reaches_every_priced_type():
    from components.cost.estimate import PRICERS

    priced = {r.type for r in CATALOGUE}
    assert set(PRICERS) <= priced
    assert {
        "aws:autoscaling/group:Group",
        "aws:eks/cluster:Cluster",
        "aws:eks/nodeGroup:NodeGroup",
        "kubernetes:core/v1:PersistentVolumeClaim",
    } <= priced


@pytest.mark.parametrize(
    "name, expected",
    [
        ("claim-100Gi", 100),
        ("claim-1Ti", 1024),
        ("claim-512Mi", 0.5),
        ("claim-2097152Ki", 2),
        ("claim-53687091200", 50),
        ("claim-2Pi", 2 * 2**20),
    ],
)
def test_a_claims_size_is_read_in_every_binary_unit(name, expected):
    (line,) = [
        line
        for line in estimate(CATALOGUE, catalog_for("us-east-1"), on=date(2026, 12, 1)).lines
        if line.urn == f"urn:{name}"
    ]
    assert f"gp3 {expected:g} GiB" in line.basis


def test_the_estimate_as_json_is_what_seedance_check_prints():
    cost = estimate(
        [r for r in CATALOGUE if r.name in ("template", "gp3", "group-spot", "st9")],
        catalog_for("us-east-1"),
        on=date(2026, 12, 1),
    )
    document = cost.to_json()
    assert document["monthly_usd"] == cost.monthly_usd == 8298.04
    assert document["expected_monthly_usd"] == cost.expected_monthly_usd == 5939.61
    assert document["resources"] == [
        {"urn": "urn:gp3", "type": "aws:ebs/volume:Volume", "monthly_usd": 8.0, "basis": "gp3 100 GiB"},
        {
            "urn": "urn:st9",
            "type": "aws:ebs/volume:Volume",
            "monthly_usd": None,
            "basis": "unknown: no price for EBS volume type st9",
        },
        {
            "urn": "urn:group-spot",
            "type": "aws:autoscaling/group:Group",
            "monthly_usd": 8290.04,
            "expected_usd": 5931.61,
            "basis": document["resources"][2]["basis"],
        },
    ]
    assert cost.total("worst_case") == 8298.04 and cost.total("expected") == 5939.61
    assert [line.urn for line in cost.unknown] == ["urn:st9"]


@pytest.mark.parametrize("on, support", [(date(2026, 12, 1), "extended"), (date(2027, 8, 1), None)])
def test_a_control_plane_past_extended_support_is_not_priced(on, support):
    (line,) = estimate(
        [resource("eks", "aws:eks/cluster:Cluster", {"version": "1.33"})], catalog_for("us-east-1"), on=on
    ).lines
    if support:
        assert line.basis == f"EKS control plane, Kubernetes 1.33 in {support} support on {on:%Y-%m-%d}"
    else:
        assert line.monthly_usd is None
        assert line.basis == "unknown: Kubernetes 1.33 is past extended support on 2027-08-01: EKS upgrades the cluster"


def test_the_estimate_prices_support_as_of_today_by_default():
    from datetime import datetime

    eks = [resource("eks", "aws:eks/cluster:Cluster", {"version": "1.35"})]
    today = datetime.now(UTC).date()
    assert estimate(eks, catalog_for("us-east-1")).lines == estimate(eks, catalog_for("us-east-1"), on=today).lines


@pytest.mark.parametrize(
    "action",
    [
        {"autoscalingGroupName": UNKNOWN, "desiredCapacity": 40},
        {"autoscalingGroupName": "nightly", "desiredCapacity": UNKNOWN},
    ],
)
def test_a_scheduled_size_known_only_at_apply_leaves_its_groups_unpriced(action):
    """A scheduled action may size its group up: one whose size, or whose group, is known only at apply leaves the
    group's cost unknown (the budget limit reads that as the unknown it waits on), never priced as it plans."""
    group = next(r for r in CATALOGUE if r.name == "group-scheduled")
    schedule = resource("action", "aws:autoscaling/schedule:Schedule", action)
    (line,) = estimate([group, schedule], catalog_for("us-east-1"), on=date(2026, 12, 1)).lines
    assert line.monthly_usd is None and line.waits_on is not None and "can't be known during preview" in line.basis


def test_an_unreadable_scheduled_size_leaves_its_group_unpriced():
    group = next(r for r in CATALOGUE if r.name == "group-scheduled")
    schedule = resource(
        "action", "aws:autoscaling/schedule:Schedule", {"autoscalingGroupName": "nightly", "desiredCapacity": "lots"}
    )
    (line,) = estimate([group, schedule], catalog_for("us-east-1"), on=date(2026, 12, 1)).lines
    assert line.monthly_usd is None and line.waits_on is None and "sets an unreadable size" in line.basis


@pytest.mark.parametrize("pool", [{"poolState": "Running", "minSize": 4}, {"poolState": "Stopped"}])
def test_a_group_with_a_warm_pool_is_not_priced_as_if_it_had_none(pool):
    """Issue 49 item 8: warm instances bill beside the group's; the review's edit kept the group's own size and
    added a Running warm pool the budget never saw."""
    group = asg("warm", 2, 1, 0)
    warm = resource(group.name, group.type, {**group.props, "warmPool": pool})
    (plain,) = estimate([group], catalog_for("us-east-1"), on=date(2026, 12, 1)).lines
    (line,) = estimate([warm], catalog_for("us-east-1"), on=date(2026, 12, 1)).lines
    assert plain.monthly_usd and line.monthly_usd is None and "warm pool" in line.basis
