"""A tenant cannot leave its box: each foothold a team has (its people's role, a pod in its namespace,
a pod in a namespace allowed to call Triton) tried against the prod plan. Admission policies run on a
CEL engine (cel-python) against allowed and denied requests; RBAC is evaluated rule by rule."""

import json

import pytest

from components.compute.labels import POOL_TAINT_KEY, SYSTEM_TAINT_KEY, pool_tolerations
from components.compute.priority import PLATFORM_CLASSES, PRIORITY_CLASS
from components.stack.config import ConfigError, parse_config_values
from components.storage.manifests import LOCAL_DISKS_DIR, provisioner_user
from components.tenancy.manifests import CLUSTER_READER_ROLE, OBSERVER_ROLE, TENANT_ROLE
from seedance_client.engine import Secret
from tests.admission import denials
from tests.stacks import stack_config

TEAM = "arn:aws:iam::123456789012:role/video-ml-engineers"
TEAM_CI = "arn:aws:iam::123456789012:role/video-ml-ci"
POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
TENANT_USER = {"username": "alice", "groups": ["seedance-tenant-video-ml", "system:authenticated"]}
DEPLOYER_USER = {"username": "arn:aws:sts::123456789012:assumed-role/deployer/ci", "groups": ["system:authenticated"]}


@pytest.fixture
def prod(plan_of):
    return plan_of("prod")  # cached: planned once per session


def policy_spec(plan, name):
    (policy,) = [p for p in plan.of_type(POLICY) if p.inputs["metadata"]["name"] == name]
    return policy.inputs["spec"]


def objects(plan, kind):
    return [r.inputs for r in plan.of_type(kind)]


# -- 1. Publishing: only a team's CI, never its people ---------------------------------------------------


def publisher_trust(plan, serving="video"):
    (role,) = [r for r in plan.of_type("aws:iam/role:Role") if r.name.endswith(f"triton-{serving}-publisher")]
    principals = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"]["AWS"]
    return set([principals] if isinstance(principals, str) else principals)


def test_prod_publisher_trust_names_only_ci_principals(prod):
    assert publisher_trust(prod) == {TEAM_CI}


def test_no_stacks_publisher_trusts_a_teams_people(stack_plan):
    config = stack_config(stack_plan.stack)
    people = {arn for tenant in config.tenants for arn in tenant.principal_arns}
    for serving in config.serving:
        trusted = publisher_trust(stack_plan, serving.name)
        assert trusted and not trusted & people
        assert trusted <= {
            *serving.publisher_principal_arns,
            *(a for t in config.tenants if serving.name in t.publishes for a in t.publisher_principal_arns),
        }


def _prod_values(**tenant):
    document = {
        "name": "video-ml",
        "namespaces": ["video-api", "video-train"],
        "principal_arns": [TEAM],
        "gpus": {"batch": 16},
        "publishes": ["video"],
        "publisher_principal_arns": [TEAM_CI],
        **tenant,
    }
    values = {key: value for key, value in _committed("prod").items()}
    values["seedance-gpu:tenants"] = json.dumps([document])
    return values


def _committed(stack):
    from seedance_client.project import find_project, load_stack_config
    from tests.stacks import REPO

    project = find_project(REPO)
    return dict(load_stack_config(project, project.stack_file(stack)).values)


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            {"publisher_principal_arns": []},
            r"tenants\[0\].publisher_principal_arns = \[\]: is empty but the team publishes",
        ),
        (
            {"publisher_principal_arns": [TEAM]},
            r"tenants\[0\].publisher_principal_arns\[0\] = .*video-ml-engineers.*is "
            r"also one of the team's principal_arns",
        ),
        (
            {"pools": ["online"]},
            r"tenants\[0\].pools\[0\] = \"online\": is not a GPU group of a class the team has GPUs "
            r"in; allowed: batch, train",
        ),
    ],
)
def test_a_tenant_entry_that_would_widen_its_reach_is_refused(change, expected):
    with pytest.raises(ConfigError, match=expected):
        parse_config_values(_prod_values(**change))


