"""components/tenancy/queues.py: what each pool's decision buys becomes flavors, the teams' GPUs their nominal
quotas over them, and no flavor is promised more than its pool runs at its maximum."""

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from components.capacity.plan import CapacityPlan
from components.common.validation import FieldError
from components.compute.labels import NODE_GROUP_LABEL, POOL_TAINT_KEY
from components.pricing.reserved import CAPACITY_RESERVATION, RESERVED_INSTANCE, SAVINGS_PLAN
from components.tenancy.config import QueuesConfig, TenantConfig
from components.tenancy.manifests import TENANT_LABEL
from components.tenancy.queues import (
    ELASTIC_JOBS,
    GANG_CHECK,
    JOB_CONTROLLER,
    KUEUE_CONTROLLER,
    MAX_BATCH_GRACE_SECONDS,
    PROVISIONING_ANNOTATION,
    QUEUED_JOBS_POLICY,
    QUEUED_PODS_POLICY,
    Flavor,
    cluster_queue,
    flavors,
    kueue_configuration,
    kueue_values,
    nominal_quotas,
    pool_units,
    queue_admission_policies,
    queue_ceilings,
    queue_manifests,
    topology,
)
from seedance_client.contract import ELASTIC_JOB_ANNOTATION, GPU_RESOURCE, QUEUE_LABEL
from tests.admission import denials

PEOPLE = "arn:aws:iam::123456789012:role/people"


def plan(max_gpus, base=0, percentage=100, holdings=()):
    return CapacityPlan(
        group="g",
        instance_types=("g6.12xlarge",),
        spot_types=("g6.12xlarge",) if percentage < 100 else (),
        on_demand_base_gpus=base,
        on_demand_percentage_above_base=percentage,
        capacity_rebalance=True,
        expected_usd_per_hour=0.0,
        all_on_demand_usd_per_hour=0.0,
        constraints={"max_gpus": max_gpus, "holdings": [list(h) for h in holdings]},
        explanation=(),
    )


def team(name, pools=(), **gpus):
    return TenantConfig(name=name, principal_arns=[PEOPLE], gpus=gpus, pools=list(pools))


def test_a_pool_splits_into_reserved_spot_and_on_demand_at_its_maximum():
    # 16 instances of 4 GPUs; 2 on-demand instances as base, 25 % of the rest on-demand: 3.5 -> 10.5 spot.
    held = [("g6.12xlarge", 3, 1.0, {"kind": RESERVED_INSTANCE}), ("g6.12xlarge", 1, 1.0, {"kind": SAVINGS_PLAN})]
    units = pool_units(plan(64, base=8, percentage=25, holdings=held), 4)
    assert units == {"reserved": 12, "spot": 40, "on-demand": 12}  # spot rounded down: never over-promised
    assert sum(units.values()) == 64


def test_reserved_is_never_more_than_the_on_demand_units_it_covers():
    held = [("g6.12xlarge", 10, 1.0, {"kind": CAPACITY_RESERVATION})]
    assert pool_units(plan(16, base=8, percentage=0, holdings=held), 4) == {"reserved": 8, "spot": 8, "on-demand": 0}


def test_serving_takes_the_dearest_flavors_first_and_online_has_no_spot_flavor():
    plans = {
        "online": plan(24, base=8, percentage=100, holdings=[("g6.12xlarge", 2, 1.0, {"kind": RESERVED_INSTANCE})])
    }
    offered = flavors([("online", "online", 4)], plans, {"online": 20})
    assert offered == [Flavor("online", "online", "reserved", 4)]


def test_teams_split_their_gpus_over_the_flavors_of_their_pools_within_each_flavor():
    offered = [Flavor("a", "batch", "reserved", 8), Flavor("a", "batch", "spot", 24), Flavor("b", "batch", "spot", 8)]
    tenants = [team("x", pools=["a"], batch=20), team("y", pools=["a", "b"], batch=16)]
    quotas = nominal_quotas(tenants, {"x": ["a"], "y": ["a", "b"]}, offered)
    assert {k: sum(v.values()) for k, v in quotas.items()} == {("x", "batch"): 20, ("y", "batch"): 16}
    for flavor in offered:
        assert sum(q.get(flavor.name, 0) for q in quotas.values()) <= flavor.gpus


