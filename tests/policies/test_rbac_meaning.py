"""RBAC judged by what a grant lets its holder become: every generated spelling of an escalating grant
fails, every spelling of a listed, harmless one passes; bindings to escalating roles fail however bound
(kubernetes-rbac-role-disallow-escalation, kubernetes-rbac-binding-disallow-escalating-roles)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from components.plan.resources import K8S_ROLE_BINDINGS, K8S_ROLES
from policies.framework import run_rules
from policies.rules.kubernetes_rbac_binding_disallow_escalating_roles import RULE as BINDINGS
from policies.rules.kubernetes_rbac_role_disallow_escalation import RULE as ROLES
from tests.policies.spellings import resource

# (apiGroups, resources, verbs) spellings that reach the same escalation.
ESCALATING = [
    (["*"], ["*"], ["*"]),
    ([""], ["*"], ["get"]),
    ([""], ["secrets"], ["*"]),
    (["*"], ["secrets"], ["list"]),
    ([""], ["secrets"], ["watch"]),
    ([""], ["*/exec"], ["create"]),
    ([""], ["pods/exec"], ["get"]),
    ([""], ["pods/attach"], ["CREATE"]),
    ([""], ["*/token"], ["create"]),
    ([""], ["serviceaccounts/token"], ["*"]),
    (["rbac.authorization.k8s.io"], ["clusterroles"], ["escalate"]),
    (["*"], ["*"], ["bind"]),
    ([""], ["users", "groups"], ["impersonate"]),
    ([""], ["serviceaccounts"], ["*"]),
    ([""], ["nodes/proxy"], ["get"]),
    (["admissionregistration.k8s.io"], ["validatingadmissionpolicybindings"], ["patch"]),
    (["*"], ["*/ephemeralcontainers"], ["update"]),
]
HARMLESS = [
    ([""], ["configmaps"], ["get", "list", "watch"]),
    (["custom.metrics.k8s.io"], ["*"], ["*"]),
    ([""], ["pods", "pods/log"], ["get", "list"]),
    (["apps"], ["deployments", "deployments/scale"], ["get", "list", "watch"]),
    ([""], ["secrets"], ["create", "delete"]),  # writing a Secret reads nothing
    ([""], ["serviceaccounts"], ["get", "list"]),
    # "*/" matches a subresource named "" only, which no request has (RBAC's ResourceMatches): not secrets.
    ([""], ["*/"], ["get", "list"]),
]


def role(rules, kind=K8S_ROLES[0], name="subject"):
    return resource(kind, {"metadata": {"name": name}, "rules": rules}, name=name)


def judged(rule, resources):
    return run_rules([rule], resources, {rule.name: "mandatory"})


def as_rule(triple):
    groups, resources, verbs = triple
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(K8S_ROLES),
    st.sampled_from(ESCALATING),
    st.lists(st.sampled_from(HARMLESS), max_size=2),
    st.integers(0, 2),
)
def test_every_spelling_of_an_escalating_grant_fails_among_harmless_ones(kind, grant, others, position):
    rules = [as_rule(t) for t in others]
    rules.insert(min(position, len(rules)), as_rule(grant))
    assert judged(ROLES, [role(rules, kind)]), grant


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(K8S_ROLES), st.lists(st.sampled_from(HARMLESS), min_size=1, max_size=4))
def test_every_spelling_of_listed_harmless_grants_passes(kind, grants):
    assert judged(ROLES, [role([as_rule(t) for t in grants], kind)]) == []


def test_the_tenant_role_keeps_exactly_its_grants_and_no_more():
    from components.tenancy.manifests import tenant_role

    manifest = tenant_role()
    assert judged(ROLES, [role(manifest["rules"], name=manifest["metadata"]["name"])]) == []
    named = resource(
        K8S_ROLES[0],
        {
            "metadata": {"name": "seedance-tenant"},
            "rules": [*manifest["rules"], as_rule(([""], ["*/token"], ["create"]))],
        },
    )
    assert judged(ROLES, [named])
    assert judged(ROLES, [role(manifest["rules"], name="not-the-tenant-role")])


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(K8S_ROLE_BINDINGS),
    st.sampled_from(
        [
            ("cluster-admin", "User"),
            ("admin", "ServiceAccount"),
            ("edit", "Group"),
            ("system:controller:clusterrole-aggregation-controller", "ServiceAccount"),
            ("view", "system:authenticated"),
            ("seedance-prometheus", "system:unauthenticated"),
            ("local-static-provisioner", "system:masters"),
        ]
    ),
)
def test_every_binding_to_an_escalating_role_or_to_everyone_fails(kind, case):
    role_name, subject = case
    subjects = (
        [{"kind": "Group", "name": subject}] if subject.startswith("system:") else [{"kind": subject, "name": "x"}]
    )
    binding = resource(kind, {"roleRef": {"kind": "ClusterRole", "name": role_name}, "subjects": subjects})
    assert judged(BINDINGS, [binding])


def test_the_tenant_role_binds_in_namespaces_only():
    def binding(kind):
        return resource(
            kind,
            {
                "roleRef": {"kind": "ClusterRole", "name": "seedance-tenant"},
                "subjects": [{"kind": "Group", "name": "seedance-tenant-team"}],
            },
        )

    cluster, namespaced = K8S_ROLE_BINDINGS
    assert judged(BINDINGS, [binding(cluster)]) and judged(BINDINGS, [binding(namespaced)]) == []


def test_a_single_value_where_a_list_belongs_is_read_as_that_one_item():
    """A hand-written plan may give one verb or resource bare: it is read, never dropped."""
    from policies.readers.rbac import _set

    assert (
        _set("*") == frozenset({"*"})
        and _set(["get", "list"]) == frozenset({"get", "list"})
        and _set(None) == frozenset()
    )


def test_a_grant_reached_through_a_wildcard_names_every_resource_that_reaches_it():
    found = judged(ROLES, [role([{"apiGroups": [""], "resources": ["*", "pods/*"], "verbs": ["get"]}])])
    assert any("(as *, pods/*)" in v.message for v in found), [v.message for v in found]
