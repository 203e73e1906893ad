#!/usr/bin/env python3
"""Build the gate's IAM reference from two public, licensed sources (policies/data/):

- `aws_managed_policies.json.gz`: the default version of every AWS-managed policy, from a checkout of
  github.com/iann0036/iam-dataset (MIT), `aws/managedpolicies/*.json`: name, ARN, version, date, document.
  A file the checkout lacks (a large blob a partial mirror left out) is named in `absent`, a policy AWS no
  longer offers (the dataset gives it no ARN) in `withdrawn`: the gate does not know either, so prod
  refuses them.
- `escalation_actions.json`: the privilege-escalation methods and the data-exfiltration actions of
  Cloudsplaining (github.com/salesforce/cloudsplaining, BSD-3-Clause), read from
  `cloudsplaining/shared/constants.py` as literals (never imported).

Usage:
  generate_iam_reference.py --iam-dataset ~/src/iam-dataset --cloudsplaining ~/src/cloudsplaining \
      [--out policies/data]
Each checkout is a git work tree or a bare repository: files are read at HEAD, whose commit and date are
recorded. Stdlib and git only; deterministic for the same commits.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import subprocess
import sys
from pathlib import Path

from generated_table import write_table

ROOT = Path(__file__).resolve().parents[1]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _provenance(repo: Path, url: str, licence: str, path: str) -> dict[str, str]:
    commit, date = _git(repo, "log", "-1", "--format=%H %cI").split()
    return {"repository": url, "commit": commit, "committed": date, "path": path, "licence": licence}


def managed_policies(repo: Path) -> dict:
    folder = "aws/managedpolicies/"
    policies: dict[str, dict] = {}
    absent, withdrawn = [], []
    for line in _git(repo, "ls-tree", "HEAD", folder).splitlines():
        name = line.split("\t", 1)[1]
        if not name.endswith(".json"):
            continue
        shown = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True, text=True)
        if shown.returncode != 0:
            absent.append(Path(name).stem)
            continue
        entry = json.loads(shown.stdout)
        if not entry.get("arn"):
            withdrawn.append(Path(name).stem)
            continue
        policies[entry["name"]] = {
            "arn": entry["arn"],
            "version": entry["version"],
            "updated": entry["updatedate"],
            "document": entry["document"],
        }
    source = _provenance(repo, "https://github.com/iann0036/iam-dataset", "MIT", folder)
    return {
        "_source": {**source, "absent": sorted(absent), "withdrawn": sorted(withdrawn)},
        "policies": dict(sorted(policies.items())),
    }


def _literals(source: str, names: tuple[str, ...]) -> dict:
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in names:
                found[node.targets[0].id] = ast.literal_eval(node.value)
    missing = set(names) - set(found)
    if missing:
        raise SystemExit(f"constants.py no longer defines {', '.join(sorted(missing))}")
    return found


def escalation_actions(repo: Path) -> dict:
    path = "cloudsplaining/shared/constants.py"
    constants = _literals(
        _git(repo, "show", f"HEAD:{path}"), ("PRIVILEGE_ESCALATION_METHODS", "READ_ONLY_DATA_EXFILTRATION_ACTIONS")
    )
    version = _git(repo, "describe", "--tags", "--always").strip()
    source = _provenance(repo, "https://github.com/salesforce/cloudsplaining", "BSD-3-Clause", path)
    return {
        "_source": {**source, "version": version},
        "privilege_escalation": constants["PRIVILEGE_ESCALATION_METHODS"],
        "data_exfiltration": constants["READ_ONLY_DATA_EXFILTRATION_ACTIONS"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iam-dataset", type=Path, required=True)
    parser.add_argument("--cloudsplaining", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "policies/data")
    args = parser.parse_args(argv)
    text = json.dumps(managed_policies(args.iam_dataset), sort_keys=True, separators=(",", ":"))
    # mtime 0: the same commits give the same bytes.
    (args.out / "aws_managed_policies.json.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    return write_table(escalation_actions(args.cloudsplaining), args.out / "escalation_actions.json")


if __name__ == "__main__":
    sys.exit(main())
