"""`seedance capacity-blocks plan` on recorded EC2 answers (botocore's Stubber), and the guarantee that
`decide`, `plan` and `capacity-blocks plan` only ever read: every operation their clients are asked is
a Describe, Get or List (issue 38)."""

import re
import shutil
from datetime import UTC, datetime, timedelta

import boto3
import pytest
import yaml
from botocore.awsrequest import AWSResponse
from botocore.stub import ANY, Stubber

from components.compute.capacity_block import CapacityBlockConfig
from seedance import capacity_blocks_command, capacity_commands
from seedance.cli import main
from tests.stacks import REPO

NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
READ = re.compile(r"^(Describe|Get|List)[A-Z]")


def recording(client, asked):
    """The client, with every operation it is asked recorded by name (botocore's before-call event)."""
    client.meta.events.register("before-call.*.*", lambda model, **_: asked.append(model.name))
    return client


@pytest.fixture
def ec2(monkeypatch):
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    asked: list[str] = []
    recording(client, asked)
    stub = Stubber(client)
    stub.activate()
    monkeypatch.setattr(capacity_blocks_command, "clients", lambda service, region: client)
    yield stub, asked
    stub.assert_no_pending_responses()


def offering(offering_id, instances, hours, fee, start_days=7):
    start = NOW + timedelta(days=start_days)
    return {
        "CapacityBlockOfferingId": offering_id,
        "InstanceType": "p5.48xlarge",
        "AvailabilityZone": "us-east-1a",
        "InstanceCount": instances,
        "StartDate": start,
        "EndDate": start + timedelta(hours=hours),
        "CapacityBlockDurationHours": hours,
        "UpfrontFee": f"{fee:.2f}",
        "CurrencyCode": "USD",
        "Tenancy": "default",
    }


def plan(*extra):
    return main(
        [
            "capacity-blocks",
            "plan",
            "--stack",
            "prod",
            "--group",
            "batch",
            "--instance-type",
            "p5.48xlarge",
            "--gpu-hours",
            "2000",
            "--by",
            "2027-01-04T00:00:00Z",
            "--now",
            NOW.isoformat(),
            *extra,
        ]
    )


def test_recommends_the_cheapest_block_below_the_alternatives_and_prints_the_purchase_command(ec2, capsys):
    stub, asked = ec2
    window = {
        "InstanceType": "p5.48xlarge",
        "StartDateRange": NOW,
        "EndDateRange": datetime(2027, 1, 4, tzinfo=UTC),
    }
    stub.add_response(
        "describe_capacity_block_offerings",
        {"CapacityBlockOfferings": [offering("cb-0aaaaaaaaaaaaaaa1", 1, 264, 15_900.0)]},
        {**window, "InstanceCount": 1, "CapacityDurationHours": 264},
    )
    stub.add_response(
        "describe_capacity_block_offerings",
        {"CapacityBlockOfferings": [offering("cb-0aaaaaaaaaaaaaaa2", 2, 144, 11_000.0)]},
        {**window, "InstanceCount": 2, "CapacityDurationHours": 144},
    )
    stub.add_response(
        "describe_capacity_block_offerings",
        {"CapacityBlockOfferings": []},
        {**window, "InstanceCount": 4, "CapacityDurationHours": 72},
    )
    stub.add_response(
        "describe_spot_price_history",
        {
            "SpotPriceHistory": [
                {
                    "AvailabilityZone": "us-east-1a",
                    "InstanceType": "p5.48xlarge",
                    "ProductDescription": "Linux/UNIX",
                    "SpotPrice": "40.000000",
                    "Timestamp": NOW,
                },
                {
                    "AvailabilityZone": "us-east-1a",
                    "InstanceType": "p5.48xlarge",
                    "ProductDescription": "Linux/UNIX",
                    "SpotPrice": "20.000000",
                    "Timestamp": NOW - timedelta(hours=2),
                },  # older: not the price now
                {
                    "AvailabilityZone": "us-east-1b",
                    "InstanceType": "p5.48xlarge",
                    "ProductDescription": "Linux/UNIX",
                    "SpotPrice": "10.000000",
                    "Timestamp": NOW,
                },
            ]
        },  # another zone: not the offerings'
        {"InstanceTypes": ["p5.48xlarge"], "StartTime": NOW, "ProductDescriptions": ["Linux/UNIX"]},
    )
    assert plan() == 0
    out = capsys.readouterr().out
    assert "in each offering's zone: us-east-1a $40.0000/h, us-east-1b $10.0000/h" in out
    lines = [line for line in out.splitlines() if line.startswith("cb-")]
    # expected spot: half the time 2,000 GPU-h at $5.00 (+ interruptions), else the date missed: $11,883.30
    assert lines[0].startswith("cb-0aaaaaaaaaaaaaaa2") and " buy " in lines[0] and "$11,883.30 spot" in lines[0]
    assert "do not buy" in lines[1]  # $15,900 is above it
    assert (
        "aws ec2 purchase-capacity-block --region us-east-1 --capacity-block-offering-id cb-0aaaaaaaaaaaaaaa2 "
        "--instance-platform Linux/UNIX"
    ) in out
    # Then the stack-file entry that runs it: completed with the purchase's id, it is a valid block.
    entry = out[out.index("capacity_blocks:") :]
    (block,) = yaml.safe_load(entry.replace("cr-...", "cr-0123456789abcdef0"))["capacity_blocks"]
    assert CapacityBlockConfig.model_validate(block).instance_count == block["instance_count"] >= 1
    assert block["instance_type"] == "p5.48xlarge" and block["zone"] == "us-east-1a"
    assert asked and all(READ.match(name) for name in asked)


