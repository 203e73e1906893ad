"""What `make plan` pays on a fresh machine against `make test`: two new virtualenvs in a temporary
folder, one with the package alone (what the main job installs) and one with the dev extras (what the
tests install), each timed from `python -m venv` to the last `pip install`, with its size on disk and
its count of installed distributions. Same process, same pip cache, so the ratio is what the split
saves; the absolute seconds depend on the network and the cache. Run: .venv/bin/python bench/venv_install.py
[--smoke] (--smoke: the package alone without its dependencies in both venvs: that the bench
runs, as `make test` checks, not its figures)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def source_copy(folder: Path) -> Path:
    """The tracked files, copied: building the wheel in the work tree would leave build/ behind."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, check=True, capture_output=True, text=True).stdout.split()
    for name in files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    return folder


def install(folder: Path, target: str, source: Path, smoke: bool) -> tuple[float, int, int]:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    pip = [
        str(folder / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        *(["--no-deps"] if smoke else []),
    ]
    subprocess.run([*pip, target], check=True, cwd=source, capture_output=True)
    seconds = time.perf_counter() - started
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())
    listed = subprocess.run(
        [str(folder / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return seconds, size, len(listed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="no dependencies: that it runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        source = source_copy(Path(directory) / "source")
        results = {
            name: install(Path(directory) / name, target, source, args.smoke)
            for name, target in (("make plan (package)", "."), ("make test (dev extras)", ".[dev]"))
        }
    for name, (seconds, size, count) in results.items():
        print(f"{name:<24} {seconds:7.1f} s  {size / 2**20:7.0f} MiB  {count:4d} distributions")
    (plan_s, plan_size, _), (test_s, test_size, _) = results.values()
    print(
        f"the main job installs in {plan_s / test_s:.2f}x the time and {plan_size / test_size:.2f}x the disk "
        "of the tests' venv"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
