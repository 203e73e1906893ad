#!/usr/bin/env python3
"""Derive a per-team (per-VC) GPU demand history from the Helios "Earth" cluster.

Input: the per-virtual-cluster minute-by-minute sequence files published in
  github.com/S-Lab-System-Group/HeliosArtifact
  commit bdaae109c21f8038a2331e6a23a582d5ae78ab5b
  "analysis/2_cluster characterization/Earth_vcs/<vc>/cluster_sequence_vc.csv"
(derived by the Helios authors from the Earth cluster_log.csv of
github.com/S-Lab-System-Group/HeliosData; data licence CC BY 4.0, artifact
repository licence MIT -- see README.md next to this script).

Output: CSV with header  time,tenant,class,gpus,quota
  time    ISO 8601, suffixed Z (the trace's wall-clock is copied unchanged;
          the source states no time zone -- see README.md)
  tenant  "vc-" + the Helios VC hash without its "vc" prefix, lower-cased
  class   always "batch"
  gpus    GPUs requested by that VC's running + pending (queued) GPU jobs at
          that instant = total_gpu_num_noless_8 + total_gpu_num_less_8
          (the un-capped sum; the source's running_gpu_num column is clipped to
          the VC's GPU quota, the split columns are not)
  quota   the VC's GPU quota then (the source's total_gpu_num column)

Standard library only.  Two ways to read the input:
  --src DIR        DIR is a checkout's ".../Earth_vcs" directory (it holds
                   <vc>/cluster_sequence_vc.csv)
  --git-dir GITDIR a (bare) git directory of HeliosArtifact; files are read
                   with `git show <commit>:<path>` (needs the git binary)

Example:
  git clone https://github.com/S-Lab-System-Group/HeliosArtifact
  git -C HeliosArtifact checkout bdaae109c21f8038a2331e6a23a582d5ae78ab5b
  python3 derive.py --src "HeliosArtifact/analysis/2_cluster characterization/Earth_vcs" \
      --out helios-earth-2020-05-hourly.csv
"""

import argparse
import csv
import io
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta

COMMIT = "bdaae109c21f8038a2331e6a23a582d5ae78ab5b"
EARTH_VCS = "analysis/2_cluster characterization/Earth_vcs"
SEQ_NAME = "cluster_sequence_vc.csv"
DEMAND_COLS = ("total_gpu_num_noless_8", "total_gpu_num_less_8")
QUOTA_COL = "total_gpu_num"  # the VC's GPU quota (running_gpu_num is capped at it)


def list_vcs_dir(src):
    return sorted(d for d in os.listdir(src) if os.path.isfile(os.path.join(src, d, SEQ_NAME)))


def read_vc_dir(src, vc):
    with open(os.path.join(src, vc, SEQ_NAME), newline="") as f:
        return f.read()


def list_vcs_git(git_dir, commit):
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "--name-only", f"{commit}:{EARTH_VCS}/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    return sorted(d for d in out if d.startswith("vc"))


def read_vc_git(git_dir, commit, vc):
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{EARTH_VCS}/{vc}/{SEQ_NAME}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def parse_series(text):
    """Return {datetime: (demand_gpus, quota_gpus)} at minute resolution."""
    series = {}
    for row in csv.DictReader(io.StringIO(text)):
        t = datetime.strptime(row["time"], "%Y-%m-%d %H:%M:%S")
        series[t] = (sum(int(row[c]) for c in DEMAND_COLS), int(row[QUOTA_COL]))
    return series


def tenant_name(vc):
    name = "vc-" + vc[2:].lower()
    if not re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", name):
        raise ValueError(f"cannot make a valid tenant name from {vc!r}")
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--src", help="path of the Earth_vcs directory")
    g.add_argument("--git-dir", help="git directory of HeliosArtifact")
    ap.add_argument("--commit", default=COMMIT, help="commit to read with --git-dir")
    ap.add_argument("--out", required=True, help="output CSV path")
    ap.add_argument("--top", type=int, default=8, help="keep the N VCs with the most demand GPU-hours (default 8)")
    ap.add_argument("--step-minutes", type=int, default=60, help="grid step in minutes (default 60)")
    ap.add_argument(
        "--start", default="2020-05-01T00:00:00", help="first grid time, trace clock (default 2020-05-01T00:00:00)"
    )
    ap.add_argument(
        "--end", default="2020-05-31T23:59:00", help="last allowed grid time, inclusive (default 2020-05-31T23:59:00)"
    )
    args = ap.parse_args()

    if args.src:
        vcs = list_vcs_dir(args.src)
        texts = {vc: read_vc_dir(args.src, vc) for vc in vcs}
    else:
        vcs = list_vcs_git(args.git_dir, args.commit)
        texts = {vc: read_vc_git(args.git_dir, args.commit, vc) for vc in vcs}
    if not vcs:
        sys.exit("no <vc>/cluster_sequence_vc.csv files found")

    series = {vc: parse_series(texts[vc]) for vc in vcs}

    names = {vc: tenant_name(vc) for vc in vcs}
    if len(set(names.values())) != len(names):
        sys.exit("tenant names collide after lower-casing")

    start = datetime.fromisoformat(args.start)
    end = datetime.fromisoformat(args.end)
    step = timedelta(minutes=args.step_minutes)

    # rank VCs by demand GPU-hours over the window, at the source's minute resolution
    def gpu_minutes(vc):
        return sum(v for t, (v, _quota) in series[vc].items() if start <= t <= end)

    ranked = sorted(vcs, key=lambda vc: (-gpu_minutes(vc), vc))
    keep = ranked[: args.top]

    grid = []
    t = start
    while t <= end:
        grid.append(t)
        t += step

    rows = 0
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time", "tenant", "class", "gpus", "quota"])
        for t in grid:
            stamp = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            for vc in sorted(keep, key=lambda v: names[v]):
                if t not in series[vc]:
                    sys.exit(f"{vc}: no sample at {t}")
                w.writerow([stamp, names[vc], "batch", *series[vc][t]])
                rows += 1

    print(f"wrote {args.out}: {rows} rows, {len(grid)} times x {len(keep)} tenants", file=sys.stderr)
    for vc in ranked:
        mark = "*" if vc in keep else " "
        vals = [series[vc][t][0] for t in grid]
        print(
            f"{mark} {vc:6s} {names[vc]:8s} demand GPU-h (minute data) "
            f"{gpu_minutes(vc) / 60:9.0f}  grid mean {sum(vals) / len(vals):6.1f} "
            f"max {max(vals):4d}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