def test_no_block_worth_buying_says_so(ec2, capsys):
    stub, _asked = ec2
    for count, hours in ((1, 264), (2, 144), (4, 72)):
        stub.add_response(
            "describe_capacity_block_offerings",
            {"CapacityBlockOfferings": [offering(f"cb-0{count:016d}", count, hours, 99_000.0)]},
            {
                "InstanceType": "p5.48xlarge",
                "InstanceCount": count,
                "CapacityDurationHours": hours,
                "StartDateRange": ANY,
                "EndDateRange": ANY,
            },
        )
    stub.add_response("describe_spot_price_history", {"SpotPriceHistory": []}, None)
    assert plan() == 0
    out = capsys.readouterr().out
    assert "spot: not an alternative (no spot price read)" in out and "Buy none: no block costs less" in out
    assert "purchase-capacity-block" not in out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--by", "2026-12-05T13:00:00Z"], "--by"),  # within a day
        (["--by", "2028-12-01T00:00:00Z"], "--by"),  # beyond 8 weeks + 182 days
        (["--group", "nope"], "--group = 'nope'"),
    ],
)
def test_a_bad_request_is_one_line_exit_2(argv, words, capsys):
    args = [
        "capacity-blocks",
        "plan",
        "--stack",
        "prod",
        "--group",
        "batch",
        "--instance-type",
        "p5.48xlarge",
        "--gpu-hours",
        "2000",
        "--by",
        "2027-01-04T00:00:00Z",
        "--now",
        NOW.isoformat(),
    ]
    for flag, value in zip(argv[::2], argv[1::2]):
        args[args.index(flag) + 1] = value
    assert main(args) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_a_group_of_types_not_sold_as_blocks_is_told_which_are(capsys):
    assert (
        main(
            [
                "capacity-blocks",
                "plan",
                "--stack",
                "prod",
                "--group",
                "batch",
                "--gpu-hours",
                "100",
                "--by",
                "2027-01-04T00:00:00Z",
                "--now",
                NOW.isoformat(),
            ]
        )
        == 2
    )
    assert "Capacity Blocks are sold for p4d.24xlarge, p5.48xlarge: pass --instance-type" in capsys.readouterr().err


def test_decide_live_only_reads(tmp_path, monkeypatch, capsys):
    """The real LivePriceSource on moto with commitments read live: whatever it is asked, it only reads."""
    from moto import mock_aws

    from components.pricing.live import LivePriceSource

    shutil.copy(REPO / "Pulumi.yaml", tmp_path)
    (tmp_path / "stacks").mkdir()
    stack = (REPO / "stacks" / "Pulumi.prod.yaml").read_text()
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text(
        stack.replace("  seedance-gpu:capacity:\n", "  seedance-gpu:capacity:\n    commitments: live\n", 1)
    )
    asked: list[str] = []
    # Reads moto does not implement, answered empty before moto would refuse them.
    empty = {
        "DescribeCapacityReservations": {"CapacityReservations": []},
        "DescribeSavingsPlans": {"savingsPlans": []},
        "GetSavingsPlansUtilizationDetails": {
            "SavingsPlansUtilizationDetails": [],
            "TimePeriod": {"Start": "2026-11-30", "End": "2026-12-01"},
        },
    }

    def client(service, region):
        made = recording(boto3.client(service, region_name=region), asked)
        made.meta.events.register(
            "before-call.*.*",
            lambda model, **_: (AWSResponse(None, 200, {}, None), empty[model.name]) if model.name in empty else None,
        )
        return made

    with mock_aws():
        source = LivePriceSource(clients=client, advisor=lambda _timeout: {"ranges": [], "spot_advisor": {}})
        monkeypatch.setattr(capacity_commands, "live_price_source", lambda **_: source)
        main(
            [
                "decide",
                "--stack",
                "prod",
                "--program",
                str(tmp_path),
                "--now",
                "2026-12-01T12:00:00Z",
                "--allow-fallback",
            ]
        )
    assert "DescribeCapacityReservations" in asked and "DescribeSavingsPlans" in asked
    assert all(READ.match(name) for name in asked), asked
