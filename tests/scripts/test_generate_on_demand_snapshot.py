"""The bundled snapshot's on-demand prices are generated from a pinned, licensed source (issue 38, item 5):
us-east-1's from Karpenter's generated table (a copy, Apache header kept, in tests/fixtures), us-west-2's
the same prices marked as an assumption; regenerating changes nothing, and a table the reader does not
understand or that lacks a listed type stops it."""

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

sys.path.insert(0, str(REPO / "scripts"))
from generate_on_demand_snapshot import TableError, region_prices  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_regenerating_from_the_pinned_table_reproduces_the_committed_snapshot():
    result = run("--table", str(TABLE), "--region", "us-east-1", "--assumed-in", "us-west-2", "--source", SOURCE)
    assert result.returncode == 0, result.stderr
    assert result.stdout == SNAPSHOT.read_text()


def test_us_east_1_is_karpenters_price_dated_by_its_generation_and_us_west_2_is_marked_assumed():
    document = json.loads(SNAPSHOT.read_text())
    generated_at, prices = region_prices(TABLE.read_text(), "us-east-1")
    assert generated_at == "2026-07-20T13:44:30Z"
    east, west = (document["regions"][r]["on_demand"] for r in ("us-east-1", "us-west-2"))
    assert east["p5.48xlarge"] == {
        "usd_per_hour": 55.04, "observed_at": generated_at,
        "source": f"{SOURCE} (Apache-2.0), us-east-1 Linux on-demand, generated {generated_at}"}
    assert all(entry["usd_per_hour"] == prices[t] and "unverified" not in entry["source"] for t, entry in east.items())
    assert all(entry["usd_per_hour"] == prices[t] and entry["source"].startswith(
        "assumed equal to us-east-1's price, unverified (no licensed us-west-2 table found): ") for t, entry in west.items())


def test_a_line_the_reader_does_not_understand_or_a_missing_type_stops_it(tmp_path):
    text = TABLE.read_text()
    with pytest.raises(TableError, match=r"line 191 is not `\"type\": price` pairs: \"g5.48xlarge\": 16.288000, "):
        region_prices(text.replace('"g5.xlarge": 1.006000,', '"g5.xlarge": price(),'), "us-east-1")
    with pytest.raises(TableError, match="not Karpenter's generated table"):
        region_prices(text.replace("// generated at", "// made at"), "us-east-1")
    with pytest.raises(TableError, match="no map for eu-west-1"):
        region_prices(text, "eu-west-1")
    with pytest.raises(TableError, match="us-east-1's map is not closed"):
        region_prices(text[:text.index("\t},\n}")], "us-east-1")
    without = tmp_path / "table.go"
    without.write_text(text.replace('"p5.48xlarge": 55.040000, ', ""))
    result = run("--table", str(without), "--region", "us-east-1", "--source", SOURCE)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "generate_on_demand_snapshot: the table has no price for us-east-1's p5.48xlarge\n"
