"""The bundled snapshot's on-demand prices are generated from a pinned, licensed source (issue 38, item 5):
us-east-1's from Karpenter's generated table (a copy, Apache header kept, in tests/fixtures), us-west-2's
the same prices marked as an assumption, checked against Spare Cores' licensed table of 2024 where it has
the type; regenerating changes nothing, and a table the reader does not understand, that lacks a listed
type, or that prices a type differently in the two regions stops it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "generate_on_demand_snapshot.py"
TABLE = REPO / "tests" / "fixtures" / "karpenter-provider-aws" / "zz_generated.pricing_aws.go"
SNAPSHOT = REPO / "components" / "pricing" / "data" / "price_snapshot.json"
SOURCE = "aws/karpenter-provider-aws@6fc13b5236fd pkg/providers/pricing/zz_generated.pricing_aws.go"
PARITY = REPO / "tests" / "fixtures" / "sparecores-data" / "on_demand_linux_2024-02-21.csv"
PARITY_SOURCE = (
    "SpareCores/sc-data@ce414d8e src/sc_data/data/sc-data-all.db (CC BY-SA 4.0), Linux on-demand, 2024-02-21"
)
ARGS = (
    "--table",
    str(TABLE),
    "--region",
    "us-east-1",
    "--assumed-in",
    "us-west-2",
    "--source",
    SOURCE,
    "--parity",
    str(PARITY),
    "--parity-source",
    PARITY_SOURCE,
)

sys.path.insert(0, str(REPO / "scripts"))
from generate_on_demand_snapshot import TableError, parity_table, region_prices  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_regenerating_from_the_pinned_table_reproduces_the_committed_snapshot():
    result = run(*ARGS)
    assert result.returncode == 0, result.stderr
    assert result.stdout == SNAPSHOT.read_text()


def test_us_east_1_is_karpenters_price_dated_by_its_generation_and_us_west_2_is_marked_assumed():
    document = json.loads(SNAPSHOT.read_text())
    generated_at, prices = region_prices(TABLE.read_text(), "us-east-1")
    assert generated_at == "2026-07-20T13:44:30Z"
    east, west = (document["regions"][r]["on_demand"] for r in ("us-east-1", "us-west-2"))
    assert east["p5.48xlarge"] == {
        "usd_per_hour": 55.04,
        "observed_at": generated_at,
        "source": f"{SOURCE} (Apache-2.0), us-east-1 Linux on-demand, generated {generated_at}",
    }
    assert all(entry["usd_per_hour"] == prices[t] and "unverified" not in entry["source"] for t, entry in east.items())
    assumed = "assumed equal to us-east-1's price, unverified (no licensed table of us-west-2's current prices found; "
    assert all(
        entry["usd_per_hour"] == prices[t]
        and entry["source"].startswith(assumed)
        and entry["source"].endswith(f"): {east[t]['source']}")
        for t, entry in west.items()
    )
    checked = {
        t
        for t, entry in west.items()
        if f"us-west-2 and us-east-1 priced it the same in {PARITY_SOURCE})" in entry["source"]
    }
    unchecked = {
        t for t, entry in west.items() if f"{t} is not in {PARITY_SOURCE}: parity unchecked)" in entry["source"]
    }
    assert unchecked == {"g6.xlarge", "g6.12xlarge", "g6e.xlarge", "g6e.12xlarge"}  # launched after the table
    assert checked == set(west) - unchecked


def test_a_type_the_parity_table_prices_differently_in_the_two_regions_is_not_assumed_equal(tmp_path):
    table = parity_table(PARITY.read_text())
    assert table["us-west-2"]["p5.48xlarge"] == table["us-east-1"]["p5.48xlarge"] == 98.32  # 2024, before the cut
    changed = tmp_path / "parity.csv"
    changed.write_text(PARITY.read_text().replace("us-west-2,p5.48xlarge,98.32", "us-west-2,p5.48xlarge,98.33"))
    result = run(*ARGS[:-4], "--parity", str(changed), "--parity-source", "T")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "generate_on_demand_snapshot: T prices p5.48xlarge at 98.33 in us-west-2 and 98.32 in "
        "us-east-1: not assumed equal\n"
    )
    with pytest.raises(TableError, match="header is not `region,instance_type,usd_per_hour`"):
        parity_table("zone,instance_type,usd_per_hour\n")
    with pytest.raises(TableError, match="parity table line 3 is not `region,type,price`: us-east-1,g5.xlarge"):
        parity_table("region,instance_type,usd_per_hour\nus-east-1,t3.large,0.0832\nus-east-1,g5.xlarge\n")
    with pytest.raises(TableError, match="line 2 .*: us-east-1,t3.large,cheap"):
        parity_table("region,instance_type,usd_per_hour\nus-east-1,t3.large,cheap\n")
    assert run(*ARGS[:-2]).returncode == 2  # a parity table without its source is refused


def test_a_line_the_reader_does_not_understand_or_a_missing_type_stops_it(tmp_path):
    text = TABLE.read_text()
    with pytest.raises(TableError, match=r"line 191 is not `\"type\": price` pairs: \"g5.48xlarge\": 16.288000, "):
        region_prices(text.replace('"g5.xlarge": 1.006000,', '"g5.xlarge": price(),'), "us-east-1")
    with pytest.raises(TableError, match="not Karpenter's generated table"):
        region_prices(text.replace("// generated at", "// made at"), "us-east-1")
    with pytest.raises(TableError, match="no map for eu-west-1"):
        region_prices(text, "eu-west-1")
    with pytest.raises(TableError, match="us-east-1's map is not closed"):
        region_prices(text[: text.index("\t},\n}")], "us-east-1")
    without = tmp_path / "table.go"
    without.write_text(text.replace('"p5.48xlarge": 55.040000, ', ""))
    result = run("--table", str(without), "--region", "us-east-1", "--source", SOURCE)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "generate_on_demand_snapshot: the table has no price for us-east-1's p5.48xlarge\n"