def test_a_serving_set_may_not_trust_a_teams_people():
    values = _prod_values()
    serving = json.loads(values["seedance-gpu:serving"])
    serving[0]["publisher_principal_arns"] = [TEAM]
    values["seedance-gpu:serving"] = json.dumps(serving)
    with pytest.raises(
        ConfigError,
        match=r"serving\[0\].publisher_principal_arns\[0\] = .*: is team video-ml's "
        r"people's role",
    ):
        parse_config_values(values)


def test_a_teams_people_may_not_be_another_teams_ci():
    """People operate what serves (the operator role); a CI role among them would switch it unreviewed."""
    release = "arn:aws:iam::123456789012:role/video-ml-release"
    values = _prod_values(publisher_principal_arns=[TEAM_CI, release])
    tenants = json.loads(values["seedance-gpu:tenants"])
    tenants.append({"name": "speech-ml", "principal_arns": [release], "gpus": {"batch": 1}, "namespaces": ["speech"]})
    values["seedance-gpu:tenants"] = json.dumps(tenants)
    with pytest.raises(
        ConfigError,
        match=r"tenants\[1\].principal_arns\[0\] = .*: is team video-ml's CI role \(publisher_principal_arns\)",
    ):
        parse_config_values(values)


def test_the_publishing_teams_people_operate_the_set_with_a_role_that_writes_no_model(prod):
    (role,) = [r for r in prod.of_type("aws:iam/role:Role") if r.name.endswith("triton-video-operator")]
    principals = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Principal"]["AWS"]
    assert set([principals] if isinstance(principals, str) else principals) == {TEAM}  # its people, not its CI
    (policy,) = [p for p in prod.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("triton-video-operate")]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    (writes,) = [s for s in statements if s["Action"] == ["s3:PutObject"]]
    assert writes["Resource"] and all(
        r.endswith(("/*/config.pbtxt", "/*/seedance-history.json")) for r in writes["Resource"]
    )
    endpoint = prod.outputs["triton_endpoints"]["video"]
    assert endpoint["operator_role_arn"].endswith(":role/seedance-prod-triton-video-operator")


# -- 2. A team's people: the stack's tenant role, never an AWS-managed access policy ---------------------


def test_no_tenant_access_entry_carries_an_aws_managed_policy(stack_plan):
    config = stack_config(stack_plan.stack)
    teams = {arn: t.name for t in config.tenants for arn in t.principal_arns}
    assert not [a for a in objects(stack_plan, ASSOCIATION) if a["principalArn"] in teams]
    entries = {e["principalArn"]: e for e in objects(stack_plan, "aws:eks/accessEntry:AccessEntry")}
    for arn, team in teams.items():
        assert entries[arn]["kubernetesGroups"] == [f"seedance-tenant-{team}"]
        assert entries[arn]["type"] == "STANDARD"


def _rule_grants(rule, group, resource, verb):
    return (
        (group in rule["apiGroups"] or "*" in rule["apiGroups"])
        and (resource in rule["resources"] or "*" in rule["resources"])
        and (verb in rule["verbs"] or "*" in rule["verbs"])
    )


