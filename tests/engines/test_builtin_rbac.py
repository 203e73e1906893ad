"""The gate's table of Kubernetes' built-in roles (policies/data/builtin_rbac.json: every ClusterRole the API
server bootstraps, and the subjects its own bindings give each) is what kube-apiserver itself creates, at
every minor the stacks run. `UPDATE_GOLDEN=1` rewrites the table from the servers."""

from __future__ import annotations

import json
import os

from policies.readers.rbac import BUILTIN_RBAC_FILE, subject_key
from tests.stacks import STACKS, stack_config

BOOTSTRAP = ("kubernetes.io/bootstrapping", "rbac-defaults")
RBAC = "rbac.authorization.k8s.io/v1"


def _bootstrapped(kube) -> tuple[set[str], dict[str, set[str]]]:
    def ours(obj: dict) -> bool:
        return (obj["metadata"].get("labels") or {}).get(BOOTSTRAP[0]) == BOOTSTRAP[1]

    roles = {r["metadata"]["name"] for r in kube.list(RBAC, "ClusterRole") if ours(r)}
    subjects: dict[str, set[str]] = {role: set() for role in roles}
    for kind, namespace in (
        ("ClusterRoleBinding", None),
        ("RoleBinding", "kube-system"),
        ("RoleBinding", "kube-public"),
    ):
        for binding in filter(ours, kube.list(RBAC, kind, namespace=namespace)):
            held = subjects.setdefault(binding["roleRef"]["name"], set())
            held |= {subject_key(s, namespace) for s in binding.get("subjects") or []}
    return roles, subjects


def test_the_built_in_roles_table_is_what_each_minor_bootstraps(plane_of):
    minors = sorted({stack_config(stack).cluster.kubernetes_version for stack in STACKS})
    roles: set[str] = set()
    subjects: dict[str, set[str]] = {}
    for minor in minors:
        served_roles, served_subjects = _bootstrapped(plane_of(minor).kube)
        roles |= served_roles
        for role, held in served_subjects.items():
            subjects.setdefault(role, set()).update(held)
    table = {
        "source": "the RBAC bootstrap policy kube-apiserver creates (label kubernetes.io/bootstrapping="
        f"rbac-defaults), read from the engines' servers at {', '.join(minors)} (tests/engines/test_builtin_rbac.py)",
        "cluster_roles": sorted(roles),
        "subjects": {role: sorted(held) for role, held in sorted(subjects.items())},
    }
    if os.environ.get("UPDATE_GOLDEN"):
        BUILTIN_RBAC_FILE.write_text(json.dumps(table, indent=1) + "\n")
    assert json.loads(BUILTIN_RBAC_FILE.read_text()) == table
