"""A kubelet cannot move its node into another pool: the plan's admission policy, run by a CEL engine
against kubelet requests as EKS authenticates them (the node role in userInfo.extra.canonicalArn)."""

import pytest

from components.compute.labels import NODE_GROUP_LABEL, POOL_TAINT_KEY, WORKLOAD_CLASS_LABEL, pool_taint
from components.compute.pool_identity import POLICY_NAME
from tests.admission import denials
from tests.k8s_checks import declared_manifests, node_labels, schema_errors
from tests.stacks import stack_config

POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"


def policy_and_roles(plan):
    (policy,) = [p for p in plan.of_type(POLICY) if p.inputs["metadata"]["name"] == POLICY_NAME]
    roles = {}
    for group in stack_config(plan.stack).gpu_node_groups:
        (role,) = [
            r
            for r in plan.of_type("aws:iam/role:Role")
            if r.name.startswith(f"{plan.outputs['cluster_name']}-{group.name}-node-role")
        ]
        roles[group.name] = (
            f"arn:aws:iam::123456789012:role/{role.inputs.get('name') or role.id}",
            group.workload_class,
        )
    return policy.inputs["spec"], roles


def kubelet(role_arn, node="ip-10-0-0-1.ec2.internal"):
    return {
        "userInfo": {
            "username": f"system:node:{node}",
            "groups": ["system:nodes", "system:authenticated"],
            "extra": {"canonicalArn": [role_arn], "sessionName": ["i-0abc"]},
        }
    }


def node(pool, klass, taint_pool=None):
    labels = {NODE_GROUP_LABEL: pool, WORKLOAD_CLASS_LABEL: klass} if pool else {}
    taints = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    if taint_pool:
        taints.append(pool_taint(taint_pool))
    return {"metadata": {"name": "ip-10-0-0-1.ec2.internal", "labels": labels}, "spec": {"taints": taints}}


def test_a_kubelet_registers_as_its_own_pool(stack_plan):
    spec, roles = policy_and_roles(stack_plan)
    for pool, (role, klass) in roles.items():
        assert denials(spec, kubelet(role), node(pool, klass, pool)) == []


def test_a_kubelet_cannot_claim_another_pool_or_shed_its_taint(plan_of):
    spec, roles = policy_and_roles(plan_of("prod"))
    batch_role, _ = roles["batch"]
    assert "the seedance.io/node-group of the pool its IAM role belongs to" in " ".join(
        denials(spec, kubelet(batch_role), node("online", "batch", "batch"))
    )
    assert "seedance.io/workload-class" in " ".join(
        denials(spec, kubelet(batch_role), node("batch", "online", "batch"))
    )
    assert f"only its own pool's {POOL_TAINT_KEY} taint" in " ".join(
        denials(spec, kubelet(batch_role), node("batch", "batch", "online"))
    )
    assert "keeps its" in " ".join(denials(spec, kubelet(batch_role), node("batch", "batch", None)))
    # Its own taint, softened: other classes' pods would land there.
    softened = node("batch", "batch", "batch")
    softened["spec"]["taints"][-1]["effect"] = "PreferNoSchedule"
    assert "keeps its" in " ".join(denials(spec, kubelet(batch_role), softened))


@pytest.mark.parametrize("labelled", [False, True])
def test_a_node_of_no_pool_carries_no_pool_identity(plan_of, labelled):
    spec, _ = policy_and_roles(plan_of("prod"))
    system = "arn:aws:iam::123456789012:role/seedance-prod-system-node-role"
    found = denials(spec, kubelet(system), node("online" if labelled else None, "online", None))
    assert bool(found) == labelled


def test_people_and_controllers_are_left_to_rbac(plan_of):
    spec, roles = policy_and_roles(plan_of("prod"))
    admin = {"userInfo": {"username": "admin", "groups": ["system:authenticated"], "extra": {}}}
    assert denials(spec, admin, node("online", "online", "online")) is None


def test_each_pool_registers_its_taint_and_only_its_pods_tolerate_it(stack_plan):
    """The autoscaler's scale-from-zero template carries the same taints the kubelet registers with; a
    Triton pod tolerates its own pool's taint and no other; the contract hands teams each pool's."""
    prefix = "k8s.io/cluster-autoscaler/node-template/taint/"
    for asg in stack_plan.of_type("aws:autoscaling/group:Group"):
        pool = node_labels(asg)[NODE_GROUP_LABEL]
        taints = {t["key"][len(prefix) :]: t["value"] for t in asg.inputs["tags"] if t["key"].startswith(prefix)}
        assert taints[POOL_TAINT_KEY] == f"{pool}:NoSchedule"
    for deployment in stack_plan.of_type("kubernetes:apps/v1:Deployment"):
        spec = deployment.inputs["spec"]["template"]["spec"]
        if deployment.inputs["metadata"]["name"].startswith("triton-"):
            pools = {t.get("value") for t in spec["tolerations"] if t["key"] == POOL_TAINT_KEY}
            assert pools == {spec["nodeSelector"][NODE_GROUP_LABEL]}
    for pool in stack_plan.outputs["gpu_pools"]:
        assert {"key": POOL_TAINT_KEY, "operator": "Equal", "value": pool["name"], "effect": "NoSchedule"} in pool[
            "tolerations"
        ]


def test_the_policy_matches_the_official_schema(stack_plan):
    manifests = declared_manifests(stack_plan, "seedance:compute:PoolIdentity")
    assert len(manifests) == 2
    assert schema_errors(manifests, stack_config(stack_plan.stack).cluster.kubernetes_version) == []


def test_status_updates_are_judged_too(plan_of):
    """A kubelet writes its Node's status through nodes/status, and that request carries labels as well."""
    spec, _ = policy_and_roles(plan_of("prod"))
    (rule,) = spec["matchConstraints"]["resourceRules"]
    assert {"nodes", "nodes/status"} <= set(rule["resources"])


def test_a_request_without_extra_or_groups_is_judged_not_an_error(plan_of):
    """The policy fails closed: an expression that errs would deny every kubelet, system nodes included.
    A kubelet authenticated without `extra` (a client certificate) reads as a node of no pool."""
    spec, roles = policy_and_roles(plan_of("prod"))
    bare = {"userInfo": {"username": "system:node:ip-10-0-0-1", "groups": ["system:nodes"]}}
    assert denials(spec, bare, node(None, "online", None)) == []
    assert denials(spec, {"userInfo": {**bare["userInfo"], "extra": {}}}, node(None, "online", None)) == []
    assert denials(spec, bare, node("online", "online", "online"))  # no role: no pool's identity either
    assert denials(spec, {"userInfo": {"username": "someone"}}, node("online", "online", "online")) is None


def test_a_node_role_with_an_iam_path_is_matched_without_it():
    """EKS's canonical ARN drops the role's path (aws-iam-authenticator builds it from the STS ARN)."""
    from components.compute.pool_identity import canonical_role_arn, pool_identity_policy

    pathed = "arn:aws:iam::123456789012:role/nodes/gpu/seedance-prod-online-node-role"
    (policy, _binding) = pool_identity_policy({pathed: ("online", "online")})
    canonical = "arn:aws:iam::123456789012:role/seedance-prod-online-node-role"
    assert canonical_role_arn(pathed) == canonical == canonical_role_arn(canonical)
    assert denials(policy["spec"], kubelet(canonical), node("online", "online", "online")) == []
    assert denials(policy["spec"], kubelet(pathed), node("online", "online", "online"))