def tenant_can(plan, verb, resource, group=""):
    """What the team's group may do in its namespace: the ClusterRole its RoleBindings name."""
    (role,) = [
        r
        for r in objects(plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if r["metadata"]["name"] == TENANT_ROLE
    ]
    return any(_rule_grants(rule, group, resource, verb) for rule in role["rules"])


ISOLATION_CASES = [
    (verb, resource, group)
    for verb in ("create", "update", "patch", "delete")
    for resource, group in (
        ("networkpolicies", "networking.k8s.io"),
        ("resourcequotas", ""),
        ("limitranges", ""),
        ("roles", "rbac.authorization.k8s.io"),
        ("rolebindings", "rbac.authorization.k8s.io"),
        ("endpoints", ""),
        ("endpointslices", "discovery.k8s.io"),
        ("daemonsets", "apps"),
        ("namespaces", ""),
        ("persistentvolumes", ""),
    )
] + [
    ("impersonate", "serviceaccounts", ""),
    ("impersonate", "users", ""),
    ("impersonate", "groups", ""),
    ("create", "serviceaccounts/token", ""),
    ("escalate", "roles", "rbac.authorization.k8s.io"),
    ("bind", "clusterroles", "rbac.authorization.k8s.io"),
]


@pytest.mark.parametrize("verb, resource, group", ISOLATION_CASES)
def test_a_team_cannot_touch_its_isolation(prod, verb, resource, group):
    assert not tenant_can(prod, verb, resource, group)


WORKLOAD_CASES = [
    ("create", "pods", ""),
    ("create", "pods/exec", ""),
    ("get", "pods/log", ""),
    ("create", "secrets", ""),
    ("create", "persistentvolumeclaims", ""),
    ("create", "services", ""),
    ("create", "jobs", "batch"),
    ("create", "deployments", "apps"),
    ("update", "deployments/scale", "apps"),
    ("create", "horizontalpodautoscalers", "autoscaling"),
    ("get", "networkpolicies", "networking.k8s.io"),
    ("get", "resourcequotas", ""),
    ("list", "events", ""),
]


@pytest.mark.parametrize("verb, resource, group", WORKLOAD_CASES)
def test_a_team_runs_and_debugs_its_workloads(prod, verb, resource, group):
    assert tenant_can(prod, verb, resource, group)


def test_the_tenant_role_is_bound_in_the_teams_namespaces_only(stack_plan):
    config = stack_config(stack_plan.stack)
    bindings = objects(stack_plan, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    bound = {
        (b["metadata"]["namespace"], s["name"])
        for b in bindings
        if b["roleRef"]["name"] == TENANT_ROLE
        for s in b["subjects"]
    }
    assert bound == {(n, f"seedance-tenant-{t.name}") for t in config.tenants for n in t.namespace_names}
    # Cluster-wide, a team holds the class reader only: its own binding, reading storage and priority classes.
    readers = {}
    for binding in objects(stack_plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"):
        teams = [s["name"] for s in binding["subjects"] if s["name"].startswith("seedance-tenant-")]
        if teams:
            assert binding["roleRef"]["name"] == CLUSTER_READER_ROLE
            readers[binding["metadata"]["name"]] = teams
    assert readers == {f"{t.name}-{CLUSTER_READER_ROLE}": [f"seedance-tenant-{t.name}"] for t in config.tenants}
    roles = [
        r
        for r in objects(stack_plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if r["metadata"]["name"] == CLUSTER_READER_ROLE
    ]
    assert len(roles) == (1 if config.tenants else 0)
    for reader in roles:
        assert {(g, r) for rule in reader["rules"] for g in rule["apiGroups"] for r in rule["resources"]} == {
            ("storage.k8s.io", "storageclasses"),
            ("scheduling.k8s.io", "priorityclasses"),
        }
        assert all(rule["verbs"] == ["get", "list", "watch"] for rule in reader["rules"])


def _service(**spec):
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "video-api"},
        "spec": {"ports": [{"port": 80}], **spec},
    }


SERVICE_CASES = [
    ({}, True),
    ({"type": "ClusterIP"}, True),
    ({"clusterIP": "None"}, True),
    ({"type": "LoadBalancer"}, False),
    ({"type": "NodePort"}, False),
    ({"type": "ExternalName", "externalName": "x"}, False),
    ({"type": "ClusterIP", "externalIPs": ["203.0.113.7"]}, False),
]


@pytest.mark.parametrize("spec, allowed", SERVICE_CASES)
def test_a_teams_services_stay_inside_the_cluster(prod, spec, allowed):
    found = denials(
        policy_spec(prod, f"{TENANT_ROLE}-services"), {"operation": "CREATE", "userInfo": TENANT_USER}, _service(**spec)
    )
    assert (found == []) is allowed, found


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE", "DELETE"])
def test_the_platforms_objects_in_a_teams_namespace_are_beyond_the_team(prod, operation):
    spec = policy_spec(prod, f"{TENANT_ROLE}-platform-objects")
    rules = spec["matchConstraints"]["resourceRules"]
    assert {r for rule in rules for r in rule["resources"]} == {
        "networkpolicies",
        "resourcequotas",
        "limitranges",
        "roles",
        "rolebindings",
        "serviceaccounts/token",
    }
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "default-deny", "namespace": "video-api"},
        "spec": {"podSelector": {}},
    }
    obj = None if operation == "DELETE" else policy
    assert denials(spec, {"operation": operation, "userInfo": TENANT_USER}, obj, old=policy)
    # The deployer keeps them: the policy does not apply to a request from outside the teams' groups.
    assert denials(spec, {"operation": operation, "userInfo": DEPLOYER_USER}, obj, old=policy) is None
    # A group that only starts like a team's is none.
    assert denials(spec, {"operation": operation, "userInfo": {"username": "x", "groups": ["tenant-x"]}}, obj) is None
    # A team's pods' identities are the team's too (issue 53: the guards matched its people only); the
    # platform's own service accounts are not.
    assert denials(spec, {"operation": operation, "userInfo": team_account("video-train")}, obj, old=policy)
    assert denials(spec, {"operation": operation, "userInfo": team_account("monitoring")}, obj, old=policy) is None