def test_teams_promised_more_than_their_pools_run_are_refused_naming_the_team():
    offered = [Flavor("a", "batch", "spot", 8)]
    with pytest.raises(FieldError) as error:
        nominal_quotas([team("x", batch=6), team("y", batch=6)], {"x": ["a"], "y": ["a"]}, offered)
    assert error.value.field == "tenants[1].gpus.batch" and "at most 2" in error.value.allowed


@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from(["reserved", "spot", "on-demand"]), st.integers(0, 40)),
        min_size=1,
        max_size=6,
        unique_by=lambda f: f[:2],
    ),
    st.lists(st.tuples(st.integers(1, 40), st.sets(st.sampled_from("abc"), min_size=1)), min_size=1, max_size=5),
)
def test_whenever_the_teams_fit_each_gets_its_quota_and_no_flavor_is_overpromised(pools, teams):
    offered = [Flavor(pool, "batch", kind, gpus) for pool, kind, gpus in pools if gpus > 0]
    tenants = [team(f"t{i}", pools=sorted(p), batch=n) for i, (n, p) in enumerate(teams)]
    pools_of = {t.name: t.pools for t in tenants}
    try:
        quotas = nominal_quotas(tenants, pools_of, offered)
    except FieldError:
        # Refused only when no split exists: some set of teams wants more than their pools hold together.
        assert _infeasible(tenants, offered)
        return
    for tenant in tenants:
        held = quotas[(tenant.name, "batch")]
        assert sum(held.values()) == tenant.gpus["batch"]
        assert all(f.split("-", 1)[0] in tenant.pools for f in held)
    for flavor in offered:
        assert sum(q.get(flavor.name, 0) for q in quotas.values()) <= flavor.gpus


def _infeasible(tenants, offered):
    """Hall's condition: some set of teams wants more than the flavors of their pools hold (brute force)."""
    for mask in range(1, 2 ** len(tenants)):
        chosen = [t for i, t in enumerate(tenants) if mask >> i & 1]
        pools = {p for t in chosen for p in t.pools}
        if sum(t.gpus["batch"] for t in chosen) > sum(f.gpus for f in offered if f.pool in pools):
            return True
    return False


def test_a_flavor_selects_its_pool_and_gives_admitted_pods_that_pools_tolerations_only():
    manifests = queue_manifests([team("x", batch=4)], {"x": ["a"]}, [Flavor("a", "batch", "spot", 8)])
    flavor = next(m for m in manifests if m["kind"] == "ResourceFlavor")
    assert flavor["spec"]["nodeLabels"] == {NODE_GROUP_LABEL: "a"}
    pool = [t for t in flavor["spec"]["tolerations"] if t["key"] == POOL_TAINT_KEY]
    assert pool == [{"key": POOL_TAINT_KEY, "operator": "Equal", "value": "a", "effect": "NoSchedule"}]


def test_a_teams_queue_is_reachable_from_its_own_namespaces_only_and_each_namespace_has_one():
    tenant = TenantConfig(name="x", principal_arns=[PEOPLE], namespaces=["x-a", "x-b"], gpus={"batch": 4})
    manifests = queue_manifests([tenant], {"x": ["a"]}, [Flavor("a", "batch", "spot", 8)])
    queue = next(m for m in manifests if m["kind"] == "ClusterQueue")
    assert queue["spec"]["namespaceSelector"] == {"matchLabels": {TENANT_LABEL: "x"}}
    assert queue["spec"]["cohortName"] == "seedance-batch"
    locals_ = [m for m in manifests if m["kind"] == "LocalQueue"]
    assert [(m["metadata"]["namespace"], m["spec"]["clusterQueue"]) for m in locals_] == [
        ("x-a", "x-batch"),
        ("x-b", "x-batch"),
    ]


