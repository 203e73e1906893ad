"""Prometheus's own engine for the rules and queries the program ships: `promtool` (Debian's prometheus
package, which .ci/run installs). Missing, the tests that need it fail and say how to get it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        raise AssertionError(
            "promtool is not installed: `apt-get install prometheus` (Debian's package carries it; .ci/run installs it)"
        )
    return found


def write_rules(directory: Path, files: dict[str, dict]) -> list[str]:
    for name, document in files.items():
        (directory / name).write_text(yaml.safe_dump(document, sort_keys=False))
    return list(files)


def check_rules(directory: Path, files: dict[str, dict]) -> subprocess.CompletedProcess:
    names = write_rules(directory, files)
    return subprocess.run([promtool(), "check", "rules", *names], cwd=directory, capture_output=True, text=True)


def test_rules(
    directory: Path, files: dict[str, dict], tests: list[dict], interval: str = "1m"
) -> subprocess.CompletedProcess:
    """Run promtool's rule unit tests (`tests`: its test groups) against the rule files."""
    names = write_rules(directory, files)
    (directory / "tests.yml").write_text(
        yaml.safe_dump({"rule_files": names, "evaluation_interval": interval, "tests": tests}, sort_keys=False)
    )
    return subprocess.run([promtool(), "test", "rules", "tests.yml"], cwd=directory, capture_output=True, text=True)
