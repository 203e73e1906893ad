"""A team's plan held to its platform's contract by the client alone (seedance_client/team_rules.py): the
same verdict for every spelling of the same placement, set reasoning over the pools a pod may reach, claims
priced from the contract as the platform's own cost model prices them."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.cost.estimate import catalog_for, estimate
from components.plan.resources import PlanResource
from components.tenancy.queues import JOB_CONTROLLER, QUEUED_JOBS_POLICY, QUEUED_PODS_POLICY, queue_admission_policies
from seedance_client.contract import (
    ELASTIC_JOB_ANNOTATION,
    GPU_RESOURCE,
    QUEUE_LABEL,
    ClaimPrice,
    GpuPool,
    PlatformContract,
)
from seedance_client.team_rules import (
    COSTLY_CLAIM_USD,
    claim_cost,
    contract_fit,
    pod_spec,
    pools_reached,
    quantity_gib,
    queue_fit,
    team_findings,
)
from tests.admission import denials
from tests.stacks import REPO

FIXTURE = json.loads((REPO / "tests/fixtures/policies/kubernetes-tenant-require-contract-fit.json").read_text())
CONTRACT = PlatformContract.model_validate(FIXTURE["config"]["contracts"][0])
POOL_NAMES = ("batch", "online", "train", "h100")


def pools(names=POOL_NAMES):
    classes = {"batch": "batch", "train": "batch", "online": "online", "h100": "batch"}
    return [
        GpuPool(
            name=n,
            workload_class=classes[n],
            instance_types=["g6.xlarge"],
            gpus_per_node={"g6.xlarge": 1},
            node_selector={"seedance.io/workload-class": classes[n], "seedance.io/node-group": n},
            tolerations=[GPU, {"key": "seedance.io/pool", "operator": "Equal", "value": n, "effect": "NoSchedule"}],
        )
        for n in names
    ]


GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def tolerating(name):
    return [GPU, {"key": "seedance.io/pool", "operator": "Equal", "value": name, "effect": "NoSchedule"}]


def job(spec, namespace="video-train", team="video-ml", kind="Job"):
    spec = {"tolerations": [{"operator": "Exists"}], **spec}  # every taint: only the node selection decides
    return {
        "kind": kind,
        "metadata": {"name": "j", "namespace": namespace, "labels": {"team": team}},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": team}},
                "spec": {**spec, "containers": [{"name": "c", "image": "i"}]},
            }
        },
    }


def affinity(*terms):
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(term)} for term in terms]
                }
            }
        }
    }


def spellings(target: frozenset[str]):
    """Every way this test knows to ask for exactly the pools in `target` (by group label)."""
    key = "seedance.io/node-group"
    rest = sorted(set(POOL_NAMES) - target)
    found = [
        affinity([{"key": key, "operator": "In", "values": sorted(target)}]),
        affinity(*[[{"key": key, "operator": "In", "values": [name]}] for name in sorted(target)]),
    ]
    if rest:
        found.append(affinity([{"key": key, "operator": "NotIn", "values": rest}]))
    if len(target) == 1:
        (name,) = target
        found += [
            {"nodeSelector": {key: name}},
            {"nodeSelector": {key: name, "topology.kubernetes.io/zone": "us-east-1a"}},  # not a pool's label
            {"nodeSelector": {key: name}, **affinity([{"key": key, "operator": "Exists"}])},
        ]
    return found


@settings(max_examples=60, deadline=None)
@given(st.frozensets(st.sampled_from(POOL_NAMES), min_size=1))
def test_every_spelling_of_the_same_placement_reaches_the_same_pools(target):
    for spec in spellings(target):
        reached, asks = pools_reached(
            {**spec, "tolerations": [GPU, {"key": "seedance.io/pool", "operator": "Exists"}]}, pools()
        )
        assert asks and {p.name for p in reached} == target, spec


def test_a_pod_reaches_a_pool_by_its_labels_and_its_tolerations_together():
    assert pools_reached({"nodeSelector": {"kubernetes.io/arch": "amd64"}}, pools()) == ([], False)
    assert [p.name for p in pools_reached({"tolerations": tolerating("train")}, pools())[0]] == ["train"]
    assert [p.name for p in pools_reached({"tolerations": [{"operator": "Exists"}]}, pools())[0]] == list(POOL_NAMES)
    wrong_effect = [GPU, {"key": "seedance.io/pool", "operator": "Exists", "effect": "NoExecute"}]
    assert pools_reached({"tolerations": wrong_effect}, pools())[0] == []
    gpu_only = {"nodeSelector": {"seedance.io/node-group": "batch"}, "tolerations": [GPU]}
    assert pools_reached(gpu_only, pools()) == ([], True)  # the pool's own taint is not tolerated
    # The GPU taint's value is not in the contract (its toleration is Exists): a pod naming one may match it.
    equal = [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        {"key": "seedance.io/pool", "operator": "Exists"},
    ]
    assert [p.name for p in pools_reached({"tolerations": equal}, pools())[0]] == list(POOL_NAMES)
    # Bound to a node by name: no scheduler and no NoSchedule taint stand between it and any pool.
    assert pools_reached({"nodeName": "ip-10-0-1-5.ec2.internal"}, pools()) == (pools(), True)
    impossible = {"nodeSelector": {"seedance.io/node-group": "batch", "seedance.io/workload-class": "online"}}
    assert pools_reached(impossible, pools()) == ([], True)
    absent = affinity([{"key": "seedance.io/node-group", "operator": "DoesNotExist"}])
    assert pools_reached(absent, pools()) == ([], True)


def test_a_pod_tolerates_only_its_teams_pools_of_its_class_as_the_platforms_admission_says():
    contract = CONTRACT.model_copy(update={"gpu_pools": pools(("batch", "online", "train"))})
    own = [GPU, *tolerating("batch")[1:], *tolerating("train")[1:]]
    fits = job({"priorityClassName": "seedance-batch", "tolerations": own})
    assert contract_fit("kubernetes:batch/v1:Job", "j", fits, [contract]) == []
    refused = "j: its pods are refused: team video-ml's pods tolerate only its pools of their class"
    for tolerations in (
        [{"operator": "Exists"}],
        [GPU, {"key": "seedance.io/pool", "operator": "Exists"}],
        [
            GPU,
            *tolerating("online")[1:],
        ],
    ):
        wide = job({"priorityClassName": "seedance-batch", "tolerations": tolerations})
        (message,) = contract_fit("kubernetes:batch/v1:Job", "j", wide, [contract])
        assert message.startswith(refused), message


@pytest.mark.parametrize(
    "token, props, found",
    [
        (
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            {"metadata": {"name": "b"}},
            "a ClusterRoleBinding without a namespace is cluster-wide",
        ),
        (
            "kubernetes:core/v1:ConfigMap",
            {"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"team": "video-ml"}}},
            "provider's default namespace",
        ),
        (
            "kubernetes:helm.sh/v3:Release",
            {"namespace": "training", "chart": "x"},
            "namespace training belongs to no team",
        ),
        ("kubernetes:helm.sh/v3:Release", {"chart": "x"}, "without a namespace"),
        (
            "kubernetes:core/v1:Pod",
            {
                "kind": "Pod",
                "metadata": {"namespace": "video-api", "labels": {"team": "video-ml"}},
                "spec": {"priorityClassName": "system-node-critical", "containers": []},
            },
            "system-node-critical is reserved for the platform's own add-ons",
        ),
    ],
)
def test_objects_outside_the_teams_namespaces_or_names_are_refused(token, props, found):
    messages = contract_fit(token, "x", props, [CONTRACT])
    assert any(found in message for message in messages), messages


def test_what_the_client_cannot_see_is_said_and_fails_and_what_the_gate_renders_is_left_to_it():
    release = {"namespace": "video-train", "chart": "oci://example/chart", "values": {"nodeName": "anything"}}
    (unseen,) = contract_fit("kubernetes:helm.sh/v3:Release", "r", release, [CONTRACT])
    assert "a Helm release's objects are not rendered by the client's check" in unseen
    assert contract_fit("kubernetes:helm.sh/v3:Release", "r", release, [CONTRACT], renders_charts=True) == []
    for token in ("kubernetes:yaml/v2:ConfigGroup", "kubernetes:helm.sh/v4:Chart", "kubernetes:kustomize/v2:Directory"):
        (built,) = contract_fit(token, "g", {"files": ["x.yaml"]}, [CONTRACT])
        assert "built by the provider at deploy time" in built
    findings, _ = team_findings([("kubernetes:helm.sh/v3:Release", "r", release)], [CONTRACT])
    assert [f.level for f in findings] == ["mandatory"]


def test_what_is_not_an_object_or_has_no_platform_is_not_judged():
    # the SDK's own components register their children, which are judged; a provider is no object
    assert contract_fit("kubernetes:yaml:ConfigGroup", "c", {"kind": "ConfigGroup"}, [CONTRACT]) == []
    assert contract_fit("pulumi:providers:kubernetes", "p", {"kubeconfig": "..."}, [CONTRACT]) == []
    assert contract_fit("kubernetes:batch/v1:Job", "j", job({}, namespace="anywhere"), []) == []  # the platform's own
    # a custom resource whose kind happens to be a component's name is an object like any other
    (crd,) = contract_fit(
        "kubernetes:example.com/v1:Chart", "c", {"kind": "Chart", "metadata": {"namespace": "x"}}, [CONTRACT]
    )
    assert "namespace x belongs to no team" in crd
    untenanted = CONTRACT.model_copy(update={"tenants": []})
    assert (
        contract_fit(
            "kubernetes:batch/v1:Job",
            "j",
            job({"nodeSelector": {"seedance.io/node-group": "batch"}}, namespace="x"),
            [untenanted],
        )
        == []
    )


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 4096))
def test_every_spelling_of_a_size_is_the_same_gib(gib):
    spelled = [
        f"{gib}Gi",
        f"{gib * 1024}Mi",
        f"{gib * 1024**2}Ki",
        str(gib * 2**30),
        f"{gib / 1024}Ti",
        f"+{gib}Gi",
        f"{gib * 2**30 / 1000}k",
        f"{gib * 2**30 / 10**6}e6",
        f"{gib * 2**30}E0",
    ]
    assert {round(quantity_gib(s), 9) for s in spelled} == {gib}


@pytest.mark.parametrize("text", ["64GB", "-1Gi", "Gi", "1K", "64 Gi x", "", "1e", "."])
def test_a_size_no_api_server_takes_is_refused(text):
    with pytest.raises(ValueError):
        quantity_gib(text)


def test_a_decimal_size_is_decimal():
    assert quantity_gib("100G") == pytest.approx(100e9 / 2**30) and quantity_gib("500M") == pytest.approx(0.4657, 1e-3)
    assert quantity_gib("1e12") == quantity_gib("1T") == pytest.approx(931.32, 1e-4)  # an io2 claim of 931 GiB
    assert quantity_gib(".5Gi") == 0.5 and quantity_gib("1e3") == pytest.approx(1000 / 2**30)


def claim(size="64Gi", cls="checkpoints", **spec):
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"namespace": "video-train", "labels": {"team": "video-ml"}},
        "spec": {"storageClassName": cls, "resources": {"requests": {"storage": size}}, **spec},
    }


def test_a_claim_is_priced_by_the_contract_as_the_platforms_estimate_prices_it(plan_of):
    """The client's price (contract 1.3) and the platform's cost model agree, for every size."""
    outputs = {k: getattr(v, "value", v) for k, v in plan_of("prod").outputs.items()}
    contract = PlatformContract.model_validate(outputs)
    volumes = outputs["storage_classes"]["volumes"]
    for size in ("64Gi", "100G", "1Ti", "5Gi"):
        ours = claim_cost("c", claim(size), [contract]).monthly_usd
        platform = (
            estimate(
                [PlanResource("urn:c", "kubernetes:core/v1:PersistentVolumeClaim", "c", claim(size))],
                catalog_for(outputs["region"]),
                storage_classes=volumes,
            )
            .lines[0]
            .monthly_usd
        )
        assert ours == pytest.approx(platform, abs=0.01), size
    assert claim_cost("c", claim("64Gi"), [contract]).monthly_usd == 3544.0  # io2 at 64,000 IOPS: the figure


def test_claims_the_contract_cannot_price_say_why_and_are_never_guessed():
    priced = CONTRACT.model_copy(
        update={
            "storage_classes": CONTRACT.storage_classes.model_copy(
                update={
                    "local": "local-nvme",
                    "claim_prices": {"fast": ClaimPrice(usd_per_gib_month=0.125, usd_per_month=100)},
                }
            )
        }
    )
    assert claim_cost("c", claim("8Gi", "fast"), [priced]).monthly_usd == 101.0
    assert claim_cost("c", claim("8Gi", "local-nvme"), [priced]).monthly_usd == 0.0
    assert claim_cost("c", claim("8Gi", "fast", volumeName="pv-1"), [priced]).monthly_usd == 0.0
    other = claim_cost("c", claim("8Gi", "gp2"), [priced])
    assert other.monthly_usd is None and "no price in the platform's contract" in other.reason
    odd = claim_cost("c", claim("lots", "fast"), [priced])
    assert odd.monthly_usd is None and "not a Kubernetes quantity" in odd.reason
    assert claim_cost("j", job({}), [priced]) is None


def test_findings_fail_on_fit_and_name_claims_above_the_limit_only():
    priced = CONTRACT.model_copy(
        update={
            "storage_classes": CONTRACT.storage_classes.model_copy(
                update={"claim_prices": {"fast": ClaimPrice(usd_per_gib_month=1, usd_per_month=0)}}
            )
        }
    )
    at_limit = ("kubernetes:core/v1:PersistentVolumeClaim", "at", claim(f"{COSTLY_CLAIM_USD:g}Gi", "fast"))
    above = ("kubernetes:core/v1:PersistentVolumeClaim", "above", claim(f"{COSTLY_CLAIM_USD + 1:g}Gi", "fast"))
    stray = ("kubernetes:batch/v1:Job", "stray", job({}, namespace="default"))
    other = ("aws:s3/bucket:Bucket", "b", {"kind": "Job"})  # not a Kubernetes object, whatever its inputs say
    findings, costs = team_findings([at_limit, above, stray, other], [priced])
    assert [(f.level, f.message.split(":")[0]) for f in findings] == [("advisory", "above"), ("mandatory", "stray")]
    assert [c.monthly_usd for c in costs] == [COSTLY_CLAIM_USD, COSTLY_CLAIM_USD + 1]


QUEUED = CONTRACT.model_copy(update={"queues": {"batch": "batch", "online": "online"}})
MAKERS = {  # who creates the pods of each kind (kube-controller-manager's controllers, or the person)
    "Pod": "alice",
    "Deployment": "system:serviceaccount:kube-system:replicaset-controller",
    "Job": JOB_CONTROLLER,
    "CronJob": JOB_CONTROLLER,
}


def _queued_object(kind, queue=None, priority="seedance-batch", gpus=True, owner=None, grace=None, **extra):
    container = {"name": "c", "image": "i", **({"resources": {"limits": {GPU_RESOURCE: "1"}}} if gpus else {})}
    pod = {"priorityClassName": priority, "containers": [container]}
    if grace is not None:
        pod["terminationGracePeriodSeconds"] = grace
    labels = {"team": "video-ml", **({QUEUE_LABEL: queue} if queue is not None else {})}
    metadata = {"name": "w", "namespace": "video-train", "labels": labels}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": owner, "name": "o", "uid": "u"}]
    if "annotations" in extra:
        metadata["annotations"] = extra["annotations"]
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": kind, "metadata": metadata, "spec": pod}
    template = {"metadata": {"labels": {"team": "video-ml"}}, "spec": pod}
    if kind == "CronJob":
        job = {"metadata": {"labels": labels}, "spec": {"template": template}}
        return {
            "apiVersion": "batch/v1",
            "kind": kind,
            "metadata": {**metadata, "labels": {"team": "video-ml"}},
            "spec": {"schedule": "@daily", "jobTemplate": job},
        }
    group = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": group, "kind": kind, "metadata": metadata, "spec": {"template": template}}


def _template_queued():
    """A Job with no labels of its own and the queue label on its pod template only."""
    job = _queued_object("Job")
    job["metadata"]["labels"] = {}
    job["spec"]["template"]["metadata"]["labels"] = {"team": "video-ml", QUEUE_LABEL: "batch"}
    return job


def _platform_refuses(obj) -> bool:
    """The platform's queue guards (components/tenancy/queues.py) on the object and on the pods it makes."""
    policies = {
        m["metadata"]["name"]: m["spec"] for m in queue_admission_policies() if m["kind"] == "ValidatingAdmissionPolicy"
    }
    refused = False
    if obj["kind"] == "Job" and not obj["metadata"].get("labels"):  # the API server's defaulting, before admission
        obj = {**obj, "metadata": {**obj["metadata"], "labels": obj["spec"]["template"]["metadata"]["labels"]}}
    if obj["kind"] in ("Job", "CronJob"):
        refused |= bool(
            denials(policies[QUEUED_JOBS_POLICY], {"operation": "CREATE", "userInfo": {"username": "a"}}, obj)
        )
    spec = pod_spec(obj)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "video-train"}, "spec": spec}
    request = {"operation": "CREATE", "userInfo": {"username": MAKERS[obj["kind"]]}}
    return refused or bool(denials(policies[QUEUED_PODS_POLICY], request, pod))


