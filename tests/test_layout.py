"""The layout's directions hold: import-linter's contracts (pyproject.toml) pass, and every module of
components/ that imports neither Pulumi nor the AWS SDK is under the pure contract, so a new pure
module cannot slip out of it."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
PURE = next(c for c in CONTRACTS if c["id"] == "pure")


def test_import_contracts_are_kept():
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


def imports_of(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_every_module_that_can_be_pure_is_under_the_pure_contract():
    """Impure: imports Pulumi or the AWS SDK, itself or through another module of components/ or the client."""
    forbidden = set(PURE["forbidden_modules"])
    modules = {
        ".".join(p.relative_to(REPO).with_suffix("").parts): imports_of(p)
        for package in ("components", "seedance_client")
        for p in (REPO / package).rglob("*.py")
        if p.name != "__init__.py"
    }
    impure = {m for m, names in modules.items() if {n.split(".")[0] for n in names} & forbidden}
    while grown := {m for m, names in modules.items() if m not in impure and names & impure}:
        impure |= grown
    unlisted = sorted(set(modules) - impure - set(PURE["source_modules"]))
    assert unlisted == [], "add these to the 'pure' contract in pyproject.toml"


def test_component_tests_mirror_the_package_tree():
    """tests/components/<package>/test_<module>.py: a reader finds a module's tests by its path."""
    misplaced = []
    for path in (REPO / "tests" / "components").rglob("test_*.py"):
        package = path.parent.relative_to(REPO / "tests" / "components")
        if len(package.parts) != 1 or not (REPO / "components" / package).is_dir():
            misplaced.append(str(path.relative_to(REPO)))
    assert misplaced == []


MIRROR_GAPS = REPO / "tests" / "mirror_gaps.txt"


def _mirrored_test(module: Path) -> Path:
    relative = module.relative_to(REPO)
    return REPO / "tests" / relative.parent / f"test_{module.stem.lstrip('_')}.py"


def test_every_module_has_its_tests_at_its_mirrored_path():
    """components/, policies/, seedance/ and seedance_client/: a module's own tests are found by its path.
    The modules listed in tests/mirror_gaps.txt do not have them yet; the list may only shrink."""
    gaps = {line for line in MIRROR_GAPS.read_text().splitlines() if line and not line.startswith("#")}
    modules = [
        path
        for package in ("components", "policies", "seedance", "seedance_client")
        for path in sorted((REPO / package).rglob("*.py"))
        if path.name != "__init__.py" and "data" not in path.relative_to(REPO).parts
    ]
    untested = {str(m.relative_to(REPO)) for m in modules if not _mirrored_test(m).is_file()}
    assert sorted(untested - gaps) == [], "add tests/<package>/.../test_<module>.py for these"
    assert sorted(gaps - untested) == [], "these have their tests now (or are gone): remove them from the list"
