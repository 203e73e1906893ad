"""A node proves its pool by the IAM role it runs as, not by labels it sets itself. Pure.

A kubelet sets its own labels and taints (`--node-labels`, `--register-with-taints`), so a root on a batch
node could call itself `online` and attract Triton's pods, their IRSA token and their traffic. The
`node-restriction.kubernetes.io/` prefix cannot help on its own: kubelets may not set it, so something
with cluster credentials would have to label every node. Instead, this ValidatingAdmissionPolicy ties
what a kubelet writes to who it is: EKS's authenticator puts the node's IAM role in the request
(`userInfo.extra.canonicalArn`), and each pool has a role of its own, so a kubelet may create or update
its Node only with the pool label, class label and pool taint of the pool its role belongs to.

The policy fails closed (`failurePolicy: Fail`), so no expression of it may err on a request it can
meet: a request without `extra` (a kubelet authenticated by a client certificate) reads as no role, and
the authenticator's canonical ARN drops the role's IAM path (aws-iam-authenticator `arn.Canonicalize`
builds it from the STS assumed-role ARN, which carries no path), so the policy keys each pool by its
role's ARN without the path too.
"""

from __future__ import annotations

import json

from components.common.manifests import Manifest, admission_policy
from components.compute.labels import NODE_GROUP_LABEL, POOL_TAINT_KEY, WORKLOAD_CLASS_LABEL

POLICY_NAME = "seedance-node-pool-identity"


def canonical_role_arn(role_arn: str) -> str:
    """The role's ARN as EKS's authenticator names it: `arn:<partition>:iam::<account>:role/<name>`, path dropped."""
    prefix, _, path_and_name = role_arn.partition(":role/")
    return f"{prefix}:role/{path_and_name.rsplit('/', 1)[-1]}"


def _cel(value: dict[str, str]) -> str:
    """A CEL map literal (JSON strings are CEL strings)."""
    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(value.items())) + "}"


def pool_identity_policy(pools: dict[str, tuple[str, str]]) -> list[Manifest]:
    """`pools`: node role ARN -> (pool name, workload class). A node role not listed (the system group's)
    may carry no pool label, class label or pool taint at all."""
    group_label, class_label = json.dumps(NODE_GROUP_LABEL), json.dumps(WORKLOAD_CLASS_LABEL)
    taint_key = json.dumps(POOL_TAINT_KEY)
    variables = [
        {"name": "pools", "expression": _cel({canonical_role_arn(arn): pool for arn, (pool, _k) in pools.items()})},
        {"name": "classes", "expression": _cel({canonical_role_arn(arn): k for arn, (_pool, k) in pools.items()})},
        {
            "name": "role",
            "expression": "has(request.userInfo.extra) && 'canonicalArn' in request.userInfo.extra && "
            "size(request.userInfo.extra['canonicalArn']) > 0 ? "
            "request.userInfo.extra['canonicalArn'][0] : ''",
        },
        {"name": "pool", "expression": "variables.role in variables.pools ? variables.pools[variables.role] : ''"},
        {"name": "klass", "expression": "variables.role in variables.classes ? variables.classes[variables.role] : ''"},
        {"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
        {"name": "taints", "expression": "has(object.spec.taints) ? object.spec.taints : []"},
    ]
    validations = [
        {
            "expression": f"!({group_label} in variables.labels) || variables.labels[{group_label}] == variables.pool",
            "message": f"a node may carry only the {NODE_GROUP_LABEL} of the pool its IAM role belongs to",
        },
        {
            "expression": f"!({class_label} in variables.labels) || variables.labels[{class_label}] == variables.klass",
            "message": f"a node may carry only the {WORKLOAD_CLASS_LABEL} of the pool its IAM role belongs to",
        },
        {
            "expression": f"variables.taints.all(t, t.key != {taint_key} || t.value == variables.pool)",
            "message": f"a node may carry only its own pool's {POOL_TAINT_KEY} taint",
        },
        {
            "expression": f"variables.pool == '' || variables.taints.exists(t, t.key == {taint_key} && "
            "t.value == variables.pool && t.effect == 'NoSchedule')",
            "message": f"a pool's node keeps its {POOL_TAINT_KEY} taint",
        },
    ]
    return admission_policy(
        POLICY_NAME,
        # a status update carries the labels too
        [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["nodes", "nodes/status"],
            }
        ],
        validations,
        variables=variables,
        # Kubelets only: people and controllers (the autoscaler, taint managers) are RBAC's to govern.
        conditions=[
            {
                "name": "kubelets",
                "expression": "has(request.userInfo.groups) && request.userInfo.groups.exists(g, g == 'system:nodes')",
            }
        ],
    )
