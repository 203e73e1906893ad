"""The client an application team installs: one top-level name, nothing of the platform, versioned as the
contract it reads."""

import shutil
import subprocess
import sys
import tomllib
import zipfile

from seedance_client.contract import CONTRACT_VERSION
from tests.stacks import REPO

CLIENT = REPO / "seedance_client"


def test_the_client_wheel_holds_the_client_only(tmp_path):
    source = tmp_path / "seedance_client"  # a build writes beside its sources: build a copy
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("seedance_infra_client-*.whl")
    top_level = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {name for name in top_level if not name.endswith(".dist-info")} == {"seedance_client"}
    modules = {name for name in zipfile.ZipFile(wheel).namelist() if name.startswith("seedance_client/")}
    assert {"seedance_client/contract.py", "seedance_client/reference.py", "seedance_client/publishing.py"} <= modules
    assert not any(name.endswith("pyproject.toml") for name in modules)
    entry_points = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("entry_points.txt"))
    assert "seedance = seedance_client.models:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_client_is_versioned_as_the_contract_and_needs_no_platform():
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert project["version"].startswith(CONTRACT_VERSION + ".")
    assert not [d for d in project["dependencies"] if d.startswith(("pulumi-aws", "pulumi-kubernetes"))]
    assert project["name"] != "seedance-client"  # a stranger's project on the public index
