#!/usr/bin/env python3
"""Cut the Spot Instance Advisor's data down to the GPU types and regions this package knows, as the
bundled snapshot `seedance plan` previews with (components/pricing/data/spot_advisor.json).

Input: a copy of the advisor's feed (https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json, the
format `components.pricing.advisor.interruption_frequencies` reads; a dated public copy is
`internal/spot/data/spot-advisor-data.json` in github.com/alexei-led/spotinfo, Apache-2.0). Kept: `ranges`
and, per region and type, Linux's {"s": saving over on-demand %, "r": interruption band}; with the
provenance given on the command line.

Usage:
  generate_spot_advisor_snapshot.py --feed spot-advisor-data.json --observed 2025-06-28 \
      --source "alexei-led/spotinfo@5eedf20a... internal/spot/data/spot-advisor-data.json (Apache-2.0)" \
      [--out components/pricing/data/spot_advisor.json]
Stdlib only; run from the repository root (it reads the package's region and GPU tables).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from generated_table import write_table

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feed", type=Path, required=True)
    parser.add_argument("--observed", required=True, help="the date the data is from (YYYY-MM-DD)")
    parser.add_argument("--source", required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    feed = json.loads(args.feed.read_text())
    types = sorted(json.loads((ROOT / "components/catalog/data/gpu_instance_types.json").read_text())["types"])
    regions = sorted(json.loads((ROOT / "components/catalog/data/aws_regions.json").read_text())["regions"])
    advisor = {
        region: {
            "Linux": {
                t: feed["spot_advisor"][region]["Linux"][t]
                for t in types
                if t in feed["spot_advisor"].get(region, {}).get("Linux", {})
            }
        }
        for region in regions
    }
    document = {
        "_source": {
            "source": args.source,
            "observed": args.observed,
            "licence": "Apache-2.0",
            "generated_by": "scripts/generate_spot_advisor_snapshot.py",
        },
        "ranges": feed["ranges"],
        "spot_advisor": advisor,
    }
    return write_table(document, args.out)


if __name__ == "__main__":
    sys.exit(main())
