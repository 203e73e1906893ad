"""The autoscaler component as prod's plan declares it: its role is assumable by its own service account only,
its policy is the platform's, and its release waits for the ProvisioningRequest API it answers."""

import json

from components.cluster.autoscaling import NAMESPACE, SERVICE_ACCOUNT
from components.cluster.provisioning import PROVISIONING_CRD_NAME


def _named(plan, type_, suffix):
    (found,) = [r for r in plan.of_type(type_) if r.name.endswith(suffix)]
    return found


def test_its_role_its_policy_and_its_release_order(plan_of):
    prod = plan_of("prod")
    role = _named(prod, "aws:iam/role:Role", "-autoscaler-role")
    trust = json.loads(role.inputs["assumeRolePolicy"])
    (statement,) = trust["Statement"]
    subjects = [v for condition in statement["Condition"].values() for k, v in condition.items() if k.endswith(":sub")]
    assert subjects == [f"system:serviceaccount:{NAMESPACE}:{SERVICE_ACCOUNT}"]
    policy = json.loads(_named(prod, "aws:iam/rolePolicy:RolePolicy", "-autoscaler-policy").inputs["policy"])
    scale = next(s for s in policy["Statement"] if s["Sid"] == "ScaleThisClustersGroups")
    assert scale["Condition"]["StringEquals"] == {"aws:ResourceTag/k8s.io/cluster-autoscaler/seedance-prod": "owned"}
    crd = _named(prod, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", PROVISIONING_CRD_NAME)
    release = _named(prod, "kubernetes:helm.sh/v3:Release", "-autoscaler-release")
    assert crd.urn in release.dependencies