def team_account(namespace, name="runner"):
    """A service account's identity as the API server gives it: its user name and groups."""
    return {
        "username": f"system:serviceaccount:{namespace}:{name}",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
    }


def test_a_team_cannot_mint_a_service_account_token(prod):
    spec = policy_spec(prod, f"{TENANT_ROLE}-token-secrets")
    secret = lambda kind: {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": kind,
        "metadata": {"name": "t", "namespace": "video-api"},
    }
    for user in (TENANT_USER, team_account("video-api")):
        request = {"operation": "CREATE", "userInfo": user}
        assert denials(spec, request, secret("kubernetes.io/service-account-token"))
        assert denials(spec, request, secret("Opaque")) == []


def test_every_guard_binds_to_the_teams_namespaces(prod):
    for name in (f"{TENANT_ROLE}-services", f"{TENANT_ROLE}-platform-objects", f"{TENANT_ROLE}-token-secrets"):
        assert policy_spec(prod, name)["matchConstraints"]["namespaceSelector"] == {
            "matchExpressions": [{"key": "seedance.io/tenant", "operator": "Exists"}]
        }
        assert policy_spec(prod, name)["failurePolicy"] == "Fail"
    assert policy_spec(prod, f"{TENANT_ROLE}-video-ml-pods")["matchConstraints"]["namespaceSelector"] == {
        "matchLabels": {"seedance.io/tenant": "video-ml"}
    }
    bindings = {
        b["spec"]["policyName"]: b["spec"]["validationActions"]
        for b in objects(prod, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding")
    }
    assert all(bindings[name] == ["Deny"] for name in bindings)


# -- 3. Where a team's pods run and whom they may preempt -----------------------------------------------


def _pod(priority=PRIORITY_CLASS["batch"], tolerations=None, node_name=None):
    spec = {
        "containers": [{"name": "c", "image": "x"}],
        "tolerations": pool_tolerations("batch") if tolerations is None else tolerations,
    }
    if priority is not None:
        spec["priorityClassName"] = priority
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "video-train"}, "spec": spec}


NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}