def test_batch_borrows_and_reclaims_while_online_neither_borrows_nor_preempts():
    offered = [Flavor("a", "batch", "spot", 8), Flavor("o", "online", "on-demand", 8)]
    tenant = TenantConfig(
        name="x", principal_arns=[PEOPLE], gpus={"batch": 4, "online": 2}, gpu_lending_limits={"batch": 1}
    )
    batch = cluster_queue(tenant, "batch", {"a-spot": 4}, offered)
    online = cluster_queue(tenant, "online", {"o-on-demand": 2}, offered)
    batch_limits = batch["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert "borrowingLimit" not in batch_limits and batch_limits["lendingLimit"] == "1"
    assert batch["spec"]["preemption"]["reclaimWithinCohort"] == "Any"
    assert online["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] == "0"
    assert online["spec"]["preemption"] == {"reclaimWithinCohort": "Never", "withinClusterQueue": "Never"}


def test_a_team_cannot_lend_more_than_it_has():
    with pytest.raises(ValueError, match="more than the team.s 2 batch GPUs; allowed: 0 to gpus.batch"):
        TenantConfig(name="x", principal_arns=[PEOPLE], gpus={"batch": 2}, gpu_lending_limits={"batch": 3})


def test_kueue_queues_team_jobs_only_and_admits_gangs_whole():
    configuration = kueue_configuration(QueuesConfig(gang_timeout_minutes=12, gang_requeues=3))
    assert configuration["manageJobsWithoutQueueName"] is True
    assert configuration["managedJobsNamespaceSelector"] == {
        "matchExpressions": [{"key": TENANT_LABEL, "operator": "Exists"}]
    }
    assert configuration["waitForPodsReady"]["timeout"] == "12m"
    assert configuration["waitForPodsReady"]["requeuingStrategy"]["backoffLimitCount"] == 3
    values = kueue_values(QueuesConfig(), provisioning=False)
    assert yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"]) == kueue_configuration(QueuesConfig())
    assert values["controllerManager"]["manager"]["image"]["tag"] == "v0.19.2"


def test_only_pinned_kueue_releases_are_accepted():
    with pytest.raises(ValueError, match="0.19.2"):
        QueuesConfig(kueue_version="0.18.0")


def test_a_teams_ceiling_is_what_kueue_may_admit_for_it_per_flavor():
    offered = [
        Flavor("a", "batch", "reserved", 8),
        Flavor("a", "batch", "spot", 24),
        Flavor("o", "online", "reserved", 8),
    ]
    pools = {"x": ["a", "o"], "y": ["a"]}
    free = team("x", batch=8, online=4)
    limited = TenantConfig(name="y", principal_arns=[PEOPLE], gpus={"batch": 8}, gpu_borrowing_limits={"batch": 2})
    ceilings = queue_ceilings([free, limited], pools, offered)
    assert ceilings[("x", "batch")] == 8 + 24  # no borrowing limit: every GPU of its flavors
    assert ceilings[("x", "online")] == 4  # online never borrows
    quotas = nominal_quotas([free, limited], pools, offered)[("y", "batch")]
    # Kueue's borrowing limit is per flavor: its nominal quota there plus the limit, within the flavor's GPUs.
    assert ceilings[("y", "batch")] == sum(min(f.gpus, quotas[f.name] + 2) for f in offered if f.name in quotas)
    assert ceilings[("y", "batch")] == 8 + 2 * 2


JOB_CONTROLLER_USER = {"username": JOB_CONTROLLER, "groups": ["system:serviceaccounts"]}
PERSON = {"username": "alice", "groups": ["seedance-tenant-x", "system:authenticated"]}


def _policy(name):
    return next(
        m["spec"]
        for m in queue_admission_policies()
        if m["kind"] == "ValidatingAdmissionPolicy" and m["metadata"]["name"] == name
    )


def _job(queue=None, kind="Job"):
    labels = {QUEUE_LABEL: queue} if queue is not None else {}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "x", "labels": labels}}
    if kind == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"jobTemplate": job}}
    return job


@pytest.mark.parametrize(
    "job, allowed",
    [
        (_job(), False),
        (_job("batch"), True),
        (_job("online"), True),
        (_job("someone-elses"), False),
        (_job("", "Job"), False),
        (_job(kind="CronJob"), False),
        (_job("batch", "CronJob"), True),
    ],
)
def test_a_teams_job_names_one_of_its_queues(job, allowed):
    found = denials(_policy(QUEUED_JOBS_POLICY), {"operation": "CREATE", "userInfo": PERSON}, job)
    assert (found == []) is allowed, found


def _owned(job, *owners):
    job["metadata"]["ownerReferences"] = [
        {"apiVersion": "batch/v1", "kind": kind, "name": "o", "uid": "u", "controller": True} for kind in owners
    ]
    return job


