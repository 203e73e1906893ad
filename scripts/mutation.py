"""Mutation testing of the core packages with mutmut (pinned in the dev extras): how many one-line
mutations of each module the tests kill. A benchmark, not a test: `make mutation` runs it (tens of
minutes on two cores) and prints killed and survived per module and per package.

Each package runs in a fresh copy of the tracked files (mutmut writes `mutants/` beside the code), with
the tests that judge it; mutmut runs, for each mutant, the tests that reach the mutated function.
A mutant counts as killed when its tests fail; survived when they pass; a mutant no test reaches counts
as survived too (nothing would notice it).

A package too large to run whole in a session (the policy pack: about 4,500 mutants, many judged by tests
that run every rule over every stack) can be measured on a seeded random sample of its mutants
(`--sample N`): the share killed is then an estimate, printed with its 95 % interval.

A mutant whose tests outrun mutmut's time limit is rerun alone afterwards, with no CPU limit; only one
that still runs past 15 minutes is counted apart ("timed out"), outside the share.

Usage: .venv/bin/python scripts/mutation.py [--package NAME ...] [--keep DIR] [--sample N [--seed S]]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from seedance.charts import chart_cache  # noqa: E402  (the repository's own package, from its checkout)

# package -> (the modules mutated, the tests that judge them)
# (Tests that run the policy engine end to end judge its agreement with `seedance check`, not a rule's
# logic: they cover every function and would make every mutant cost half a minute.)
PACKAGES = {
    # The planner's own tests, the golden decisions, the lock's and the commitments' readers; those that plan
    # whole stacks, or replay a month of markets (the bench's), would run for every mutant (hours). Blocks,
    # the preview and holdings are the holdings package's.
    "decision": (
        [
            f"components/capacity/{m}.py"
            for m in (
                "planner",
                "plan",
                "context",
                "costs",
                "rules",
                "explanation",
                "lock",
                "config",
                "mix",
                "workload_classes",
            )
        ],
        [
            "tests/components/capacity/test_planner.py",
            "tests/components/capacity/test_planner_properties.py",
            "tests/components/capacity/test_mix.py",
            "tests/components/capacity/test_decision_golden.py",
            "tests/components/capacity/test_commitments.py",
            "tests/components/capacity/test_lock.py",
            "tests/components/capacity/test_config.py",
            "tests/components/capacity/test_plan.py",
            "tests/components/capacity/test_explanation.py",
            "tests/seedance/test_capacity_commands.py",
        ],
    ),
    "cost": (
        ["components/cost/estimate.py", "components/cost/gate.py"],
        [
            "tests/components/capacity/test_mix_pricing.py",
            "tests/components/cost",
            "tests/policies/test_unknowns.py",
            "tests/policies/test_spot_plans.py",
            "tests/policies/test_rules.py",
            "tests/infra/test_estimate_coverage.py",
            "tests/seedance/test_cost_gate.py",
        ],
    ),
    # The plan readers' own tests and the rules' (which read plans through them); those that plan whole
    # stacks twice (day two) or run checkov (the check command) would cost minutes a mutant.
    "plan-reading": (
        ["components/plan/*"],
        [
            "tests/components/plan",
            "tests/policies/test_unknowns.py",
            "tests/policies/test_rules.py",
            "tests/policies/test_security_gate.py",
        ],
    ),
    # What the account holds and Capacity Blocks (issue 38): readers, allocation, the block verdict, the preview.
    "holdings": (
        [
            "components/pricing/commitments.py",
            "components/capacity/holdings.py",
            "components/capacity/blocks.py",
            "components/capacity/preview.py",
        ],
        [
            "tests/components/capacity/test_commitments.py",
            "tests/components/capacity/test_blocks.py",
            "tests/components/capacity/test_preview.py",
            "tests/components/pricing/test_live_commitments.py",
        ],
    ),
    "policy": (
        ["policies/rules/*", "policies/readers/*", "policies/framework.py", "policies/expectations.py"],
        [
            "tests/policies/test_rules.py",
            "tests/policies/test_pack.py",
            "tests/policies/test_expectations.py",
            "tests/policies/test_security_gate.py",
            "tests/policies/test_spot_plans.py",
            "tests/policies/test_unknowns.py",
            "tests/policies/test_iam_meaning.py",
            "tests/policies/test_network_meaning.py",
            "tests/policies/test_pod_security_meaning.py",
            "tests/policies/test_rbac_meaning.py",
            "tests/policies/test_gate_attacks.py",
        ],
    ),
}
SOURCES = ["components", "policies", "seedance", "infra", "seedance_client"]
# What the tests read besides the code and the tests (mutmut copies the sources and tests/ itself).
ALSO_COPY = ["stacks", "Pulumi.yaml", "bench", "examples", "docs", "scripts", ".github", "Makefile", "README.md"]
# mutmut's exit codes per mutant: 0 the tests passed, 33 no test reaches it (both survived: nothing
# notices it), None and 34 not run (not reached yet, skipped); any other code is a failure or a timeout.
SURVIVED = {0, 33}
NOT_RUN = {None, 34}
# -24: the tests outran mutmut's time limit. Not a kill: a mutant's tests can pass and still be cut off (a
# prefer-spot boundary mutant was, and passed them in 55 s alone; forked runs that hung, below, were too).
# So each is rerun alone after the run, one at a time and without a CPU limit (`rerun_alone`); one whose
# tests still outrun RERUN_LIMIT_S is counted apart, and left out of the share.
TIMED_OUT = {-24}
RERUN_LIMIT_S = 900


def workspace(directory: Path, modules: list[str], tests: list[str]) -> Path:
    """The tracked files in `directory`, with mutmut's configuration for one package."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, check=True, capture_output=True, text=True).stdout.split()
    for name in tracked:
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    (directory / ".venv").symlink_to(REPO / ".venv")
    with (directory / "pyproject.toml").open("a") as config:
        config.write(
            "\n[tool.mutmut]\n" + f"source_paths = {json.dumps(SOURCES)}\n"
            f"only_mutate = {json.dumps(modules)}\n"
            f"also_copy = {json.dumps(ALSO_COPY)}\n"
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
            # Forked from a server that ran no test: forked from mutmut's own process (which ran them
            # all to collect coverage), mutants' test runs sat in a futex wait at ~10 % CPU until
            # mutmut's time limit (a lock some test's thread held at the fork), counted as timed out.
            'process_isolation = "forkserver"\n'
        )
    return directory


