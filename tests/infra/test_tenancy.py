"""A team's way in (prod's video-ml): its namespaces, access scoped to them, GPU quotas per workload class,
default requests, a network that reaches what it needs and nothing else, publishing, and its data."""

import json
from datetime import UTC, datetime

import pytest
import yaml

from components.cluster.provisioning import PROVISIONING_CRD_NAME
from components.plan.resources import HELM_RELEASE, K8S_CRD
from components.plan.resources import K8S_ADMISSION_POLICY as POLICY
from components.stack.capacity import RunMode, table_zones
from components.stack.config import ConfigError, parse_config_values
from components.stack.derivation import derive
from components.tenancy.config import TenantConfig
from components.tenancy.queues import QUEUED_JOBS_POLICY, QUEUED_PODS_POLICY
from policies.expectations import stack_policy_config
from seedance.check_command import check, plan_resources
from seedance.cli import offline_plan
from tests.k8s_checks import declared_manifests, schema_errors
from tests.policy_evaluation import Request, allows
from tests.stacks import REPO, stack_config

TEAM = "arn:aws:iam::123456789012:role/video-ml-engineers"


@pytest.fixture
def prod(plan_of):
    return plan_of("prod")


def objects(plan, kind, namespace=None):
    return [
        r.inputs
        for r in plan.of_type(kind)
        if namespace is None or r.inputs.get("metadata", {}).get("namespace") == namespace
    ]


