"""components/tenancy/manifests.py: a team's pod guard ties each pod's class to its pools of that class, so a
team with online GPUs cannot put an online pod (uncounted by any batch quota or queue, and outranking the
batch work there) on a batch pool."""

import pytest

from components.compute.labels import pool_tolerations
from components.compute.priority import PRIORITY_CLASS
from components.tenancy.config import TenantConfig
from components.tenancy.manifests import tenant_pod_policy
from tests.admission import denials

TEAM = TenantConfig(name="both", principal_arns=["arn:aws:iam::123456789012:role/both"], gpus={"batch": 4, "online": 2})
POOLS = {"batch": "batch", "train": "batch", "online": "online"}
REQUEST = {"operation": "CREATE", "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"}}


def _pod(klass, pool):
    spec = {"priorityClassName": PRIORITY_CLASS[klass], "tolerations": pool_tolerations(pool), "containers": []}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "both"}, "spec": spec}


@pytest.mark.parametrize(
    "klass, pool, allowed",
    [
        ("batch", "batch", True),
        ("batch", "train", True),
        ("online", "online", True),
        ("online", "batch", False),  # the attack: online GPUs on a batch pool
        ("online", "train", False),
        ("batch", "online", False),
    ],
)
def test_a_teams_pod_tolerates_only_its_pools_of_its_class(klass, pool, allowed):
    (policy,) = [m["spec"] for m in tenant_pod_policy(TEAM, POOLS) if m["kind"] == "ValidatingAdmissionPolicy"]
    found = denials(policy, REQUEST, _pod(klass, pool))
    assert (found == []) is allowed, found