def verdicts(directory: Path) -> dict[str, Counter]:
    """killed / survived / not run per mutated module, from mutmut's result files."""
    per_module: dict[str, Counter] = {}
    for meta in sorted((directory / "mutants").rglob("*.py.meta")):
        module = meta.relative_to(directory / "mutants").as_posix()[: -len(".meta")]
        counts: Counter[str] = Counter()
        for code in json.loads(meta.read_text())["exit_code_by_key"].values():
            counts[
                "not run"
                if code in NOT_RUN
                else "survived"
                if code in SURVIVED
                else "timed out"
                if code in TIMED_OUT
                else "killed"
            ] += 1
        per_module[module] = counts
    return per_module


SAMPLE_SEED = 34  # the number: the same sample every run, so runs compare; --seed draws another


def mutant_names(directory: Path) -> list[str]:
    """Every mutant mutmut generated in `directory`, in a stable order."""
    return sorted(
        key
        for meta in (directory / "mutants").rglob("*.py.meta")
        for key in json.loads(meta.read_text())["exit_code_by_key"]
    )


def rerun_alone(directory: Path, environment: dict[str, str], limit_s: float = RERUN_LIMIT_S) -> Counter:
    """Each timed-out mutant's tests run again by themselves, as mutmut runs them (in `mutants/`, the mutant
    chosen by MUTANT_UNDER_TEST, the tests that reached its function in mutmut's stats run, stopping at the
    first failure) but with no CPU limit and nothing else running; its verdict is written back to mutmut's
    result file. Returns the new verdicts' counts."""
    from mutmut.utils.format_utils import mangled_name_from_mutant_name

    reaching = json.loads((directory / "mutants" / "mutmut-stats.json").read_text())["tests_by_mangled_function_name"]
    outcome: Counter[str] = Counter()
    for meta in sorted((directory / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        timed_out = [mutant for mutant, code in data["exit_code_by_key"].items() if code in TIMED_OUT]
        for mutant in timed_out:
            tests = sorted(reaching.get(mangled_name_from_mutant_name(mutant.replace("__init__.", "")), []))
            command = [
                str(REPO / ".venv" / "bin" / "python"),
                "-m",
                "pytest",
                "--rootdir=.",
                "--tb=native",
                "-x",
                "-q",
                "-p",
                "no:randomly",
                "-p",
                "no:random-order",
                *tests,
            ]
            try:
                done = subprocess.run(
                    command,
                    cwd=directory / "mutants",
                    capture_output=True,
                    timeout=limit_s,
                    env={**environment, "MUTANT_UNDER_TEST": mutant},
                )
            except subprocess.TimeoutExpired:
                outcome["timed out"] += 1
                continue
            data["exit_code_by_key"][mutant] = done.returncode
            outcome["survived" if done.returncode in SURVIVED else "killed"] += 1
        if timed_out:
            meta.write_text(json.dumps(data))
    return outcome


def run(package: str, keep: Path | None, sample: int | None = None, seed: int = SAMPLE_SEED) -> dict[str, Counter]:
    modules, tests = PACKAGES[package]
    with tempfile.TemporaryDirectory() as scratch:
        directory = workspace(Path(scratch) / package, modules, tests)
        started = time.perf_counter()
        # The copy sits elsewhere, so the chart tests find the pinned charts where this checkout does.
        environment = {**os.environ, "SEEDANCE_CHART_CACHE": str(chart_cache())}
        mutmut = [str(REPO / ".venv" / "bin" / "mutmut"), "run"]
        chosen: list[str] = []
        if sample:
            # A filter that matches nothing: mutmut generates every mutant and the tests' coverage, then stops.
            subprocess.run([*mutmut, "no-such-mutant"], cwd=directory, capture_output=True, text=True, env=environment)
            every = mutant_names(directory)
            if not every:
                raise SystemExit(f"mutmut generated no mutants for {package}")
            chosen = sorted(random.Random(seed).sample(every, min(sample, len(every))))
            print(f"{package}: a sample of {len(chosen)} of {len(every)} mutants (seed {seed})")
        done = subprocess.run([*mutmut, *chosen], cwd=directory, capture_output=True, text=True, env=environment)
        if done.returncode != 0:
            raise SystemExit(f"mutmut failed for {package}: {(done.stdout + done.stderr)[-3000:]}")
        rerun = rerun_alone(directory, environment)
        if rerun:
            print(
                f"{package}: {sum(rerun.values())} timed out under mutmut; rerun alone: "
                + ", ".join(f"{count} {verdict}" for verdict, count in sorted(rerun.items()))
            )
        results = verdicts(directory)
        print(f"{package}: {time.perf_counter() - started:.0f} s")
        if keep:
            shutil.copytree(directory / "mutants", keep / package, dirs_exist_ok=True)
    return results


def wilson(killed: int, judged: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a sample's share killed: unlike the normal approximation it
    does not shrink to nothing when every sampled mutant is killed (60 of 60 is 94-100 %, not 100 %)."""
    share, spread = killed / judged, z * z / judged
    centre = (share + spread / 2) / (1 + spread)
    half = z * math.sqrt(share * (1 - share) / judged + spread / (4 * judged)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", choices=sorted(PACKAGES), help="default: every package")
    parser.add_argument("--keep", type=Path, help="copy mutmut's results here (to read survivors with mutmut show)")
    parser.add_argument("--sample", type=int, help="run a seeded random sample of this many mutants per package")
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED, help=f"the sample's seed (default {SAMPLE_SEED})")
    args = parser.parse_args()
    summary = []
    for package in args.package or PACKAGES:
        results = run(package, args.keep, args.sample, args.seed)
        for module, counts in results.items():
            judged = counts["killed"] + counts["survived"]
            print(
                f"  {module:48} killed {counts['killed']:4d}  survived {counts['survived']:4d}  "
                f"({counts['killed'] / judged:.0%} killed){_timeouts(counts['timed out'])}"
                if judged
                else f"  {module:48} {'none sampled' if counts['not run'] else 'no mutants'}"
            )
        total = sum(results.values(), Counter())
        judged = total["killed"] + total["survived"]
        summary.append(
            (
                package,
                total["killed"],
                total["survived"],
                total["killed"] / judged if judged else 1.0,
                total["timed out"],
            )
        )
    print()
    for package, killed, survived, share, timed_out in summary:
        interval = (
            " (sample; 95 % interval {:.1f}%-{:.1f}%)".format(*(100 * x for x in wilson(killed, killed + survived)))
            if args.sample and killed + survived
            else ""
        )
        print(
            f"{package:14} killed {killed:5d}  survived {survived:5d}  {share:.1%}{interval} killed (goal 90 %)"
            f"{_timeouts(timed_out)}"
        )
    return 0


def _timeouts(count: int) -> str:
    return f"; {count} timed out, not counted" if count else ""


if __name__ == "__main__":
    sys.exit(main())