POD_CASES = [
    (_pod(), True),
    (_pod(tolerations=[*pool_tolerations("train"), NOT_READY]), True),
    (_pod(tolerations=[]), True),  # lands nowhere, harms no one
    (
        _pod(tolerations=[{"key": POOL_TAINT_KEY, "value": "train", "effect": "NoSchedule"}]),
        True,
    ),  # Equal by default
    (_pod(priority=None), False),  # would escape the per-class quotas
    (_pod(priority=PRIORITY_CLASS["online"]), False),  # its quota gives it no online GPU
    (_pod(priority="seedance-platform"), False),
    (_pod(priority="system-cluster-critical"), False),
    (_pod(tolerations=pool_tolerations("online")), False),
    (_pod(tolerations=[{"operator": "Exists"}]), False),
    (_pod(tolerations=[{"key": "", "operator": "Exists"}]), False),
    (_pod(tolerations=[{"key": POOL_TAINT_KEY, "operator": "Exists"}]), False),
    (_pod(tolerations=[{"key": SYSTEM_TAINT_KEY, "operator": "Exists"}]), False),
    (_pod(tolerations=[{"key": SYSTEM_TAINT_KEY, "operator": "Equal", "value": "true"}]), False),
    (_pod(node_name="ip-10-60-0-5.ec2.internal"), False),
]


@pytest.mark.parametrize("pod, allowed", POD_CASES)
def test_a_teams_pods_name_their_class_and_tolerate_their_pools_only(prod, pod, allowed):
    request = {
        "operation": "CREATE",
        "userInfo": {
            "username": "system:serviceaccount:kube-system:job-controller",
            "groups": ["system:serviceaccounts"],
        },
    }
    found = denials(policy_spec(prod, f"{TENANT_ROLE}-video-ml-pods"), request, pod)
    assert (found == []) is allowed, found


def test_a_pod_made_before_the_policy_may_be_updated_but_gain_nothing(prod):
    """A controller removing a finalizer from an old pod passes; an update adding a toleration is judged."""
    spec = policy_spec(prod, f"{TENANT_ROLE}-video-ml-pods")
    old = _pod(priority=None, tolerations=[{"operator": "Exists"}])
    request = {"operation": "UPDATE", "userInfo": {"username": "system:serviceaccount:kube-system:job-controller"}}
    assert denials(spec, request, old, old=old) == []
    grown = _pod(priority=None, tolerations=[{"operator": "Exists"}, *pool_tolerations("online")])
    assert denials(spec, request, grown, old=old)


def test_a_services_type_cannot_be_changed_to_leave_the_cluster(prod):
    spec = policy_spec(prod, f"{TENANT_ROLE}-services")
    request = {"operation": "UPDATE", "userInfo": TENANT_USER}
    assert denials(spec, request, _service(type="LoadBalancer"), old=_service(type="ClusterIP"))
    assert denials(spec, request, _service(type="LoadBalancer"), old=_service())
    legacy = _service(type="LoadBalancer")  # made before the policy: its finalizer can still be removed
    assert denials(spec, request, legacy, old=legacy) == []


def test_a_bound_pod_may_still_be_updated(prod):
    """The scheduler's binding sets spec.nodeName; later updates of that pod stay allowed."""
    request = {"operation": "UPDATE", "userInfo": TENANT_USER}
    pod = _pod(node_name="ip-10-60-0-5.ec2.internal")
    assert denials(policy_spec(prod, f"{TENANT_ROLE}-video-ml-pods"), request, pod, old=pod) == []


def test_no_team_pod_may_run_at_a_platform_class(stack_plan):
    config = stack_config(stack_plan.stack)
    quotas = {
        (q["metadata"]["namespace"], q["metadata"]["name"]): q["spec"]
        for q in objects(stack_plan, "kubernetes:core/v1:ResourceQuota")
    }
    for tenant in config.tenants:
        for namespace in tenant.namespace_names:
            spec = quotas[(namespace, f"{tenant.name}-platform-classes")]
            assert spec["hard"] == {"pods": "0"}
            (selector,) = spec["scopeSelector"]["matchExpressions"]
            assert selector["scopeName"] == "PriorityClass" and set(selector["values"]) == set(PLATFORM_CLASSES)


