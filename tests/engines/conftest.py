"""Engine tests: the stacks' Kubernetes half on a real control plane (tests/engines/cluster.py), one per
Kubernetes minor the stacks run, started once per session and shared by the tests of that minor."""

from __future__ import annotations

import pytest

from tests.conftest import _stack_plan
from tests.engines.cluster import ControlPlane, start_control_plane
from tests.engines.stack_objects import AppliedStack, apply_stack
from tests.stacks import stack_config

_planes: dict[str, ControlPlane] = {}
_applied: dict[str, AppliedStack] = {}


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/engines/" in str(item.fspath):
            item.add_marker(pytest.mark.engines)
    _group_by_deployed_stack(items)


def _group_by_deployed_stack(items) -> None:
    """The platform program's tests grouped by their stack, in file order within each (a stable sort in their
    places): one stack's program runs at a time (test_platform_program.py, `deployed`)."""
    places = [i for i, item in enumerate(items) if item.fspath.basename == "test_platform_program.py"]
    stacks = {item.callspec.params["stack"]: None for item in (items[i] for i in places)}
    ordered = sorted((items[i] for i in places), key=lambda item: list(stacks).index(item.callspec.params["stack"]))
    for place, item in zip(places, ordered, strict=True):
        items[place] = item


@pytest.fixture(scope="session")
def engine_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


@pytest.fixture(scope="session")
def plane_of(engine_dir):
    """The control plane at a Kubernetes minor, started on first use."""

    def plane(minor: str) -> ControlPlane:
        if minor not in _planes:
            _planes[minor] = start_control_plane(engine_dir / f"kubernetes-{minor}", minor)
        return _planes[minor]

    yield plane
    for started in _planes.values():
        started.stop()
    _planes.clear()


@pytest.fixture(scope="session")
def applied(plane_of):
    """A stack's Kubernetes objects applied on the control plane at its Kubernetes version, once."""

    def stack(name: str) -> AppliedStack:
        if name not in _applied:
            config = stack_config(name)
            _applied[name] = apply_stack(plane_of(config.cluster.kubernetes_version), _stack_plan(name), config)
        return _applied[name]

    yield stack
    _applied.clear()
