#!/usr/bin/env python3
"""Write the bundled snapshot's on-demand prices of a region from Karpenter's generated price table
(components/pricing/data/price_snapshot.json, `regions.<region>.on_demand`).

Input: `pkg/providers/pricing/zz_generated.pricing_aws.go` of github.com/aws/karpenter-provider-aws
(Apache-2.0), which Karpenter's CI regenerates from the AWS Pricing API: one Go map literal per region,
`"<type>": <USD per hour>,` pairs, under a `// generated at <time> for <regions>` line. It holds
us-east-1 only. The snapshot's types for that region are rewritten with Karpenter's price, dated by its
generation time and sourced to the commit given; a type the table lacks stops the run (exit 2, named),
as does any line of the region's map this reader does not understand. `--assumed-in R` writes the same
prices into region R's types, each marked an unverified assumption (no licensed table of R's current prices
was found). `--parity CSV` checks that assumption against an older licensed table (`region,instance_type,
usd_per_hour` rows, named by `--parity-source`): a type both regions priced the same there says so in its
source, a type it lacks says its parity is unchecked, and a type they priced differently stops the run
(exit 2). Every other price is left alone.

Usage:
  generate_on_demand_snapshot.py --table zz_generated.pricing_aws.go --region us-east-1 \
      --source "aws/karpenter-provider-aws@6fc13b52 pkg/providers/pricing/zz_generated.pricing_aws.go" \
      [--assumed-in us-west-2 --parity on_demand.csv --parity-source "..."] \
      [--snapshot components/pricing/data/price_snapshot.json] [--out FILE]
Stdlib only (and the package's own price module, for the mark of an assumed price).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Callable
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
    for number, line in enumerate(lines[start + 1 :], start + 2):
        text = line.strip()
        if text == "},":
            return generated.group(1), prices
        if not text or text.startswith("//"):
            continue
        pairs = _PAIR.findall(text)
        if _PAIR.sub("", text).strip():
            raise TableError(f'line {number} is not `"type": price` pairs: {text[:80]}')
        prices.update((name, float(value)) for name, value in pairs)
    raise TableError(f"{region}'s map is not closed")


def parity_table(csv_text: str) -> dict[str, dict[str, float]]:
    """{region: {type: USD per hour}} of a parity table's rows."""
    rows = list(csv.reader(csv_text.splitlines()))
    if not rows or rows[0] != ["region", "instance_type", "usd_per_hour"]:
        raise TableError("the parity table's header is not `region,instance_type,usd_per_hour`")
    table: dict[str, dict[str, float]] = {}
    for number, row in enumerate(rows[1:], 2):
        try:
            region, instance_type, price = row
            table.setdefault(region, {})[instance_type] = float(price)
        except ValueError:
            raise TableError(f"parity table line {number} is not `region,type,price`: {','.join(row)[:80]}") from None
    return table


def parity_evidence(
    instance_type: str, region: str, base: str, table: dict[str, dict[str, float]], table_source: str
) -> str:
    """What the parity table says of pricing `instance_type` in `region` at `base`'s price."""
    theirs, ours = table.get(region, {}).get(instance_type), table.get(base, {}).get(instance_type)
    if theirs is None or ours is None:
        return f"{instance_type} is not in {table_source}: parity unchecked"
    if theirs != ours:
        raise TableError(
            f"{table_source} prices {instance_type} at {theirs} in {region} and {ours} in {base}: not assumed equal"
        )
    return f"{region} and {base} priced it the same in {table_source}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--source", required=True, help="the table's repository, commit and path")
    parser.add_argument(
        "--assumed-in",
        action="append",
        default=[],
        metavar="REGION",
        help="also price REGION's listed types at these prices, marked as an assumption",
    )
    parser.add_argument("--parity", type=Path, help="an older licensed table to check the assumption against")
    parser.add_argument("--parity-source", default="", help="the parity table's repository, commit, licence and date")
    parser.add_argument("--snapshot", type=Path, default=SNAPSHOT)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if bool(args.parity) != bool(args.parity_source):
        parser.error("--parity and --parity-source go together")
    document = json.loads(args.snapshot.read_text())
    try:
        generated_at, prices = region_prices(args.table.read_text(), args.region)
        source = f"{args.source} (Apache-2.0), {args.region} Linux on-demand, generated {generated_at}"
        _write(document, args.region, prices, generated_at, lambda _: source)
        parity = parity_table(args.parity.read_text()) if args.parity else None
        for region in args.assumed_in:

            def assumed_source(instance_type: str, region: str = region) -> str:
                evidence = (
                    f"; {parity_evidence(instance_type, region, args.region, parity, args.parity_source)}"
                    if parity is not None
                    else ""
                )
                return (
                    f"assumed equal to {args.region}'s price, {ASSUMED_PRICE_MARK} (no licensed table of "
                    f"{region}'s current prices found{evidence}): {source}"
                )

            _write(document, region, prices, generated_at, assumed_source)
    except (TableError, KeyError) as error:
        print(f"generate_on_demand_snapshot: {error}", file=sys.stderr)
        return 2
    return write_table(document, args.out)


def _write(
    document: dict, region: str, prices: dict[str, float], generated_at: str, source_of: Callable[[str], str]
) -> None:
    listed = document["regions"][region]["on_demand"]
    missing = sorted(set(listed) - set(prices))
    if missing:
        raise TableError(f"the table has no price for {region}'s {', '.join(missing)}")
    for instance_type in listed:
        listed[instance_type] = {
            "usd_per_hour": prices[instance_type],
            "observed_at": generated_at,
            "source": source_of(instance_type),
        }


if __name__ == "__main__":
    sys.exit(main())
