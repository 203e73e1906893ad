"""A stack's Kubernetes objects on a real control plane: every object the plan declares applied as the
deployer applies it, and a node of each pool registered by its kubelet (under its pool's IAM role, as EKS's
authenticator names it), played by kwok from then on."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from components.compute.pool_identity import canonical_role_arn
from components.plan.resources import HELM_RELEASE
from components.stack.config import StackConfig
from seedance.offline_cloud import OfflineCloud
from seedance_client.engine import Plan
from tests.engines.cluster import DEPLOYER, KWOK_NODE_ANNOTATION, ControlPlane
from tests.engines.kube import Answer, Identity, Kube
from tests.helm import render_release
from tests.k8s_checks import declared_manifests

TEMPLATE = "k8s.io/cluster-autoscaler/node-template/"
KUBELET_ARCH = {"x86_64": "amd64", "arm64": "arm64"}
# Kinds others refer to first, as the program's dependencies order them under `pulumi up`.
FIRST = (
    "CustomResourceDefinition",
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "ClusterRole",
    "ServiceAccount",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
)


POLICY = ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy")


def team_people(team: str) -> Identity:
    """A person of a team, as EKS names one: the access entry puts the team's role in its group."""
    return Identity("alice", (f"seedance-tenant-{team}", "system:authenticated"))


def type_checked(kube: Kube, name: str, seconds: float) -> dict:
    """A policy's status once the controller manager has type-checked its current generation."""
    deadline = time.monotonic() + seconds
    while True:
        policy = kube.get(*POLICY, name) or {}
        status = policy.get("status", {})
        if "typeChecking" in status and status.get("observedGeneration") == policy["metadata"]["generation"]:
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: the controller manager wrote no typeChecking status: {status}")
        time.sleep(0.5)


def _rank(manifest: dict) -> int:
    return FIRST.index(manifest["kind"]) if manifest["kind"] in FIRST else len(FIRST)


def object_key(manifest: dict) -> tuple[str, str, str]:
    meta = manifest["metadata"]
    return manifest["kind"], meta.get("namespace", ""), meta["name"]


@dataclass(frozen=True)
class Pool:
    name: str
    role_arn: str  # the node role, as the access entry names it
    labels: dict[str, str]
    taints: list[dict]
    capacity: dict[str, str]
    launched: int  # the nodes its group launches when created (desired capacity), one at least here
    arch: str  # as the kubelet labels its node (kubernetes.io/arch)
    zones: tuple[str, ...]  # where its nodes launch, the first node in the first zone


@dataclass
class AppliedStack:
    plane: ControlPlane
    plan: Plan
    config: StackConfig
    answers: dict[tuple[str, str, str], Answer] = field(default_factory=dict)
    nodes: dict[str, str] = field(default_factory=dict)  # pool -> its first node's name
    pools: dict[str, Pool] = field(default_factory=dict)

    def refused(self) -> dict[tuple[str, str, str], str]:
        return {key: f"{a.status} {a.message}" for key, a in self.answers.items() if not a.allowed}


def stack_zones(config: StackConfig) -> list[str]:
    """The stack's zones as the program chooses them from what the offline account offers."""
    region = OfflineCloud(config.region).region
    return config.usable_zones(dict(zip(region.zone_names, region.zone_ids)))


def pools(plan: Plan, config: StackConfig) -> dict[str, Pool]:
    """Each GPU pool's node as the autoscaler's node template describes it, with its node role."""
    zones = stack_zones(config)
    groups = {group.name: group for group in config.gpu_node_groups}
    roles = {
        r.name.removesuffix("-access").rsplit("-", 1)[-1]: r.inputs["principalArn"]
        for r in plan.of_type("aws:eks/accessEntry:AccessEntry")
        if r.inputs.get("type") == "EC2_LINUX"
    }
    found = {}
    for group in plan.of_type("aws:autoscaling/group:Group"):
        tags = {
            t["key"][len(TEMPLATE) :]: t["value"] for t in group.inputs.get("tags", []) if t["key"].startswith(TEMPLATE)
        }
        labels = {k.removeprefix("label/"): v for k, v in tags.items() if k.startswith("label/")}
        taints = [
            {"key": k.removeprefix("taint/"), "value": v.split(":")[0], "effect": v.split(":")[1]}
            for k, v in tags.items()
            if k.startswith("taint/")
        ]
        capacity = {k.removeprefix("resources/"): v for k, v in tags.items() if k.startswith("resources/")}
        name = labels["seedance.io/node-group"]
        launched = max(int(group.inputs.get("desiredCapacity") or 0), 1)
        group_config = groups[name]
        found[name] = Pool(
            name,
            roles[name],
            labels,
            taints,
            {**capacity, "pods": "110"},
            launched,
            KUBELET_ARCH[group_config.arch],
            group_config.launch_zones(zones),
        )
    return found