def test_the_team_may_edit_its_namespaces_and_nothing_else(prod):
    """Its people's entry names its Kubernetes group, which only its namespaces' RoleBindings bind
    (the whole isolation: tests/infra/test_tenant_isolation.py)."""
    (entry,) = [e.inputs for e in prod.of_type("aws:eks/accessEntry:AccessEntry") if e.inputs["principalArn"] == TEAM]
    assert entry["kubernetesGroups"] == ["seedance-tenant-video-ml"]
    bindings = {
        (b["metadata"]["namespace"], b["roleRef"]["name"])
        for b in objects(prod, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
        if b["subjects"][0]["name"] == "seedance-tenant-video-ml"
    }
    # and, read-only, the Triton namespace of the set it publishes (test_tenant_isolation.py)
    assert bindings == {
        ("video-api", "seedance-tenant"),
        ("video-train", "seedance-tenant"),
        ("triton-video", "seedance-tenant-observer"),
    }


def test_gpu_quotas_per_workload_class_and_in_all(prod):
    """A pod that names no priority class falls under the total only, which holds every GPU the team has. Prod
    queues its batch GPUs: the team's ClusterQueue holds its 16 nominal GPUs, and each namespace's batch quota
    is what Kueue may admit for it (its nominal and what the cohort lends, up to the batch pools' GPUs), so the
    namespace never refuses what the cohort lends."""
    quotas = {
        q["metadata"]["name"]: q["spec"] for q in objects(prod, "kubernetes:core/v1:ResourceQuota", "video-train")
    }
    (queue,) = [q for q in objects(prod, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue") if "video-ml" in str(q)]
    nominal = [r["nominalQuota"] for f in queue["spec"]["resourceGroups"][0]["flavors"] for r in f["resources"]]
    assert sum(int(n) for n in nominal) == 16
    lendable = sum(g.max_gpus for g in stack_config("prod").gpu_node_groups if g.workload_class == "batch")
    assert quotas["video-ml-total"]["hard"]["requests.nvidia.com/gpu"] == str(lendable)
    batch = quotas["video-ml-batch"]
    assert batch["hard"] == {"requests.nvidia.com/gpu": str(lendable)}
    assert batch["scopeSelector"]["matchExpressions"] == [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["seedance-batch"]}
    ]
    assert quotas["video-ml-online"]["hard"] == {"requests.nvidia.com/gpu": "0"}
    (defaults,) = objects(prod, "kubernetes:core/v1:LimitRange", "video-train")
    assert defaults["spec"]["limits"][0]["defaultRequest"]  # a quota refuses pods without requests otherwise


def test_serving_preempts_batch(prod):
    classes = {p["metadata"]["name"]: p for p in objects(prod, "kubernetes:scheduling.k8s.io/v1:PriorityClass")}
    assert classes["seedance-online"]["value"] > classes["seedance-batch"]["value"]
    assert classes["seedance-batch"]["preemptionPolicy"] == "Never"
    for deployment in prod.of_type("kubernetes:apps/v1:Deployment"):
        if deployment.inputs["metadata"]["name"].startswith("triton-"):
            assert deployment.inputs["spec"]["template"]["spec"]["priorityClassName"] == "seedance-online"
    assert prod.outputs["priority_classes"] == {"online": "seedance-online", "batch": "seedance-batch"}


def test_the_team_reaches_its_serving_set_and_its_own_pods_only(prod):
    """video-api is among triton-video's client namespaces: its egress reaches the inference ports there."""
    (team,) = [
        p
        for p in objects(prod, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "video-api")
        if p["metadata"]["name"] == "video-ml"
    ]
    assert team["spec"]["ingress"] == [{"from": [{"podSelector": {}}]}]
    calls = [rule for rule in team["spec"]["egress"] if "namespaceSelector" in str(rule.get("to"))]
    (call,) = calls
    assert call["to"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == ["triton-video"]
    assert {p["port"] for p in call["ports"]} == {8000, 8001}
    (train,) = [
        p
        for p in objects(prod, "kubernetes:networking.k8s.io/v1:NetworkPolicy", "video-train")
        if p["metadata"]["name"] == "video-ml"
    ]
    assert "triton-video" not in json.dumps(train["spec"]["egress"])  # not a client: Triton would refuse it anyway
    namespaces = {n["metadata"]["name"]: n["metadata"]["labels"] for n in objects(prod, "kubernetes:core/v1:Namespace")}
    assert namespaces["video-train"]["pod-security.kubernetes.io/enforce"] == "baseline"


def test_the_team_publishes_its_set_and_reads_its_data(prod):
    (publisher,) = [r for r in prod.of_type("aws:iam/role:Role") if r.name.endswith("triton-video-publisher")]
    trusted = json.loads(publisher.inputs["assumeRolePolicy"])["Statement"][0]["Principal"]["AWS"]
    assert "arn:aws:iam::123456789012:role/video-ml-ci" in trusted and TEAM not in trusted
    gateway = next(
        e for e in prod.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if e.inputs["vpcEndpointType"] == "Gateway"
    )
    policy = json.loads(gateway.inputs["policy"])
    ours = {"aws:PrincipalAccount": "123456789012", "aws:ResourceAccount": "210987654321"}
    assert allows(policy, Request("s3:GetObject", "arn:aws:s3:::video-ml-datasets-eu/shard-0001.tar", ours))
    assert not allows(policy, Request("s3:GetObject", "arn:aws:s3:::someone-elses-bucket/x", ours))
    (tenant,) = prod.outputs["tenants"]
    assert tenant == {
        "name": "video-ml",
        "namespaces": ["video-api", "video-train"],
        "gpus": {"batch": 16, "online": 0},
        "publishes": ["video"],
        "pools": ["batch", "train"],  # every batch pool: its GPUs are batch ones and it names no pools
    }


def test_the_teams_objects_match_the_schemas(prod):
    """(checkov has no check for namespaces, quotas, limit ranges or network policies: nothing to scan.)"""
    manifests = declared_manifests(prod, "seedance:tenancy:TenantSpace")
    assert {m["kind"] for m in manifests} == {
        "Namespace",
        "NetworkPolicy",
        "ResourceQuota",
        "LimitRange",
        "RoleBinding",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
    assert schema_errors(manifests, stack_config("prod").cluster.kubernetes_version) == []


def _values(tenants, **cluster):
    return {
        "aws:region": "us-east-1",
        "seedance-gpu:env": "prod",
        "seedance-gpu:tags": json.dumps({"team": "a", "cost-center": "b"}),
        "seedance-gpu:budget": json.dumps({"monthly_usd": 10, "alert_emails": ["a@b.io"]}),
        "seedance-gpu:cluster": json.dumps({"deployer_cidrs": ["10.0.200.0/24"], **cluster}),
        "seedance-gpu:tenants": json.dumps(tenants),
    }


@pytest.mark.parametrize(
    "tenants, cluster, expected",
    [
        (
            [
                {"name": "a", "principal_arns": [TEAM]},
                {"name": "b", "namespaces": ["a"], "principal_arns": [TEAM + "2"]},
            ],
            {},
            r"tenants\[1\].namespaces = \"a\": is already team a's",
        ),
        ([{"name": "monitoring", "principal_arns": [TEAM]}], {}, r"is already the platform's"),
        (
            [
                {
                    "name": "a",
                    "principal_arns": [TEAM],
                    "publishes": ["nope"],
                    "publisher_principal_arns": [TEAM + "-ci"],
                }
            ],
            {},
            r"names no serving set",
        ),
        ([{"name": "a", "principal_arns": [TEAM]}], {"admin_principal_arns": [TEAM]}, r"is already in cluster.admin"),
        ([{"name": "a", "principal_arns": [TEAM], "gpus": {"inference": 2}}], {}, r"of a workload class"),
    ],
)
def test_a_tenant_that_would_clash_is_refused_naming_the_key(tenants, cluster, expected):
    with pytest.raises(ConfigError, match=expected):
        parse_config_values(_values(tenants, **cluster))


def test_a_team_without_namespaces_gets_one_of_its_name():
    assert TenantConfig(name="search", principal_arns=[TEAM]).namespace_names == ["search"]


def test_a_tenants_pods_can_only_say_they_are_the_tenants(plan_of):
    """The cost label OpenCost attributes by is checked at admission: a team cannot bill its pods to another."""
    from tests.admission import denials

    (policy,) = [
        p
        for p in plan_of("prod").of_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
        if p.inputs["metadata"]["name"] == "seedance-tenant-cost-labels"
    ]
    spec = policy.inputs["spec"]
    assert spec["matchConstraints"]["namespaceSelector"] == {
        "matchExpressions": [{"key": "seedance.io/tenant", "operator": "Exists"}]
    }  # tenants' namespaces only
    namespace = {"metadata": {"name": "video-train", "labels": {"seedance.io/tenant": "video-ml"}}}

    def pod(labels):
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "video-train", "labels": labels},
        }

    request = {"operation": "CREATE", "userInfo": {"username": "alice", "groups": ["system:authenticated"]}}
    assert (
        denials(spec, request, pod({"team": "video-ml", "app.kubernetes.io/name": "x"}), namespace_object=namespace)
        == []
    )
    for labels in ({"team": "search"}, {"app.kubernetes.io/name": "x"}, {}):
        assert denials(spec, request, pod(labels), namespace_object=namespace), labels


def test_with_queues_a_teams_namespaces_hold_what_kueue_may_admit_and_its_jobs_name_their_queues(tmp_path):
    """Staging (queues on) with a team: each of its namespaces' batch GPU quota is its ceiling under Kueue (a
    namespace's quota must not refuse what the cohort lends), the queue guards are declared, the contract
    names the queues, and the gate passes the plan."""
    team = {"name": "vision", "principal_arns": ["arn:aws:iam::123456789012:role/vision"], "gpus": {"batch": 1}}
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.staging.yaml").read_text())
    document["config"]["seedance-gpu:tenants"] = [team]
    path = tmp_path / "Pulumi.staging.yaml"
    path.write_text(yaml.safe_dump(document))
    plan, _ = offline_plan("staging", REPO / "infra", path)
    config = stack_config("staging", tenants=[TenantConfig(**team)])
    derived = derive(config, "staging", table_zones(config), REPO / "stacks", datetime.now(UTC), RunMode.offline_plan())
    ceiling = derived.namespace_gpus["vision"]["batch"]
    assert ceiling > 1  # the pool runs more than the team's nominal GPU, all of it lendable to the team
    quotas = {
        q["metadata"]["name"]: q["spec"]["hard"] for q in objects(plan, "kubernetes:core/v1:ResourceQuota", "vision")
    }
    assert quotas["vision-batch"] == {"requests.nvidia.com/gpu": str(ceiling)}
    guards = {p["metadata"]["name"] for p in objects(plan, POLICY)}
    assert {QUEUED_JOBS_POLICY, QUEUED_PODS_POLICY} <= guards
    assert plan.outputs["queues"] == {"batch": "batch", "online": "online"}
    violations, _cost = check(plan_resources(plan), "staging", config.region, stack_policy_config(config))
    assert [v for v in violations if v.level == "mandatory"] == []


def test_with_a_multi_node_pool_the_provisioning_api_comes_before_kueue_and_the_autoscaler(plan_of):
    """Both look for the API when they start (Kueue once, at start): prod declares the vendored CRD, and its
    Kueue and autoscaler releases wait for it; dev, without an EFA pool, declares none."""
    prod = plan_of("prod")
    (crd,) = prod.of_type(K8S_CRD)
    assert crd.inputs["metadata"]["name"] == PROVISIONING_CRD_NAME
    releases = {str(r.inputs["chart"]).rsplit("/", 1)[-1]: r for r in prod.of_type(HELM_RELEASE)}
    for chart in ("kueue", "cluster-autoscaler"):
        assert crd.urn in releases[chart].dependencies, chart
    assert releases["kueue"].inputs["values"]["controllerManager"]["manager"]["podAnnotations"]
    assert releases["cluster-autoscaler"].inputs["values"]["extraArgs"]["enable-provisioning-requests"] is True
    assert plan_of("dev").of_type(K8S_CRD) == []


def test_a_multi_node_pool_is_placed_by_network_topology_only_if_all_its_types_report_it():
    """Prod's train runs g6e.12xlarge only (three network layers); with a g6 among its types (which reports
    none) no topology can describe all its nodes."""
    prod = stack_config("prod")
    assert prod.gang_topologies == {"train": 3}
    mixed = [
        g.model_copy(update={"instance_types": ["g6e.12xlarge", "g6.12xlarge"]}) if g.name == "train" else g
        for g in prod.gpu_node_groups
    ]
    config = prod.model_copy(update={"gpu_node_groups": mixed})
    assert config.gang_pools == ["train"] and config.gang_topologies == {}