@pytest.mark.parametrize(
    "owners, allowed",
    [((), True), (("CronJob",), True), (("Job",), False), (("JobSet",), False), (("CronJob", "Job"), False)],
)
def test_a_teams_job_belongs_to_no_object_but_a_cronjob(owners, allowed):
    """Kueue leaves a Job whose owner is a kind it manages to that owner's workload (jobframework's
    FindAncestorJobManagedByKueue): under the team's own small admitted Job, it would run unqueued."""
    found = denials(
        _policy(QUEUED_JOBS_POLICY), {"operation": "CREATE", "userInfo": PERSON}, _owned(_job("batch"), *owners)
    )
    assert (found == []) is allowed, found


def test_a_job_cannot_be_given_an_owner_after_it_was_queued():
    spec = _policy(QUEUED_JOBS_POLICY)
    update = {"operation": "UPDATE", "userInfo": PERSON}
    assert denials(spec, update, _owned(_job("batch"), "Job"), old=_job("batch"))
    assert denials(spec, update, _owned(_job("batch"), "Job"), old=_owned(_job("batch"), "Job")) == []  # as it was


def test_a_job_made_before_queues_may_be_updated_but_not_moved_off_its_queue():
    spec = _policy(QUEUED_JOBS_POLICY)
    update = {"operation": "UPDATE", "userInfo": JOB_CONTROLLER_USER}
    assert denials(spec, update, _job(), old=_job()) == []
    assert denials(spec, update, _job("batch"), old=_job("batch")) == []
    assert denials(spec, update, _job(), old=_job("batch"))  # the label removed
    assert denials(spec, update, _job("elsewhere"), old=_job())


def _pod(priority="seedance-batch", gpus=1, where="containers", request="limits"):
    container = {"name": "c", "image": "i", "resources": {request: {GPU_RESOURCE: gpus}} if gpus else {}}
    spec = {"containers": [{"name": "main", "image": "i"}], "priorityClassName": priority}
    spec[where] = [container] + (spec["containers"] if where == "containers" else [])
    if priority is None:
        del spec["priorityClassName"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "x"}, "spec": spec}


@pytest.mark.parametrize(
    "pod, user, allowed",
    [
        (_pod(), PERSON, False),
        (_pod(request="requests"), PERSON, False),
        (_pod(where="initContainers"), PERSON, False),
        (_pod(), JOB_CONTROLLER_USER, True),
        (_pod(), {"username": "system:serviceaccount:kube-system:replicaset-controller"}, False),
        (_pod(gpus=0), PERSON, True),  # no GPU asked for: the per-namespace CPU and memory quota is enough
        (_pod(priority="seedance-online"), PERSON, True),  # online is not queued: its namespace quota holds it
        (_pod(priority=None), PERSON, True),  # refused by the team's pod policy, which asks for a class
    ],
)
def test_a_teams_batch_gpu_pod_is_the_job_controllers(pod, user, allowed):
    found = denials(_policy(QUEUED_PODS_POLICY), {"operation": "CREATE", "userInfo": user}, pod)
    assert (found == []) is allowed, found


def test_an_elastic_job_is_refused_and_kueue_runs_without_elastic_jobs():
    """Kueue gates an elastic Job's pods instead of suspending it; a team lifting the gates runs them unadmitted."""
    job = _job("batch")
    job["metadata"]["annotations"] = {ELASTIC_JOB_ANNOTATION: "true"}
    assert denials(_policy(QUEUED_JOBS_POLICY), {"operation": "CREATE", "userInfo": PERSON}, job)
    gates = kueue_values(QueuesConfig(), provisioning=False)["controllerManager"]["featureGates"]
    assert {"name": ELASTIC_JOBS, "enabled": False} in gates


def _suspended(flag):
    job = _job("batch")
    job["spec"] = {"suspend": flag}
    return job


@pytest.mark.parametrize(
    "user, old, new, allowed",
    [
        (PERSON, True, False, False),  # a team starting its queued Job itself
        ({"username": KUEUE_CONTROLLER}, True, False, True),  # Kueue admitting it
        (PERSON, False, True, True),  # suspending is always allowed
        (PERSON, False, False, True),
    ],
)
def test_only_kueue_starts_a_queued_job(user, old, new, allowed):
    request = {"operation": "UPDATE", "userInfo": user}
    found = denials(_policy(QUEUED_JOBS_POLICY), request, _suspended(new), old=_suspended(old))
    assert (found == []) is allowed, found