def test_the_platform_class_outranks_every_class_a_team_may_use(stack_plan):
    classes = {
        c["metadata"]["name"]: c["value"] for c in objects(stack_plan, "kubernetes:scheduling.k8s.io/v1:PriorityClass")
    }
    assert classes["seedance-platform"] > max(classes[name] for name in PRIORITY_CLASS.values())


def test_the_system_nodes_repel_every_pod_but_the_platforms(stack_plan):
    (system,) = [g for g in objects(stack_plan, "aws:eks/nodeGroup:NodeGroup")]
    assert system["taints"] == [{"key": SYSTEM_TAINT_KEY, "value": "true", "effect": "NO_SCHEDULE"}]


# -- 4. No host root through a PersistentVolume ---------------------------------------------------------

PROVISIONER = provisioner_user(stack_config("prod").storage.local.namespace)


def _pv(source, hosts=("ip-10-60-0-5.ec2.internal",), terms=1):
    affinity = {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": list(hosts)}]}
            ]
            * terms
        }
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv"},
        "spec": {
            "capacity": {"storage": "100Gi"},
            "accessModes": ["ReadWriteOnce"],
            **source,
            "nodeAffinity": affinity,
        },
    }


LOCAL = {"local": {"path": f"{LOCAL_DISKS_DIR}/nvme1n1"}}
EBS = {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-0123456789abcdef0"}}


PV_CASES = [
    (PROVISIONER, _pv(LOCAL), True),
    ("system:serviceaccount:kube-system:ebs-csi-controller-sa", _pv(EBS), True),
    (DEPLOYER_USER["username"], _pv(EBS), True),
    (DEPLOYER_USER["username"], _pv({"hostPath": {"path": "/"}}), False),
    (PROVISIONER, _pv({"hostPath": {"path": f"{LOCAL_DISKS_DIR}/nvme1n1"}}), False),
    (PROVISIONER, _pv({"local": {"path": "/"}}), False),
    (PROVISIONER, _pv({"local": {"path": f"{LOCAL_DISKS_DIR}/../../etc"}}), False),
    (PROVISIONER, _pv({"local": {"path": f"{LOCAL_DISKS_DIR}/./x"}}), False),
    (PROVISIONER, _pv({"local": {"path": f"{LOCAL_DISKS_DIR}x/nvme1n1"}}), False),
    (PROVISIONER, _pv({"local": {"path": f"{LOCAL_DISKS_DIR}/"}}), False),  # every disk of the node
    (PROVISIONER, _pv({"local": {"path": f"{LOCAL_DISKS_DIR}/."}}), False),
    (PROVISIONER, _pv({"local": {"path": f"{LOCAL_DISKS_DIR}/nvme1n1/../.."}}), False),
    (PROVISIONER, _pv(LOCAL, hosts=("a", "b")), False),
    (PROVISIONER, _pv(LOCAL, terms=2), False),
    (PROVISIONER, {**_pv(LOCAL), "spec": {**LOCAL, "capacity": {"storage": "1Gi"}}}, False),
    (PROVISIONER, _pv(EBS), False),
    (DEPLOYER_USER["username"], _pv(LOCAL), False),
    (DEPLOYER_USER["username"], _pv({"nfs": {"server": "10.0.0.9", "path": "/"}}), False),
    (DEPLOYER_USER["username"], _pv({"csi": {"driver": "hostpath.csi.k8s.io", "volumeHandle": "x"}}), False),
]


@pytest.mark.parametrize("user, pv, allowed", PV_CASES)
def test_a_persistent_volume_is_an_ebs_volume_or_a_provisioners_disk(prod, user, pv, allowed):
    found = denials(
        policy_spec(prod, "seedance-persistent-volumes"),
        {"operation": "CREATE", "userInfo": {"username": user, "groups": ["system:authenticated"]}},
        pv,
    )
    assert (found == []) is allowed, found


def test_the_volume_guard_is_in_every_stack(stack_plan):
    spec = policy_spec(stack_plan, "seedance-persistent-volumes")
    assert spec["failurePolicy"] == "Fail" and "matchConditions" not in spec  # everyone, the deployer included
    # Creation only: binding (the PV controller, the scheduler) and finalizers are updates, and a PV's
    # source and node affinity cannot change after it is made.
    assert [r["operations"] for r in spec["matchConstraints"]["resourceRules"]] == [["CREATE"]]


# -- 5. Admins: the application namespaces, not the cluster ---------------------------------------------


def test_admins_administer_application_namespaces_and_read_the_rest(stack_plan):
    config = stack_config(stack_plan.stack)
    if not config.cluster.admin_principal_arns:
        pytest.skip(f"{stack_plan.stack} names no admins")
    for admin in config.cluster.admin_principal_arns:
        scopes = {
            a["policyArn"].rsplit("/", 1)[1]: a["accessScope"]
            for a in objects(stack_plan, ASSOCIATION)
            if a["principalArn"] == admin
        }
        assert scopes == {
            "AmazonEKSAdminPolicy": {"type": "namespace", "namespaces": config.app_namespaces},
            "AmazonEKSViewPolicy": {"type": "cluster"},
        }
        assert "kube-system" not in config.app_namespaces
    associations = [a for a in stack_plan.of_type(ASSOCIATION)]
    assert all(a.delete_before_replace for a in associations)  # one (principal, policy) to EKS


def test_kube_system_audits_and_warns_at_baseline(stack_plan):
    (patch,) = objects(stack_plan, "kubernetes:core/v1:NamespacePatch")
    assert patch["metadata"]["name"] == "kube-system"
    assert patch["metadata"]["labels"] == {
        "pod-security.kubernetes.io/audit": "baseline",
        "pod-security.kubernetes.io/warn": "baseline",
    }


# -- Every platform workload: on the system nodes tolerating their taint, above every team ---------------

POD_KINDS = {"Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob", "ReplicaSet", "Pod"}


def pod_specs(plan):
    """(where, pod spec) of every pod the plan runs: the objects it declares and those its charts render."""
    from tests.helm import render_release

    version = stack_config(plan.stack).cluster.kubernetes_version
    found = [(r.name, r.inputs) for r in plan.resources if r.type.split(":")[-1] in POD_KINDS]
    found += [
        (f"{release.inputs['chart']}/{o['metadata']['name']}", o)
        for release in plan.of_type("kubernetes:helm.sh/v3:Release")
        for o in render_release(release, version)
        if o["kind"] in POD_KINDS
    ]
    specs = []
    for where, manifest in found:
        spec = manifest["spec"]
        spec = spec.get("jobTemplate", {}).get("spec", spec)
        specs.append((where, spec["template"]["spec"] if "template" in spec else spec))
    return specs


def test_every_platform_pod_is_placed_and_ranked_as_the_platforms(plan_of):
    """On the system nodes a pod tolerates their taint (or it would stay Pending); every pod names a
    platform class, but Triton (serving's own class, which no team's quota gives) and the storage test
    Job (batch: it must never preempt)."""
    plan = plan_of("prod")
    specs = pod_specs(plan)
    assert len(specs) >= 12
    for where, spec in specs:
        selector = spec.get("nodeSelector") or {}
        pool = selector.get("seedance.io/node-group") or selector.get("seedance.io/local-nvme")
        affinity = json.dumps(spec.get("affinity", {}))
        gpu_node = (
            pool
            or "seedance.io/workload-class" in affinity
            or any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", []))
        )
        if not gpu_node:
            assert selector.get("seedance.io/node-role") == "system", where
            assert {"key": SYSTEM_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"], where
        if "triton" in where:
            assert spec["priorityClassName"] == PRIORITY_CLASS["online"], where
        elif "fio" in where:
            assert spec["priorityClassName"] == PRIORITY_CLASS["batch"], where
        else:
            assert spec.get("priorityClassName") in PLATFORM_CLASSES, where


# -- 6. Triton serves inference to its callers, and nothing else without the platform's key ---------------

# Triton's API groups (server r26.07 src/restricted_features.h); a name outside them stops the server.
TRITON_GROUPS = {
    "health",
    "metadata",
    "inference",
    "shared-memory",
    "model-config",
    "model-repository",
    "statistics",
    "trace",
    "logging",
}


def test_triton_restricts_every_api_but_inference_and_health(prod):
    secrets = {s["metadata"]["name"]: s for s in objects(prod, "kubernetes:core/v1:Secret")}
    for deployment in objects(prod, "kubernetes:apps/v1:Deployment"):
        if not deployment["metadata"]["name"].startswith("triton-"):
            continue
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        flags = {
            a.split("=", 1)[0]: a.split("=", 1)[1]
            for a in container["args"]
            if a.startswith(("--http-restricted-api=", "--grpc-restricted-protocol="))
        }
        assert set(flags) == {"--http-restricted-api", "--grpc-restricted-protocol"}
        for value in flags.values():  # <apis>:<key>=<value> (command_line_parser.cc)
            apis, _, header = value.partition(":")
            groups = apis.split(",")
            assert len(groups) == len(set(groups)) and set(groups) <= TRITON_GROUPS
            assert set(groups) == {
                "shared-memory",
                "model-repository",
                "model-config",
                "statistics",
                "trace",
                "logging",
            }
            key, _, secret_value = header.partition("=")
            assert key == "seedance-admin-key" and secret_value == "$(TRITON_ADMIN_KEY)"
        (env,) = [e for e in container["env"] if e["name"] == "TRITON_ADMIN_KEY"]
        reference = env["valueFrom"]["secretKeyRef"]
        secret = secrets[reference["name"]]
        assert secret["metadata"]["namespace"] == deployment["metadata"]["namespace"]
        assert isinstance(secret["stringData"], Secret)  # the generated key is a secret in state
        assert reference["key"] in secret["stringData"].value
    assert prod.of_type("random:index/randomPassword:RandomPassword")


def test_no_team_reaches_a_triton_namespace(stack_plan):
    """The key's Secret is in the set's namespace, which no team's RoleBinding or namespace list names."""
    config = stack_config(stack_plan.stack)
    team_namespaces = {n for t in config.tenants for n in t.namespace_names}
    assert not team_namespaces & {s.namespace for s in config.serving}


def observer_can(plan, verb, resource, group=""):
    (role,) = [
        r
        for r in objects(plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        if r["metadata"]["name"] == OBSERVER_ROLE
    ]
    return any(_rule_grants(rule, group, resource, verb) for rule in role["rules"])


@pytest.mark.parametrize(
    "verb, resource, group, allowed",
    [
        ("get", "pods/log", "", True),
        ("list", "events", "", True),
        ("get", "deployments", "apps", True),
        ("get", "secrets", "", False),
        ("create", "pods/exec", "", False),
        ("create", "pods", "", False),
        ("patch", "deployments", "apps", False),
        ("create", "pods/portforward", "", False),
    ],
)
def test_a_publishing_team_sees_its_tritons_pods_logs_and_events_and_nothing_more(prod, verb, resource, group, allowed):
    """Issue 36, item 7: whether its model loaded, and why not, on its own; read-only, no Secrets, no exec."""
    assert observer_can(prod, verb, resource, group) is allowed


def test_the_observer_role_is_bound_in_the_triton_namespaces_of_the_sets_a_team_publishes_only(stack_plan):
    config = stack_config(stack_plan.stack)
    bindings = objects(stack_plan, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    bound = {
        (b["metadata"]["namespace"], s["name"])
        for b in bindings
        if b["roleRef"]["name"] == OBSERVER_ROLE
        for s in b["subjects"]
    }
    assert bound == {
        (s.namespace, f"seedance-tenant-{t.name}")
        for t in config.tenants
        for s in config.serving
        if s.name in t.publishes
    }
