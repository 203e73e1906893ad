#!/usr/bin/env python3
"""Generate, for each AWS type the program declares, the properties the pinned pulumi-aws SDK gives it and
which of them only the provider sets (computed outputs such as `arn`, `keyId`, `latestVersion`), so the
offline engine (seedance/offline_cloud.py) answers what the provider would and nothing it would not.

Read from the installed SDK's Python source (pulumi-aws is pinned exactly in pyproject.toml): a resource
class carries `@pulumi.type_token("<token>")`; its output getters (`@pulumi.getter(name="wireName")`) are
its properties on the wire; `_internal_init` sets `__props__.__dict__["x"] = None` for exactly the
properties no input sets (the provider computes them).

Usage:
  generate_computed_outputs.py --pulumi-sdk .venv/lib/python3.11/site-packages/pulumi_aws \
      --types scripts/force_new_types.json --pulumi-aws-version 7.51.1 \
      [--out components/plan/data/computed_outputs.aws.json]
Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from generated_table import write_table

TYPE_TOKEN = re.compile(r'@pulumi\.type_token\("(aws:[^"]+)"\)\s*class (\w+)\(pulumi\.CustomResource\)')
GETTER = re.compile(
    r'@pulumi\.getter(?:\(name="(\w+)"\))?\s*(?:@_utilities\.deprecated\(""".*?"""\)\s*)?def (\w+)\(self\)', re.S
)
COMPUTED = re.compile(r'__props__\.__dict__\["(\w+)"\] = None')


class SdkChanged(Exception):
    """The SDK's source is not shaped as this reader expects."""


def resource_classes(sdk: Path) -> dict[str, tuple[str, str]]:
    """token -> (the class's source, its name), for every custom resource in the SDK."""
    found = {}
    for path in sorted(sdk.rglob("*.py")):
        text = path.read_text()
        for match in TYPE_TOKEN.finditer(text):
            start = match.end()
            following = re.search(r"\n(?:@|class )", text[start:])
            found[match.group(1)] = (
                text[start : start + following.start()] if following else text[start:],
                match.group(2),
            )
    return found


def outputs_of(source: str, token: str) -> dict[str, list[str]]:
    wire = {snake: name or snake for name, snake in GETTER.findall(source)}
    if not wire:
        raise SdkChanged(f"{token}: no output getters")
    init = source.find("def _internal_init")
    end = source.find("super(", init)
    if init < 0 or end < 0:
        raise SdkChanged(f"{token}: no _internal_init")
    computed = COMPUTED.findall(source[init:end])
    unknown = [name for name in computed if name not in wire]
    if unknown:
        raise SdkChanged(f"{token}: computed {unknown} without a getter")
    return {"properties": sorted(wire.values()), "computed": sorted(wire[name] for name in computed)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pulumi-sdk", type=Path, required=True, help="the installed pulumi_aws package directory")
    parser.add_argument("--types", type=Path, required=True, help="the program's AWS types (force_new_types.json)")
    parser.add_argument("--pulumi-aws-version", required=True)
    parser.add_argument("--out", type=Path, help="default: standard output")
    args = parser.parse_args(argv)
    rows = json.loads(args.types.read_text())
    tokens = sorted(rows) if isinstance(rows, dict) else sorted(row[0] for row in rows)
    classes = resource_classes(args.pulumi_sdk)
    try:
        missing = [t for t in tokens if t not in classes]
        if missing:
            raise SdkChanged(f"the SDK has no resource {', '.join(missing)}")
        types = {token: outputs_of(classes[token][0], token) for token in tokens}
    except SdkChanged as error:
        print(f"generate_computed_outputs: {error}", file=sys.stderr)
        return 2
    document = {
        "generated_by": "scripts/generate_computed_outputs.py",
        "pulumi-aws": args.pulumi_aws_version,
        "types": types,
    }
    return write_table(document, args.out, indent=1)


if __name__ == "__main__":
    sys.exit(main())
