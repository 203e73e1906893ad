"""The RBAC reader's tables: each chart allowance is exactly what the pinned charts render with the stacks'
values (no entry outlives its chart), an allowance never covers a wildcard, and the built-in roles' table
reads as the API server bootstraps it (tests/engines/test_builtin_rbac.py checks the file itself)."""

from functools import cache

from components.plan.resources import HELM_RELEASE, K8S_ROLE_BINDINGS, K8S_ROLES
from policies.readers.rbac import (
    CHART_AGGREGATES,
    CHART_API_GROUPS,
    CHART_BUILTIN_ROLES,
    CHART_EXTENSIONS,
    CHART_GRANTS,
    EXTENSION_KINDS,
    aggregates,
    builtin_role_subjects,
    chart_allows,
    chart_name,
    escalations,
    granted,
    within,
)
from seedance.check_command import plan_resources, rendered_releases
from tests.conftest import _stack_plan
from tests.stacks import STACKS, stack_config


@cache
def _rendered_by_chart() -> dict[str, list]:
    found: dict[str, list] = {}
    for stack in STACKS:
        resources = plan_resources(_stack_plan(stack))
        charts = {r.urn: chart_name(r.props.get("chart")) for r in resources if r.type == HELM_RELEASE}
        rendered, unrendered = rendered_releases(resources, stack_config(stack).cluster.kubernetes_version)
        assert unrendered == []
        for obj in rendered:
            found.setdefault(charts[str(obj.parent)], []).append(obj)
    return found


def test_each_charts_allowance_is_what_its_roles_grant_at_the_pin():
    held = {}
    for chart, objects in _rendered_by_chart().items():
        grants = granted(g for r in objects if r.type in K8S_ROLES for g in escalations(r.props.get("rules")))
        if grants:
            held[chart] = grants
    assert held == CHART_GRANTS


def test_each_charts_aggregating_roles_are_what_it_renders_and_bound_by_nothing_in_the_plan():
    found, bound = {}, set()
    for chart, objects in _rendered_by_chart().items():
        names = frozenset(r.props["metadata"]["name"] for r in objects if r.type in K8S_ROLES and aggregates(r.props))
        if names:
            found[chart] = names
        bound |= {(r.props.get("roleRef") or {}).get("name") for r in objects if r.type in K8S_ROLE_BINDINGS}
    assert found == CHART_AGGREGATES
    assert not bound & {name for names in CHART_AGGREGATES.values() for name in names}


def test_each_charts_extensions_and_api_groups_are_what_it_renders():
    kinds, groups = {}, {}
    for chart, objects in _rendered_by_chart().items():
        found = frozenset(r.type.rsplit(":", 1)[-1] for r in objects) & EXTENSION_KINDS
        if found:
            kinds[chart] = found
        defined = frozenset(r.props["spec"]["group"] for r in objects if r.type.endswith(":CustomResourceDefinition"))
        if defined:
            groups[chart] = defined
    assert kinds == CHART_EXTENSIONS and groups == CHART_API_GROUPS


def test_each_charts_built_in_roles_are_what_its_bindings_use():
    builtin = builtin_role_subjects()
    used = {}
    for chart, objects in _rendered_by_chart().items():
        roles = {(r.props.get("roleRef") or {}).get("name") for r in objects if r.type in K8S_ROLE_BINDINGS}
        if roles & set(builtin):
            used[chart] = frozenset(roles & set(builtin))
    assert used == CHART_BUILTIN_ROLES


def test_an_allowance_covers_named_resources_and_verbs_only():
    (named,) = escalations([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["update"]}])
    assert chart_allows("cluster-autoscaler", named) and not chart_allows("descheduler", named)
    (more,) = escalations([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["update", "delete"]}])
    assert not chart_allows("cluster-autoscaler", more)
    for spelling in (
        {"apiGroups": ["*"], "resources": ["nodes"], "verbs": ["update"]},
        {"apiGroups": [""], "resources": ["*"], "verbs": ["update"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["*"]},
    ):
        wide = [g for g in escalations([spelling]) if g.resource == "nodes"]
        assert wide and not any(within(g, {"nodes": frozenset({"update", "*"})}) for g in wide), spelling


def test_the_built_in_roles_hold_only_what_kubernetes_binds_them_to():
    subjects = builtin_role_subjects()
    assert subjects["system:node-proxier"] == {"User::system:kube-proxy"}
    assert subjects["system:auth-delegator"] == frozenset()  # for add-ons: nobody holds it by default
    assert "cluster-admin" not in subjects and all(role.startswith("system:") for role in subjects)