@pytest.mark.parametrize(
    "obj",
    [
        _queued_object("Job"),
        _queued_object("Job", "batch"),
        _queued_object("Job", "online", priority="seedance-online"),
        _queued_object("Job", "another-teams"),
        _queued_object("Job", ""),
        _queued_object("Job", "batch", owner="Job"),  # Kueue leaves it to its owner's workload
        _queued_object("Job", "batch", owner="CronJob"),
        _queued_object("Job", "batch", annotations={ELASTIC_JOB_ANNOTATION: "true"}),
        _queued_object("Job", "batch", grace=86400),
        _queued_object("Job", "batch", grace=60),
        _template_queued(),
        _queued_object("CronJob"),
        _queued_object("CronJob", "batch"),
        _queued_object("Pod"),
        _queued_object("Pod", "batch"),  # a pod's queue label does not queue it: only Jobs are
        _queued_object("Pod", priority="seedance-online"),
        _queued_object("Pod", gpus=False),
        _queued_object("Deployment"),
        _queued_object("Deployment", priority="seedance-online"),
    ],
    ids=lambda o: (),
)
def test_the_clients_queue_verdict_is_the_platforms_guards(obj):
    client = queue_fit("w", obj["kind"], obj, pod_spec(obj), [QUEUED])
    assert bool(client) is _platform_refuses(obj), client


def test_a_platform_without_queues_asks_no_queue():
    assert contract_fit("kubernetes:batch/v1:Job", "w", _queued_object("Job"), [CONTRACT]) == []
    refused = contract_fit("kubernetes:batch/v1:Job", "w", _queued_object("Job"), [QUEUED])
    assert refused and QUEUE_LABEL in refused[0]