def kubelet(node: str, role_arn: str) -> Identity:
    """A kubelet as EKS's authenticator presents it: the node's user and group, its role in `canonicalArn`."""
    return Identity(
        f"system:node:{node}",
        ("system:nodes", "system:authenticated"),
        {"canonicalArn": (canonical_role_arn(role_arn),)},
    )


def node_object(name: str, pool: Pool, index: int = 0) -> dict:
    """The Node a kubelet of the pool registers: the pool's labels, and those every kubelet sets."""
    well_known = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": pool.arch,
        "topology.kubernetes.io/zone": pool.zones[index % len(pool.zones)],
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_NODE_ANNOTATION: "fake"},
            "labels": {**pool.labels, **well_known, "type": "kwok"},
        },
        "spec": {"taints": pool.taints},
        "status": {"capacity": pool.capacity, "allocatable": pool.capacity},
    }


def register_node(plane: ControlPlane, name: str, pool: Pool, index: int = 0) -> Answer:
    return plane.kube.create(node_object(name, pool, index), identity=kubelet(name, pool.role_arn))


def register_nodes(plane: ControlPlane, plan: Plan, config: StackConfig) -> dict[str, Pool]:
    """Every node the stack's groups launch at creation, the system group's among them, each registered by
    its pool's kubelet; the GPU pools by name."""
    gpu_pools = pools(plan, config)
    for pool in (system_pool(plan, config), *gpu_pools.values()):
        for index in range(pool.launched):
            answer = register_node(plane, f"{plan.stack}-{pool.name}-{index}", pool, index)
            if not answer.allowed:
                raise AssertionError(f"the {pool.name} pool's kubelet could not register: {answer.message}")
    return gpu_pools


def system_pool(plan: Plan, config: StackConfig) -> Pool:
    """The EKS managed system group's node, as its labels and taints and its node role declare it."""
    (group,) = plan.of_type("aws:eks/nodeGroup:NodeGroup")
    effects = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
    taints = [{**taint, "effect": effects[taint["effect"]]} for taint in group.inputs.get("taints", [])]
    capacity = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    arch = "arm64" if "ARM" in group.inputs["amiType"] else "amd64"
    labels = dict(group.inputs.get("labels", {}))
    return Pool("system", group.inputs["nodeRoleArn"], labels, taints, capacity, 1, arch, tuple(stack_zones(config)))


def release_crds(plan: Plan, kubernetes_version: str) -> list[dict]:
    """The CustomResourceDefinitions the plan's Helm releases install (Kueue's): Helm installs them with the
    release, and the program's objects of those kinds wait for it. The releases' other objects are not applied
    (their controllers do not run here: Kueue's webhooks, failing closed, would refuse everything)."""
    return [
        obj
        for release in plan.resources
        if release.type == HELM_RELEASE
        for obj in render_release(release, kubernetes_version)
        if obj["kind"] == "CustomResourceDefinition"
    ]


def established(kube: Kube, name: str, seconds: float = 60) -> None:
    """Wait until the API server serves a CustomResourceDefinition's kinds."""
    deadline = time.monotonic() + seconds
    while True:
        crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name) or {}
        conditions = (crd.get("status") or {}).get("conditions") or []
        if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} was not established: {conditions}")
        time.sleep(0.2)


def apply_stack(plane: ControlPlane, plan: Plan, config: StackConfig) -> AppliedStack:
    applied = AppliedStack(plane, plan, config)
    for crd in release_crds(plan, config.cluster.kubernetes_version):
        applied.answers[object_key(crd)] = plane.kube.apply(crd, identity=DEPLOYER)
        established(plane.kube, crd["metadata"]["name"])
    manifests = sorted(declared_manifests(plan), key=_rank)
    for manifest in manifests:
        applied.answers[object_key(manifest)] = plane.kube.apply(manifest, identity=DEPLOYER)
    applied.pools = register_nodes(plane, plan, config)
    applied.nodes = {name: f"{plan.stack}-{name}-0" for name in applied.pools}
    return applied