@pytest.mark.parametrize("grace, allowed", [(None, True), (30, True), (MAX_BATCH_GRACE_SECONDS, True), (86400, False)])
def test_a_batch_gpu_pod_stops_within_a_spot_notice(grace, allowed):
    pod = _pod()
    if grace is not None:
        pod["spec"]["terminationGracePeriodSeconds"] = grace
    found = denials(_policy(QUEUED_PODS_POLICY), {"operation": "CREATE", "userInfo": JOB_CONTROLLER_USER}, pod)
    assert (found == []) is allowed, found


def test_a_multi_node_pools_flavors_admit_a_job_once_the_autoscaler_took_all_its_nodes():
    """Only the EFA pool's flavors carry the gang check; the check is Kueue's provisioning controller asking
    for the job's GPU pods' nodes at once (best-effort atomic), and a stack without such a pool has none."""
    offered = [Flavor("a", "batch", "spot", 8), Flavor("t", "batch", "on-demand", 8, multi_node=True)]
    manifests = queue_manifests([team("x", batch=12)], {"x": ["a", "t"]}, offered)
    (queue,) = [m for m in manifests if m["kind"] == "ClusterQueue"]
    assert queue["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": GANG_CHECK, "onFlavors": ["t-on-demand"]}]
    }
    (config,) = [m for m in manifests if m["kind"] == "ProvisioningRequestConfig"]
    (check,) = [m for m in manifests if m["kind"] == "AdmissionCheck"]
    assert config["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    assert config["spec"]["managedResources"] == [GPU_RESOURCE]
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    assert check["spec"]["parameters"]["name"] == config["metadata"]["name"]
    single = queue_manifests([team("x", batch=8)], {"x": ["a"]}, offered[:1])
    assert not any(m["kind"] in ("AdmissionCheck", "ProvisioningRequestConfig") for m in single)
    assert "admissionChecksStrategy" not in next(m for m in single if m["kind"] == "ClusterQueue")["spec"]


def test_only_the_named_pools_flavors_are_multi_node():
    plans = {pool: plan(16, base=8, percentage=25) for pool in ("a", "t")}
    offered = flavors([("a", "batch", 4), ("t", "batch", 4)], plans, {}, multi_node=["t"])
    assert {f.pool for f in offered if f.multi_node} == {"t"} and any(not f.multi_node for f in offered)


def test_kueue_restarts_when_the_provisioning_api_first_appears():
    """Kueue looks for the API once, at start: the annotation that comes with it rolls its pods."""
    on = kueue_values(QueuesConfig(), provisioning=True)["controllerManager"]["manager"]
    off = kueue_values(QueuesConfig(), provisioning=False)["controllerManager"]["manager"]
    assert on["podAnnotations"] == {PROVISIONING_ANNOTATION: "served"}
    assert "podAnnotations" not in off


def test_a_pool_with_a_network_topology_gets_a_flavor_that_places_pods_by_it():
    """Its flavor names the Topology of its depth (layers from the top, the node last) and is another flavor
    than the pool's without one: Kueue freezes a flavor's topology once set."""
    plain = Flavor("t", "batch", "on-demand", 8, multi_node=True)
    placed = Flavor("t", "batch", "on-demand", 8, multi_node=True, topology_layers=3)
    assert placed.name != plain.name and placed.name.startswith("t-on-demand")
    manifests = queue_manifests([team("x", batch=8)], {"x": ["t"]}, [placed])
    (flavor,) = [m for m in manifests if m["kind"] == "ResourceFlavor"]
    (found,) = [m for m in manifests if m["kind"] == "Topology"]
    assert found == topology(3) and flavor["spec"]["topologyName"] == found["metadata"]["name"]
    assert [level["nodeLabel"] for level in found["spec"]["levels"]] == [
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        "kubernetes.io/hostname",
    ]
    (queue,) = [m for m in manifests if m["kind"] == "ClusterQueue"]
    assert queue["spec"]["resourceGroups"][0]["flavors"][0]["name"] == placed.name
    assert not any(m["kind"] == "Topology" for m in queue_manifests([team("x", batch=8)], {"x": ["t"]}, [plain]))
