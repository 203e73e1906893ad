#!/usr/bin/env python3
"""Write the bundled snapshot's on-demand prices of a region from Karpenter's generated price table
(components/pricing/data/price_snapshot.json, `regions.<region>.on_demand`).

Input: `pkg/providers/pricing/zz_generated.pricing_aws.go` of github.com/aws/karpenter-provider-aws
(Apache-2.0), which Karpenter's CI regenerates from the AWS Pricing API: one Go map literal per region,
`"<type>": <USD per hour>,` pairs, under a `// generated at <time> for <regions>` line. It holds
us-east-1 only. The snapshot's types for that region are rewritten with Karpenter's price, dated by its
generation time and sourced to the commit given; a type the table lacks stops the run (exit 2, named),
as does any line of the region's map this reader does not understand. `--assumed-in R` writes the same
prices into region R's types, each marked an unverified assumption (no licensed table of R's prices was
found). Every other price is left alone.

Usage:
  generate_on_demand_snapshot.py --table zz_generated.pricing_aws.go --region us-east-1 \
      --source "aws/karpenter-provider-aws@6fc13b52 pkg/providers/pricing/zz_generated.pricing_aws.go" \
      [--assumed-in us-west-2] [--snapshot components/pricing/data/price_snapshot.json] [--out FILE]
Stdlib only (and the package's own price module, for the mark of an assumed price).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from generated_table import write_table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from components.pricing.prices import ASSUMED_PRICE_MARK  # noqa: E402
SNAPSHOT = ROOT / "components/pricing/data/price_snapshot.json"
_GENERATED = re.compile(r"^// generated at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) for ", re.M)
_PAIR = re.compile(r'"([a-z0-9-]+\.[a-z0-9-]+)": ([0-9]+\.[0-9]+),?')


class TableError(Exception):
    pass


def region_prices(go_source: str, region: str) -> tuple[str, dict[str, float]]:
    """(generation time, {type: USD per hour}) of one region's map in Karpenter's table."""
    generated = _GENERATED.search(go_source)
    if not generated:
        raise TableError("no `// generated at <time> for <regions>` line: not Karpenter's generated table")
    lines = go_source.splitlines()
    try:
        start = lines.index(f'\t"{region}": {{')
    except ValueError:
        raise TableError(f"the table has no map for {region}") from None
    prices: dict[str, float] = {}
    for number, line in enumerate(lines[start + 1:], start + 2):
        text = line.strip()
        if text == "},":
            return generated.group(1), prices
        if not text or text.startswith("//"):
            continue
        pairs = _PAIR.findall(text)
        if _PAIR.sub("", text).strip():
            raise TableError(f"line {number} is not `\"type\": price` pairs: {text[:80]}")
        prices.update((name, float(value)) for name, value in pairs)
    raise TableError(f"{region}'s map is not closed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--source", required=True, help="the table's repository, commit and path")
    parser.add_argument("--assumed-in", action="append", default=[], metavar="REGION",
                        help="also price REGION's listed types at these prices, marked as an assumption")
    parser.add_argument("--snapshot", type=Path, default=SNAPSHOT)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    document = json.loads(args.snapshot.read_text())
    try:
        generated_at, prices = region_prices(args.table.read_text(), args.region)
        source = f"{args.source} (Apache-2.0), {args.region} Linux on-demand, generated {generated_at}"
        _write(document, args.region, prices, generated_at, source)
        for region in args.assumed_in:
            _write(document, region, prices, generated_at,
                   f"assumed equal to {args.region}'s price, {ASSUMED_PRICE_MARK} (no licensed {region} table found): {source}")
    except (TableError, KeyError) as error:
        print(f"generate_on_demand_snapshot: {error}", file=sys.stderr)
        return 2
    return write_table(document, args.out)


def _write(document: dict, region: str, prices: dict[str, float], generated_at: str, source: str) -> None:
    listed = document["regions"][region]["on_demand"]
    missing = sorted(set(listed) - set(prices))
    if missing:
        raise TableError(f"the table has no price for {region}'s {', '.join(missing)}")
    for instance_type in listed:
        listed[instance_type] = {"usd_per_hour": prices[instance_type], "observed_at": generated_at, "source": source}


if __name__ == "__main__":
    sys.exit(main())
