"""Every script in bench/ runs at a smoke size inside `make test`, so a bench that no longer runs fails
the suite instead of rotting unseen (its figures are the bench's to print, not the tests' to judge)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = {
    "check_speed.py": ["--smoke"],
    "plan_speed.py": ["--repeat", "1"],
    "quota_replay.py": ["--smoke"],
    "replay_capacity.py": ["--regime", "scarce", "--seeds", "1", "--days", "2", "--campaigns", "2"],
    "venv_install.py": ["--smoke"],
}


def test_every_bench_has_a_smoke_run():
    assert {p.name for p in (REPO / "bench").glob("*.py")} == set(SMOKE)


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_the_bench_runs_and_prints_measured_figures(script):
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *SMOKE[script]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"\d+\.\d+", done.stdout), done.stdout  # a figure, measured
