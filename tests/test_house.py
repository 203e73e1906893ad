"""The house's checked habits: the whole tree is formatted and linted by ruff and type-checked by mypy, as
pyproject.toml configures them. Each test fails with the tool's own findings."""

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def run(tool: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / tool), *arguments], cwd=REPO, capture_output=True, text=True)


def test_the_tree_is_formatted():
    result = run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_tree_passes_the_linter():
    result = run("ruff", "check", "--output-format=concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_tree_passes_the_type_checker():
    # Incremental: .mypy_cache keeps what unchanged modules were found to be (a minute cold, seconds warm).
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_pure_modules_are_checked_strictly():
    """The strict override lists the pure contract's modules, so a module joining the contract (as
    tests/test_layout.py requires of every module that can) is typed strictly too."""
    pure = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["id"] == "pure")
    strict = next(o for o in PYPROJECT["tool"]["mypy"]["overrides"] if o.get("disallow_untyped_defs"))
    assert sorted(strict["module"]) == sorted(pure["source_modules"])
