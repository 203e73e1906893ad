"""The attacker's edits of the prod plan (issue 35's review, each control in three or more spellings), run
through `seedance check --plan FILE --env prod` as the pull-request gate runs it: every one fails the gate
naming the rule that guards the control."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest

from tests.policies.test_security_gate import _add_statement, _one, gate, tampered
from tests.stacks import stack_config

OTHER = "999988887777"
ISSUER = "oidc.eks.us-east-1.amazonaws.com/id/D6DE3D052C46DCA983A4D49F00166093"


def _statement(type_, name, statement, key="policy"):
    return lambda rs: _add_statement(_one(rs, type_, name), key, statement)


def _open(condition):
    return {"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*", "Condition": condition}


def _trust(condition):
    def tamper(rs):
        role = _one(rs, "aws:iam/role:Role", "triton-video-role")
        role["inputs"]["assumeRolePolicy"] = json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Federated": f"arn:aws:iam::123456789012:oidc-provider/{ISSUER}"},
                        "Action": "sts:AssumeRoleWithWebIdentity",
                        **({"Condition": condition} if condition else {}),
                    }
                ],
            }
        )

    return tamper


def _guard_spec(name, **spec):
    return lambda rs: _one(rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", name)["inputs"][
        "spec"
    ].update(spec)


def _add(type_, name, inputs):
    def tamper(rs):
        rs.append(
            {
                "urn": f"urn:pulumi:prod::seedance-gpu::{type_}::{name}",
                "type": type_,
                "name": name,
                "id": name,
                "parent": None,
                "dependencies": [],
                "inputs": inputs,
            }
        )

    return tamper


def _triton(change):
    def tamper(rs):
        change(_one(rs, "kubernetes:apps/v1:Deployment", "triton-video")["inputs"]["spec"]["template"]["spec"])

    return tamper


def _context(**settings):
    return _triton(lambda spec: spec["containers"][0]["securityContext"].update(settings))


def _host_path(path):
    return _triton(lambda spec: spec["volumes"].append({"name": "host", "hostPath": {"path": path}}))


def _policy(namespace, change):
    def tamper(rs):
        policies = [
            r
            for r in rs
            if r["type"] == "kubernetes:networking.k8s.io/v1:NetworkPolicy"
            and r["inputs"]["metadata"].get("namespace") == namespace
        ]
        change(policies)

    return tamper


def _ingress(peers, ports=None):
    rule = {"from": peers, **({"ports": ports} if ports is not None else {})}
    return _policy("triton-video", lambda ps: ps[0]["inputs"]["spec"].setdefault("ingress", []).append(rule))


def _deny(change):
    return _policy(
        "triton-video",
        lambda ps: change(
            next(p for p in ps if p["inputs"]["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]})[
                "inputs"
            ]["spec"]
        ),
    )


def _tenant_role(rules):
    def grow(rs):
        (role,) = [
            r
            for r in rs
            if r["type"] == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
            and r["inputs"]["metadata"]["name"] == "seedance-tenant"
        ]
        role["inputs"]["rules"].extend(rules)

    return grow


def _binding(kind, role):
    return _add(
        f"kubernetes:rbac.authorization.k8s.io/v1:{kind}",
        "extra-binding",
        {
            "metadata": {"name": "extra", "namespace": "video-api"},
            "roleRef": {"kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "video-api"}],
        },
    )


def _values(change):
    return lambda rs: change(_one(rs, "kubernetes:helm.sh/v3:Release", "metrics-prometheus")["inputs"]["values"])


def _public_groups(rs):
    public = [r["id"] for r in rs if r["type"] == "aws:ec2/subnet:Subnet" and "public" in r["name"]]
    _one(rs, "aws:autoscaling/group:Group", "online")["inputs"]["vpcZoneIdentifiers"] = public


def _ipv6_to_internet(rs):
    gateway = _one(rs, "aws:ec2/internetGateway:InternetGateway")["id"]
    _one(rs, "aws:ec2/routeTable:RouteTable", "private-rt")["inputs"]["routes"] = [
        {"ipv6CidrBlock": "::/0", "gatewayId": gateway}
    ]


def _lt(change):
    return lambda rs: [change(r["inputs"]) for r in rs if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]


def _service(annotations, **spec):
    def tamper(rs):
        service = _one(rs, "kubernetes:core/v1:Service", "triton-video")["inputs"]
        service["spec"].update(type="LoadBalancer", **spec)
        service["metadata"]["annotations"] = annotations

    return tamper


LB = "service.beta.kubernetes.io/aws-load-balancer-"
KEY = ("aws:kms/key:Key", "prod-key")
BUCKET = ("aws:s3/bucketPolicy:BucketPolicy", "models-tls-only")
QUEUE = ("aws:sqs/queuePolicy:QueuePolicy", "")
IAM = "aws-iam-policy-disallow-public-principal"
PSS = "kubernetes-pod-enforce-pod-security-standards"
NETPOL = "kubernetes-networkpolicy-disallow-allow-all"
DENY = "kubernetes-namespace-require-default-deny"
ROLE = "kubernetes-rbac-role-disallow-escalation"
BINDING = "kubernetes-rbac-binding-disallow-escalating-roles"
ADMINS = stack_config("prod").cluster.admin_principal_arns

ATTACKS = [
    # IAM: `*` narrowed by someone else, or by nothing that fails closed
    (
        "iam",
        "key * for another account",
        _statement(*KEY, _open({"StringEquals": {"aws:PrincipalAccount": OTHER}})),
        IAM,
    ),
    (
        "iam",
        "bucket * for another org, key upper case",
        _statement(
            *BUCKET, {**_open({"StringEquals": {"AWS:PRINCIPALORGID": "o-stranger"}}), "Action": "s3:GetObject"}
        ),
        IAM,
    ),
    (
        "iam",
        "queue * from an outside endpoint",
        _statement(
            *QUEUE, {**_open({"StringEquals": {"aws:SourceVpce": "vpce-0outside"}}), "Action": "sqs:SendMessage"}
        ),
        IAM,
    ),
    (
        "iam",
        "key * by a policy variable",
        _statement(*KEY, _open({"StringEquals": {"aws:PrincipalAccount": "${aws:PrincipalAccount}"}})),
        IAM,
    ),
    (
        "iam",
        "key to everyone but the home account (NotPrincipal)",
        _statement(
            *KEY,
            {
                "Effect": "Allow",
                "NotPrincipal": {"AWS": "arn:aws:iam::123456789012:root"},
                "Action": "kms:Decrypt",
                "Resource": "*",
            },
        ),
        IAM,
    ),
    (
        "iam",
        "key * under IfExists",
        _statement(*KEY, _open({"StringEqualsIfExists": {"aws:PrincipalAccount": "123456789012"}})),
        IAM,
    ),
    # IAM: OIDC trust and other accounts
    ("trust", "IRSA without sub", _trust({"StringEquals": {f"{ISSUER}:aud": "sts.amazonaws.com"}}), IAM),
    (
        "trust",
        "IRSA sub by wildcard",
        _trust(
            {
                "StringEquals": {f"{ISSUER}:aud": "sts.amazonaws.com"},
                "StringLike": {f"{ISSUER}:sub": "system:serviceaccount:*:*"},
            }
        ),
        IAM,
    ),
    ("trust", "IRSA without aud", _trust({"StringEquals": {f"{ISSUER}:sub": "system:serviceaccount:a:b"}}), IAM),
    ("trust", "IRSA with no condition", _trust(None), IAM),
    (
        "trust",
        "the publisher trusts GitHub's OIDC for another repository (exact sub and aud)",
        lambda rs: _one(rs, "aws:iam/role:Role", "publisher")["inputs"].update(
            assumeRolePolicy=json.dumps(
                {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {
                                "Federated": (
                                    "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"
                                )
                            },
                            "Action": "sts:AssumeRoleWithWebIdentity",
                            "Condition": {
                                "StringEquals": {
                                    "token.actions.githubusercontent.com:sub": (
                                        "repo:someone-else/fork:ref:refs/heads/main"
                                    ),
                                    "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
                                }
                            },
                        }
                    ]
                }
            )
        ),
        IAM,
    ),
    (
        "trust",
        "IRSA for a tenant namespace's default service account",
        _trust(
            {
                "StringEquals": {
                    f"{ISSUER}:aud": "sts.amazonaws.com",
                    f"{ISSUER}:sub": "system:serviceaccount:triton-video:default",
                }
            }
        ),
        IAM,
    ),
    (
        "trust",
        "another account's root",
        lambda rs: _one(rs, "aws:iam/role:Role", "publisher")["inputs"].update(
            assumeRolePolicy=json.dumps(
                {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"AWS": f"arn:aws:iam::{OTHER}:root"},
                            "Action": "sts:AssumeRole",
                        }
                    ]
                }
            )
        ),
        IAM,
    ),
    (
        "resource types",
        "a Lambda permission for anyone",
        lambda rs: _one(rs, "aws:lambda/permission:Permission")["inputs"].update(principal="*", sourceArn=None),
        IAM,
    ),
    (
        "resource types",
        "a Lambda permission for a service acting for any account",
        lambda rs: _one(rs, "aws:lambda/permission:Permission")["inputs"].update(sourceArn=None),
        IAM,
    ),
    (
        "resource types",
        "a key policy as its own resource",
        _add(
            "aws:kms/keyPolicy:KeyPolicy",
            "extra-key-policy",
            {
                "keyId": "k",
                "policy": json.dumps(
                    {"Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:*", "Resource": "*"}]}
                ),
            },
        ),
        IAM,
    ),
    (
        "resource types",
        "a trust policy unknown at preview",
        lambda rs: _one(rs, "aws:iam/role:Role", "publisher")["inputs"].update(assumeRolePolicy="(unknown)"),
        IAM,
    ),
    (
        "resource types",
        "private subnets shared with another account through RAM",
        lambda rs: (
            [
                _add(
                    "aws:ram/resourceAssociation:ResourceAssociation",
                    f"share-{subnet['id']}",
                    {
                        "resourceArn": f"arn:aws:ec2:us-east-1:123456789012:subnet/{subnet['id']}",
                        "resourceShareArn": "arn:aws:ram:us-east-1:123456789012:resource-share/s",
                    },
                )(rs)
                for subnet in [r for r in rs if r["type"] == "aws:ec2/subnet:Subnet" and "private" in r["name"]]
            ]
            + [
                _add(
                    "aws:ram/principalAssociation:PrincipalAssociation",
                    "partner",
                    {"principal": OTHER, "resourceShareArn": "arn:aws:ram:us-east-1:123456789012:resource-share/s"},
                )(rs)
            ]
        ),
        IAM,
    ),
    (
        "resource types",
        "a RAM share with another organisation's OU",
        _add(
            "aws:ram/principalAssociation:PrincipalAssociation",
            "partner-ou",
            {
                "principal": f"arn:aws:organizations::{OTHER}:ou/o-partner1/ou-ab12-cdef3456",
                "resourceShareArn": "arn:aws:ram:us-east-1:123456789012:resource-share/s",
            },
        ),
        IAM,
    ),
    (
        "admin",
        "AdministratorAccess on a node role",
        _add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "admin",
            {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess", "role": "seedance-prod-online-node-role"},
        ),
        "aws-iam-role-disallow-admin-policies",
    ),
    (
        "admin",
        "every action inline",
        _statement(
            "aws:iam/rolePolicy:RolePolicy",
            "autoscaler-policy",
            {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
        ),
        "aws-iam-role-disallow-admin-policies",
    ),
    (
        "admin",
        "IAMFullAccess in the role's own list",
        lambda rs: _one(rs, "aws:iam/role:Role", "batch-node-role")["inputs"].update(
            managedPolicyArns=["arn:aws:iam::aws:policy/IAMFullAccess"]
        ),
        "aws-iam-role-disallow-admin-policies",
    ),
    (
        "access",
        "a tenant given cluster admin",
        _add(
            "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
            "team-admin",
            {
                "clusterName": "seedance-prod",
                "principalArn": "arn:aws:iam::123456789012:role/video-ml-engineers",
                "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
                "accessScope": {"type": "cluster"},
            },
        ),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "cluster admin for a principal the config names only as a publisher",
        lambda rs: [
            _add(
                "aws:eks/accessEntry:AccessEntry",
                "ci",
                {
                    "clusterName": "seedance-prod",
                    "type": "STANDARD",
                    "principalArn": "arn:aws:iam::123456789012:role/video-ml-ci",
                },
            )(rs),
            _add(
                "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
                "ci-admin",
                {
                    "clusterName": "seedance-prod",
                    "principalArn": "arn:aws:iam::123456789012:role/video-ml-ci",
                    "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
                    "accessScope": {"type": "cluster"},
                },
            )(rs),
        ],
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "a tenant in system:masters",
        lambda rs: next(
            r
            for r in rs
            if r["type"] == "aws:eks/accessEntry:AccessEntry" and "video-ml-engineers" in r["inputs"]["principalArn"]
        )["inputs"]["kubernetesGroups"].append("system:masters"),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "an administrator in a team's group",
        lambda rs: (
            next(
                r
                for r in rs
                if r["type"] == "aws:eks/accessEntry:AccessEntry" and r["inputs"]["principalArn"] in ADMINS
            )["inputs"]
            .setdefault("kubernetesGroups", [])
            .append("seedance-tenant-video-ml")
        ),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "admins given cluster-wide admin",
        lambda rs: next(
            r
            for r in rs
            if r["type"] == "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
            and "AmazonEKSAdminPolicy" in r["inputs"]["policyArn"]
        )["inputs"].update(accessScope={"type": "cluster"}),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "the cluster also reads aws-auth, which maps another account's role to system:masters",
        lambda rs: (
            _one(rs, "aws:eks/cluster:Cluster")["inputs"]["accessConfig"].update(
                authenticationMode="API_AND_CONFIG_MAP"
            ),
            _add(
                "kubernetes:core/v1:ConfigMap",
                "aws-auth",
                {
                    "metadata": {"name": "aws-auth", "namespace": "kube-system"},
                    "data": {
                        "mapRoles": f"- rolearn: arn:aws:iam::{OTHER}:role/ops\n  username: ops\n"
                        "  groups: [system:masters]\n"
                    },
                },
            )(rs),
        ),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "the cluster's access config left to EKS's defaults (ConfigMap mode, creator admin)",
        lambda rs: _one(rs, "aws:eks/cluster:Cluster")["inputs"].pop("accessConfig"),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "access",
        "a hidden cluster-admin entry for whoever creates the cluster",
        lambda rs: _one(rs, "aws:eks/cluster:Cluster")["inputs"]["accessConfig"].update(
            bootstrapClusterCreatorAdminPermissions=True
        ),
        "aws-eks-access-restrict-admin-policies",
    ),
    (
        "publisher deny",
        "removed",
        lambda rs: _one(rs, *BUCKET)["inputs"].update(
            policy=json.dumps(
                {
                    "Statement": [
                        s
                        for s in json.loads(_one(rs, *BUCKET)["inputs"]["policy"])["Statement"]
                        if not s["Sid"].startswith("OnlyPublishers")
                    ]
                }
            )
        ),
        "aws-s3-bucket-require-model-publisher-deny",
    ),
    (
        "publisher deny",
        "a team's people excepted too",
        lambda rs: _one(rs, *BUCKET)["inputs"].update(
            policy=_one(rs, *BUCKET)["inputs"]["policy"].replace(
                '"arn:aws:iam::123456789012:role/seedance-prod-triton-video-publisher"]',
                '"arn:aws:iam::123456789012:role/seedance-prod-triton-video-publisher", '
                '"arn:aws:iam::123456789012:role/video-ml-engineers"]',
            )
        ),
        "aws-s3-bucket-require-model-publisher-deny",
    ),
    (
        "publisher deny",
        "PutObject only",
        lambda rs: _one(rs, *BUCKET)["inputs"].update(
            policy=_one(rs, *BUCKET)["inputs"]["policy"].replace('"s3:DeleteObject", ', "")
        ),
        "aws-s3-bucket-require-model-publisher-deny",
    ),
    # Pods, by the Pod Security Standards
    ("pods", "SYS_ADMIN added", _context(capabilities={"drop": ["ALL"], "add": ["SYS_ADMIN"]}), PSS),
    ("pods", "hostPath /var", _host_path("/var"), PSS),
    ("pods", "hostPath /opt/cni/bin", _host_path("/opt/cni/bin"), PSS),
    ("pods", "hostPath /./etc", _host_path("/./etc"), PSS),
    (
        "pods",
        "hostPort",
        _triton(
            lambda spec: spec["containers"][0].setdefault("ports", []).append({"containerPort": 9999, "hostPort": 9999})
        ),
        PSS,
    ),
    (
        "pods",
        "seccomp Unconfined",
        _triton(lambda spec: spec["securityContext"].update(seccompProfile={"type": "Unconfined"})),
        PSS,
    ),
    ("pods", "procMount Unmasked", _context(procMount="Unmasked"), PSS),
    ("pods", "runAsNonRoot false in the container", _context(runAsNonRoot=False), PSS),
    ("pods", "privilege escalation allowed", _context(allowPrivilegeEscalation=True), PSS),
    (
        "pods",
        "a privileged ReplicationController",
        _add(
            "kubernetes:core/v1:ReplicationController",
            "miner",
            {
                "metadata": {"name": "miner", "namespace": "video-api"},
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "c", "image": "x:1", "securityContext": {"privileged": True}}]}
                    }
                },
            },
        ),
        PSS,
    ),
    (
        "pods",
        "a Helm value that turns on a host DaemonSet",
        _values(lambda values: values["prometheus-node-exporter"].update(enabled=True)),
        PSS,
    ),
    # NetworkPolicy, by set reasoning
    ("network", "every namespace and pod", _ingress([{"namespaceSelector": {}, "podSelector": {}}]), NETPOL),
    (
        "network",
        "Exists on the name label",
        _ingress(
            [
                {
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}]
                    }
                }
            ]
        ),
        NETPOL,
    ),
    (
        "network",
        "0.0.0.0/0 with a token except",
        _ingress([{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.169.254/32"]}}]),
        NETPOL,
    ),
    (
        "network",
        "two halves of the internet",
        _ingress([{"ipBlock": {"cidr": "0.0.0.0/1"}}, {"ipBlock": {"cidr": "128.0.0.0/1"}}]),
        NETPOL,
    ),
    (
        "network",
        "every TCP port from anyone",
        _ingress([{"ipBlock": {"cidr": "0.0.0.0/0"}}], [{"protocol": "TCP"}]),
        NETPOL,
    ),
    ("default deny", "without Egress", _deny(lambda spec: spec.update(policyTypes=["Ingress"])), DENY),
    (
        "default deny",
        "selecting no pod",
        _deny(lambda spec: spec.update(podSelector={"matchLabels": {"none": "x"}})),
        DENY,
    ),
    (
        "default deny",
        "removed",
        _policy(
            "triton-video",
            lambda ps: [p["inputs"]["spec"].update(podSelector={"matchLabels": {"app": "x"}}) for p in ps],
        ),
        DENY,
    ),
    # RBAC escalation
    (
        "rbac",
        "an aggregation rule",
        lambda rs: _one(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "seedance-prometheus")[
            "inputs"
        ].update(aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}),
        ROLE,
    ),
    ("rbac", "*/exec", _tenant_role([{"apiGroups": [""], "resources": ["*/exec"], "verbs": ["create"]}]), ROLE),
    ("rbac", "*/token", _tenant_role([{"apiGroups": ["*"], "resources": ["*/token"], "verbs": ["create"]}]), ROLE),
    (
        "rbac",
        "impersonate by *",
        _tenant_role([{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["*"]}]),
        ROLE,
    ),
    ("rbac", "admin cluster-wide", _binding("ClusterRoleBinding", "admin"), BINDING),
    (
        "rbac",
        "the aggregation controller's role",
        _binding("RoleBinding", "system:controller:clusterrole-aggregation-controller"),
        BINDING,
    ),
    ("rbac", "the tenant role cluster-wide", _binding("ClusterRoleBinding", "seedance-tenant"), BINDING),
    # The platform's own invariants
    (
        "platform",
        "Triton's namespace lowered to privileged",
        lambda rs: _one(rs, "kubernetes:core/v1:Namespace", "triton-video")["inputs"]["metadata"]["labels"].update(
            {"pod-security.kubernetes.io/enforce": "privileged"}
        ),
        "kubernetes-namespace-require-pod-security-level",
    ),
    (
        "platform",
        "a namespace the stack config does not name, without a label",
        _add("kubernetes:core/v1:Namespace", "extra", {"metadata": {"name": "extra"}}),
        "kubernetes-namespace-require-pod-security-level",
    ),
    (
        "platform",
        "Triton's namespace label removed",
        lambda rs: _one(rs, "kubernetes:core/v1:Namespace", "triton-video")["inputs"]["metadata"]["labels"].pop(
            "pod-security.kubernetes.io/enforce"
        ),
        "kubernetes-namespace-require-pod-security-level",
    ),
    (
        "platform",
        "node identity binding set to Audit",
        lambda rs: _one(
            rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding", "pool-identity"
        )["inputs"]["spec"].update(validationActions=["Audit"]),
        "kubernetes-admission-binding-require-deny",
    ),
    (
        "platform",
        "the volume guard removed",
        lambda rs: rs.remove(
            next(
                r
                for r in rs
                if r["type"] == "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
                and r["inputs"]["metadata"]["name"] == "seedance-persistent-volumes"
            )
        ),
        "kubernetes-admission-binding-require-deny",
    ),
    (
        "platform",
        "a guard failing open",
        lambda rs: _one(rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", "volume-guard")[
            "inputs"
        ]["spec"].update(failurePolicy="Ignore"),
        "kubernetes-admission-binding-require-deny",
    ),
    (
        "platform",
        "model control explicit",
        _triton(lambda spec: spec["containers"][0]["args"].append("--model-control-mode=explicit")),
        "kubernetes-deployment-require-triton-model-control",
    ),
    (
        "platform",
        "model control explicit as two words",
        _triton(lambda spec: spec["containers"][0]["args"].extend(["--model-control-mode", "explicit"])),
        "kubernetes-deployment-require-triton-model-control",
    ),
    ("platform", "GPU group in the public subnets", _public_groups, "aws-autoscaling-group-require-private-subnets"),
    (
        "platform",
        "a private route table sending ::/0 to the internet gateway",
        _ipv6_to_internet,
        "aws-autoscaling-group-require-private-subnets",
    ),
    (
        "platform",
        "an instance with an unencrypted data volume",
        _add(
            "aws:ec2/instance:Instance",
            "scratch",
            {
                "instanceType": "t3.large",
                "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
                "rootBlockDevice": {"encrypted": True},
                "ebsBlockDevices": [{"deviceName": "/dev/sdf", "encrypted": False}],
            },
        ),
        "aws-ec2-launch-template-require-encrypted-volumes",
    ),
    (
        "platform",
        "API open to the internet",
        lambda rs: _one(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "")["inputs"].update(
            cidrIpv4="0.0.0.0/0"
        ),
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    (
        "platform",
        "API open to the IPv6 internet",
        lambda rs: _one(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "")["inputs"].update(
            cidrIpv6="::/0"
        ),
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    (
        "platform",
        "API open through a managed prefix list that holds 0.0.0.0/0",
        lambda rs: (
            _add(
                "aws:ec2/managedPrefixList:ManagedPrefixList",
                "anywhere",
                {"name": "anywhere", "addressFamily": "IPv4", "maxEntries": 1, "entries": [{"cidr": "0.0.0.0/0"}]},
            )(rs),
            rs[-1].update(id="pl-0anywhere"),
            _one(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "")["inputs"].update(
                prefixListId="pl-0anywhere"
            ),
            _one(rs, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "")["inputs"].pop("cidrIpv4", None),
        ),
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    (
        "platform",
        "unencrypted launch-template volumes",
        _lt(lambda i: i["blockDeviceMappings"][0]["ebs"].update(encrypted="false")),
        "aws-ec2-launch-template-require-encrypted-volumes",
    ),
    (
        "platform",
        "node group without a launch template",
        lambda rs: _one(rs, "aws:eks/nodeGroup:NodeGroup")["inputs"].pop("launchTemplate"),
        "aws-eks-node-group-require-launch-template",
    ),
    (
        "platform",
        "an internal annotation EKS's controller does not read",
        _service({f"{LB}scheme": "internal"}),
        "kubernetes-service-require-internal-load-balancer",
    ),
    (
        "platform",
        "a load balancer internal=false",
        _service({f"{LB}internal": "false"}),
        "kubernetes-service-require-internal-load-balancer",
    ),
    (
        "platform",
        "the controller's class, internet-facing",
        _service({f"{LB}scheme": "internet-facing"}, loadBalancerClass="service.k8s.aws/nlb"),
        "kubernetes-service-require-internal-load-balancer",
    ),
    # The controller's own type reads the scheme first: internal=true under it does not make it internal.
    (
        "platform",
        "the controller's nlb-ip type, internet-facing",
        _service({f"{LB}type": "nlb-ip", f"{LB}scheme": "internet-facing", f"{LB}internal": "true"}),
        "kubernetes-service-require-internal-load-balancer",
    ),
]


ADMIN_RULE = "aws-iam-role-disallow-admin-policies"
PATCH = "kubernetes-patch-restrict-to-audit-labels"
CHART = "kubernetes-helm-release-require-chart-source"
SPOT = "aws-autoscaling-group-limit-spot-share"
LAUNCHER = "aws-ec2-launch-require-stack-template"
GUARDS = "kubernetes-admission-binding-require-deny"
ENDPOINTS = "aws-vpc-nat-require-s3-kms-endpoints"
BREAKER = {"key": "seedance.io/budget-breaker", "value": "on", "propagateAtLaunch": True}


def _guardrail_and(narrower):
    """An open Allow beside a Deny of outsiders that also needs another condition (IAM ANDs them)."""
    allow = _statement(*KEY, {"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*"})
    deny = _statement(
        *KEY,
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": "*",
            "Resource": "*",
            "Condition": {"StringNotEquals": {"aws:PrincipalAccount": "123456789012"}, **narrower},
        },
    )
    return lambda rs: (allow(rs), deny(rs))


def _patch(kind, group, name, namespace, body):
    return _add(
        f"kubernetes:{group}:{kind}Patch",
        f"{name}-patch",
        {"metadata": {"name": name, **({"namespace": namespace} if namespace else {})}, **body},
    )


def _bound(kind, role, subject):
    def tamper(rs):
        _binding(kind, role)(rs)
        rs[-1]["inputs"]["subjects"] = [subject]

    return tamper


def _release(**inputs):
    return lambda rs: _one(rs, "kubernetes:helm.sh/v3:Release", "autoscaler-release")["inputs"].update(inputs)


def _online(change):
    return lambda rs: change(_one(rs, "aws:autoscaling/group:Group", "online-asg")["inputs"])


def _template_market(group):
    group.pop("mixedInstancesPolicy")
    group["launchTemplate"] = {"id": "lt-0online", "version": "$Latest"}


# A second review's attacks (stop 46): spellings of the same controls the first catalogue did not use.
REVIEW_2 = [
    (
        "iam",
        "a guardrail Deny that also needs SecureTransport false",
        _guardrail_and({"Bool": {"aws:SecureTransport": "false"}}),
        IAM,
    ),
    (
        "iam",
        "a guardrail Deny that also needs a region",
        _guardrail_and({"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}),
        IAM,
    ),
    (
        "resource types",
        "a KMS grant of the stack key to another account",
        _add(
            "aws:kms/grant:Grant",
            "partner",
            {
                "keyId": "k",
                "granteePrincipal": f"arn:aws:iam::{OTHER}:root",
                "operations": ["Decrypt", "GenerateDataKey", "CreateGrant"],
            },
        ),
        IAM,
    ),
    (
        "admin",
        "every action on every ARN (arn:*)",
        _statement(
            "aws:iam/rolePolicy:RolePolicy",
            "autoscaler-policy",
            {"Effect": "Allow", "Action": "*", "Resource": "arn:*"},
        ),
        "aws-iam-role-disallow-privilege-escalation",
    ),
    (
        "admin",
        "all of IAM on the account's IAM entities",
        _statement(
            "aws:iam/rolePolicy:RolePolicy",
            "autoscaler-policy",
            {"Effect": "Allow", "Action": "iam:*", "Resource": "arn:aws:iam::123456789012:*"},
        ),
        "aws-iam-role-disallow-privilege-escalation",
    ),
    (
        "admin",
        "role and policy actions by wildcard",
        _statement(
            "aws:iam/rolePolicy:RolePolicy",
            "autoscaler-policy",
            {"Effect": "Allow", "Action": ["iam:*Role*", "iam:*Policy*"], "Resource": "*"},
        ),
        "aws-iam-role-disallow-privilege-escalation",
    ),
    (
        "admin",
        "AdministratorAccess on a user",
        _add(
            "aws:iam/userPolicyAttachment:UserPolicyAttachment",
            "bot-admin",
            {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess", "user": "ops-bot"},
        ),
        ADMIN_RULE,
    ),
    (
        "pods",
        "Triton as UID 0 in a user namespace of its own (hostUsers: false)",
        _triton(
            lambda spec: (
                spec.update(hostUsers=False),
                spec.setdefault("securityContext", {}).update(runAsUser=0, runAsNonRoot=False),
                [c["securityContext"].update(runAsUser=0, runAsNonRoot=False) for c in spec["containers"]],
            )
        ),
        "kubernetes-pod-enforce-pod-security-standards",
    ),
    (
        "pods",
        "a privileged hostPID DaemonSet mounting / in the device plugin's namespace",
        _add(
            "kubernetes:apps/v1:DaemonSet",
            "node-debug",
            {
                "metadata": {"name": "node-debug", "namespace": "nvidia-device-plugin"},
                "spec": {
                    "selector": {"matchLabels": {"app": "node-debug"}},
                    "template": {
                        "metadata": {"labels": {"app": "node-debug"}},
                        "spec": {
                            "hostPID": True,
                            "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
                            "containers": [
                                {
                                    "name": "shell",
                                    "image": "busybox:1.36",
                                    "securityContext": {"privileged": True},
                                    "volumeMounts": [{"name": "root", "mountPath": "/host"}],
                                }
                            ],
                        },
                    },
                },
            },
        ),
        "kubernetes-pod-enforce-pod-security-standards",
    ),
    (
        "patch",
        "a DeploymentPatch making a chart's pods privileged",
        _patch(
            "Deployment",
            "apps/v1",
            "metrics-server",
            "kube-system",
            {
                "spec": {
                    "template": {
                        "spec": {
                            "hostPID": True,
                            "containers": [{"name": "metrics-server", "securityContext": {"privileged": True}}],
                        }
                    }
                }
            },
        ),
        PATCH,
    ),
    (
        "patch",
        "a NamespacePatch lowering Triton's namespace",
        _patch(
            "Namespace",
            "core/v1",
            "triton-video",
            None,
            {"metadata": {"name": "triton-video", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}},
        ),
        PATCH,
    ),
    (
        "patch",
        "a ServicePatch opening a NodePort",
        _patch("Service", "core/v1", "triton-video", "triton-video", {"spec": {"type": "NodePort"}}),
        PATCH,
    ),
    (
        "patch",
        "a ServicePatch making an internet-facing load balancer",
        _patch(
            "Service",
            "core/v1",
            "triton-video",
            "triton-video",
            {
                "metadata": {
                    "name": "triton-video",
                    "namespace": "triton-video",
                    "annotations": {f"{LB}internal": "false"},
                },
                "spec": {"type": "LoadBalancer"},
            },
        ),
        PATCH,
    ),
    (
        "platform",
        "Triton's namespace enforcing the standard of v1.0",
        lambda rs: _one(rs, "kubernetes:core/v1:Namespace", "triton-video")["inputs"]["metadata"]["labels"].update(
            {"pod-security.kubernetes.io/enforce-version": "v1.0"}
        ),
        "kubernetes-namespace-require-pod-security-level",
    ),
    ("helm", "values from files the plan does not hold", _release(valueYamlFiles=["./values-prod.yaml"]), CHART),
    ("helm", "a post-renderer", _release(postrender="./scripts/postrender.sh"), CHART),
    (
        "helm",
        "the autoscaler's chart from another repository",
        _release(repositoryOpts={"repo": "https://charts.example-attacker.net"}),
        CHART,
    ),
    (
        "helm",
        "the autoscaler's chart from a local path, the pinned repository beside it",
        _release(chart="./vendor/cluster-autoscaler"),
        CHART,
    ),
    (
        "helm",
        "the termination handler from another registry",
        lambda rs: next(
            r
            for r in rs
            if r["type"] == "kubernetes:helm.sh/v3:Release"
            and "aws-node-termination-handler" in str(r["inputs"]["chart"])
        )["inputs"].update(chart="oci://ghcr.io/someone-else/aws-node-termination-handler"),
        CHART,
    ),
    ("helm", "both", _release(valueYamlFiles=["./values-prod.yaml"], postrender="kustomize"), CHART),
    (
        "rbac",
        "the tenant role to every service account",
        _bound(
            "RoleBinding",
            "seedance-tenant",
            {"kind": "Group", "name": "system:serviceaccounts", "apiGroup": "rbac.authorization.k8s.io"},
        ),
        BINDING,
    ),
    (
        "rbac",
        "namespaces relabelled by the tenant role",
        _tenant_role([{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]}]),
        ROLE,
    ),
    (
        "rbac",
        "the tenant role bound in kube-system",
        lambda rs: (
            _bound(
                "RoleBinding",
                "seedance-tenant",
                {"kind": "Group", "name": "seedance-tenant-video-ml", "apiGroup": "rbac.authorization.k8s.io"},
            )(rs),
            rs[-1]["inputs"]["metadata"].update(namespace="kube-system"),
        ),
        BINDING,
    ),
    (
        "rbac",
        "a controller's own role to a team",
        _binding("ClusterRoleBinding", "system:controller:daemon-set-controller"),
        BINDING,
    ),
    (
        "rbac",
        "a role to the anonymous user",
        _bound(
            "RoleBinding", "view", {"kind": "User", "name": "system:anonymous", "apiGroup": "rbac.authorization.k8s.io"}
        ),
        BINDING,
    ),
    (
        "network",
        "the internet on ports 2-65535",
        _ingress([{"ipBlock": {"cidr": "0.0.0.0/0"}}], [{"protocol": "TCP", "port": 2, "endPort": 65535}]),
        NETPOL,
    ),
    (
        "platform",
        "a private route table sending 2000::/3 to the internet gateway",
        lambda rs: (
            _one(rs, "aws:ec2/routeTable:RouteTable", "private-rt")["inputs"]
            .setdefault("routes", [])
            .append(
                {"ipv6CidrBlock": "2000::/3", "gatewayId": _one(rs, "aws:ec2/internetGateway:InternetGateway")["id"]}
            )
        ),
        "aws-autoscaling-group-require-private-subnets",
    ),
    (
        "platform",
        "a private route table sending half the internet to the internet gateway",
        lambda rs: (
            _one(rs, "aws:ec2/routeTable:RouteTable", "private-rt")["inputs"]
            .setdefault("routes", [])
            .append({"cidrBlock": "0.0.0.0/1", "gatewayId": _one(rs, "aws:ec2/internetGateway:InternetGateway")["id"]})
        ),
        "aws-autoscaling-group-require-private-subnets",
    ),
    (
        "nodes",
        "a node group on a template from elsewhere",
        lambda rs: _one(rs, "aws:eks/nodeGroup:NodeGroup")["inputs"].update(
            launchTemplate={"id": "lt-0legacyimdsv1", "version": "3"}
        ),
        LAUNCHER,
    ),
    (
        "nodes",
        "a GPU type overridden onto a template from elsewhere",
        _online(
            lambda g: g["mixedInstancesPolicy"]["launchTemplate"]["overrides"].append(
                {
                    "instanceType": "p5.48xlarge",
                    "launchTemplateSpecification": {"launchTemplateName": "someone-elses", "version": "$Latest"},
                }
            )
        ),
        LAUNCHER,
    ),
    (
        "nodes",
        "a spot fleet of launch specifications",
        _add(
            "aws:ec2/spotFleetRequest:SpotFleetRequest",
            "burst",
            {
                "iamFleetRole": "arn:aws:iam::123456789012:role/fleet",
                "targetCapacity": 8,
                "launchSpecifications": [
                    {"ami": "ami-0p5", "instanceType": "p5.48xlarge", "associatePublicIpAddress": True}
                ],
            },
        ),
        LAUNCHER,
    ),
    (
        "guards",
        "the volume guard's binding narrowed to objects nobody labels",
        lambda rs: _one(
            rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding", "volume-guard"
        )["inputs"]["spec"].update(matchResources={"objectSelector": {"matchLabels": {"seedance.io/guarded": "yes"}}}),
        GUARDS,
    ),
    (
        "guards",
        "the team's pod guard given a condition that never holds",
        _guard_spec("tenant-video-ml-pods", matchConditions=[{"name": "never", "expression": "false"}]),
        GUARDS,
    ),
    (
        "guards",
        "the queued jobs' guard made to need a parameter nobody provides",
        _guard_spec("queued-jobs-validatingadmissionpolicy", paramKind={"apiVersion": "v1", "kind": "ConfigMap"}),
        GUARDS,
    ),
    (
        "guards",
        "the queued pods' guard bound with a parameter whose absence allows",
        lambda rs: _one(
            rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding", "queued-pods"
        )["inputs"]["spec"].update(paramRef={"name": "absent", "parameterNotFoundAction": "Allow"}),
        GUARDS,
    ),
    (
        "guards",
        "the queued pods' guard given a condition that never holds",
        _guard_spec("queued-pods", matchConditions=[{"name": "never", "expression": "false"}]),
        GUARDS,
    ),
    (
        "guards",
        "the volume guard watching updates only",
        lambda rs: _one(rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", "volume-guard")[
            "inputs"
        ]["spec"]["matchConstraints"]["resourceRules"][0].update(operations=["UPDATE"]),
        GUARDS,
    ),
    (
        "guards",
        "a mutating webhook sending every pod outside, failing open",
        _add(
            "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
            "inject",
            {
                "metadata": {"name": "inject"},
                "webhooks": [
                    {
                        "name": "inject.example.io",
                        "failurePolicy": "Ignore",
                        "sideEffects": "None",
                        "admissionReviewVersions": ["v1"],
                        "clientConfig": {"url": "https://inject.example-attacker.net/mutate"},
                        "rules": [
                            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                        ],
                    }
                ],
            },
        ),
        "kubernetes-webhook-require-in-cluster-service",
    ),
    (
        "network",
        "the VPC's default group admitting the internet",
        lambda rs: _one(rs, "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")["inputs"].update(
            ingress=[{"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]}]
        ),
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    (
        "network",
        "an internet-facing load balancer of the stack's own",
        _add("aws:lb/loadBalancer:LoadBalancer", "triton-public", {"loadBalancerType": "network", "internal": False}),
        "aws-lb-load-balancer-require-internal",
    ),
    (
        "network",
        "a classic load balancer that says nothing",
        _add(
            "aws:elb/loadBalancer:LoadBalancer",
            "legacy",
            {"listeners": [{"instancePort": 8000, "instanceProtocol": "tcp", "lbPort": 80, "lbProtocol": "tcp"}]},
        ),
        "aws-lb-load-balancer-require-internal",
    ),
    (
        "encryption",
        "a volume under the AWS-managed key's alias",
        lambda rs: _one(rs, "aws:ebs/volume:Volume", "checkpoints-0")["inputs"].update(
            kmsKeyId="arn:aws:kms:us-east-1:123456789012:alias/aws/ebs"
        ),
        "aws-ebs-volume-require-customer-key",
    ),
    (
        "encryption",
        "a launch template that no longer names the root device",
        _lt(
            lambda i: [
                m.update(deviceName="/dev/xvdb") for m in i["blockDeviceMappings"] if m["deviceName"] == "/dev/xvda"
            ]
        ),
        "aws-ec2-launch-template-require-encrypted-volumes",
    ),
    (
        "encryption",
        "launch-template volumes under alias/aws/ebs",
        _lt(lambda i: [m["ebs"].update(kmsKeyId="alias/aws/ebs") for m in i["blockDeviceMappings"]]),
        "aws-ec2-launch-template-require-encrypted-volumes",
    ),
    (
        "encryption",
        "launch-template volumes under another account's key",
        _lt(
            lambda i: [
                m["ebs"].update(kmsKeyId=f"arn:aws:kms:us-east-1:{OTHER}:key/0a1b2c3d-0000-4000-8000-000000000002")
                for m in i["blockDeviceMappings"]
            ]
        ),
        "aws-kms-key-require-home-account",
    ),
    (
        "encryption",
        "secrets under another account's key",
        lambda rs: _one(rs, "aws:eks/cluster:Cluster")["inputs"]["encryptionConfig"]["provider"].update(
            keyArn=f"arn:aws:kms:us-east-1:{OTHER}:alias/shared"
        ),
        "aws-kms-key-require-home-account",
    ),
    (
        "encryption",
        "secrets under the AWS-managed key",
        lambda rs: _one(rs, "aws:eks/cluster:Cluster")["inputs"]["encryptionConfig"]["provider"].update(
            keyArn="arn:aws:kms:us-east-1:123456789012:alias/aws/eks"
        ),
        "aws-eks-cluster-require-secrets-encryption",
    ),
    (
        "platform",
        "model control explicit by an abbreviation getopt_long takes",
        _triton(lambda spec: spec["containers"][0]["args"].append("--model-control=explicit")),
        "kubernetes-deployment-require-triton-model-control",
    ),
    (
        "encryption",
        "a StorageClass whose volumes the driver makes plain",
        lambda rs: _one(rs, "kubernetes:storage.k8s.io/v1:StorageClass", "metrics-history")["inputs"][
            "parameters"
        ].update(encrypted="false"),
        "aws-ebs-volume-require-customer-key",
    ),
    (
        "encryption",
        'a StorageClass whose `encrypted` is "True" (the driver encrypts for "true" only)',
        lambda rs: _one(rs, "kubernetes:storage.k8s.io/v1:StorageClass", "metrics-history")["inputs"][
            "parameters"
        ].update(encrypted="True"),
        "aws-ebs-volume-require-customer-key",
    ),
    (
        "encryption",
        "a second key of another account in a StorageClass, its name in other letters",
        lambda rs: _one(rs, "kubernetes:storage.k8s.io/v1:StorageClass", "metrics-history")["inputs"][
            "parameters"
        ].update(KMSKeyId="arn:aws:kms:us-east-1:999988887777:key/1234abcd-12ab-34cd-56ef-1234567890ab"),
        "aws-kms-key-require-home-account",
    ),
    (
        "cost",
        "a gp2 StorageClass, its type's name in other letters",
        lambda rs: _one(rs, "kubernetes:storage.k8s.io/v1:StorageClass", "metrics-history")["inputs"][
            "parameters"
        ].update(Type="gp2"),
        "aws-ebs-volume-disallow-gp2-io1",
    ),
    (
        "encryption",
        "the model bucket under SSE-S3",
        lambda rs: _one(
            rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "models"
        )["inputs"].update(rules=[{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]),
        "aws-s3-bucket-require-customer-key",
    ),
    (
        "cost",
        "GPU instances and volumes launched untagged",
        _lt(lambda i: i.pop("tagSpecifications")),
        "aws-resource-tags-require-cost-tags",
    ),
    (
        "endpoints",
        "the S3 gateway endpoint on no route table",
        lambda rs: _one(rs, "aws:ec2/vpcEndpoint:VpcEndpoint", "s3-gateway")["inputs"].update(routeTableIds=[]),
        ENDPOINTS,
    ),
    (
        "endpoints",
        "the KMS endpoint in another VPC",
        lambda rs: _one(rs, "aws:ec2/vpcEndpoint:VpcEndpoint", "endpoints-kms")["inputs"].update(
            vpcId="vpc-0elsewhere"
        ),
        ENDPOINTS,
    ),
    (
        "endpoints",
        "the KMS endpoint in no subnet",
        lambda rs: _one(rs, "aws:ec2/vpcEndpoint:VpcEndpoint", "endpoints-kms")["inputs"].update(subnetIds=[]),
        ENDPOINTS,
    ),
    ("cost", "online group with its market in the launch template", _online(_template_market), SPOT),
    (
        "cost",
        "a forged capacity-block tag on an online group without its mix",
        _online(
            lambda g: (
                _template_market(g),
                g["tags"].append(
                    {"key": "seedance.io/capacity-block", "value": "cr-0ffffffffffffffff", "propagateAtLaunch": True}
                ),
            )
        ),
        SPOT,
    ),
    (
        "cost",
        "the online group relabelled batch, 90 % spot",
        _online(
            lambda g: (
                [t.update(value="batch") for t in g["tags"] if t["key"].endswith("seedance.io/workload-class")],
                g["mixedInstancesPolicy"]["instancesDistribution"].update(
                    onDemandBaseCapacity=1, onDemandPercentageAboveBaseCapacity=10
                ),
            )
        ),
        SPOT,
    ),
    (
        "cost",
        "the budget breaker's tag on prod's online group",
        _online(
            lambda g: (
                g["tags"].append(BREAKER),
                g["mixedInstancesPolicy"]["instancesDistribution"].update(
                    onDemandBaseCapacity=0, onDemandPercentageAboveBaseCapacity=0
                ),
            )
        ),
        SPOT,
    ),
    (
        "cost",
        "the breaker's tag lowering the online base",
        _online(
            lambda g: (
                g["tags"].append(BREAKER),
                g["mixedInstancesPolicy"]["instancesDistribution"].update(onDemandBaseCapacity=0),
            )
        ),
        "aws-autoscaling-group-require-on-demand-baseline",
    ),
]
ATTACKS += REVIEW_2

# A third review's attacks (stop 48): capacity launched or billed where no rule looked, and grants the readers
# did not know.
RESTRICT = "aws-ec2-launch-restrict-launchers"
BUDGET = "budget-monthly-cost-limit"
ROTATION = "aws-kms-key-require-rotation"
ACCESS = "aws-eks-access-restrict-admin-policies"
ONLINE_TEMPLATE = "lt-e887e258c57bd6501"
OPEN_KEY_POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:*", "Resource": "*"}],
    }
)


def _fleet(capacity_type, count):
    return _add(
        "aws:ec2/fleet:Fleet",
        f"{capacity_type}-fleet",
        {
            "type": "maintain",
            "launchTemplateConfigs": [
                {
                    "launchTemplateSpecification": {"launchTemplateId": ONLINE_TEMPLATE, "version": "1"},
                    "overrides": [{"instanceType": "p5.48xlarge"}],
                }
            ],
            "targetCapacitySpecification": {"defaultTargetCapacityType": capacity_type, "totalTargetCapacity": count},
        },
    )


def _system_nodes_from_template(rs):
    _one(rs, "aws:eks/nodeGroup:NodeGroup", "system")["inputs"].pop("instanceTypes")
    _one(rs, "aws:ec2/launchTemplate:LaunchTemplate", "system-nodes")["inputs"]["instanceType"] = "p5.48xlarge"


def _pets_from_template(rs):
    _one(rs, "aws:ec2/launchTemplate:LaunchTemplate", "online-template")["inputs"]["instanceType"] = "p5.48xlarge"
    for n in range(2):
        _add(
            "aws:ec2/instance:Instance",
            f"pet-{n}",
            {"launchTemplate": {"id": ONLINE_TEMPLATE, "version": "1"}, "metadataOptions": {"httpTokens": "required"}},
        )(rs)


def _batch_at_its_minimum(group):
    group.pop("desiredCapacity")
    group.update(minSize=40, maxSize=40)


def _admins_in(*namespaces):
    def tamper(rs):
        association = next(
            r
            for r in rs
            if r["type"] == "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
            and r["inputs"]["policyArn"].endswith("/AmazonEKSAdminPolicy")
        )
        association["inputs"]["accessScope"] = {"type": "namespace", "namespaces": list(namespaces)}

    return tamper


PUBLIC_IP = "aws-ec2-instance-launch-disallow-public-ip"


def _guard_twice(name, **spec):
    def tamper(rs):
        guard = copy.deepcopy(_one(rs, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", name))
        guard["urn"] += "-again"
        guard["inputs"]["spec"].update(spec)
        rs.append(guard)

    return tamper


def _acl_to_another_account(rs):
    bucket = "seedance-prod-models-123456789012"
    _add(
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
        "models-ownership",
        {"bucket": bucket, "rule": {"objectOwnership": "ObjectWriter"}},
    )(rs)
    _add(
        "aws:s3/bucketAclV2:BucketAclV2",
        "models-acl",
        {
            "bucket": bucket,
            "accessControlPolicy": {
                "owner": {"id": "1" * 64},
                "grants": [{"permission": "READ", "grantee": {"type": "CanonicalUser", "id": "9" * 64}}],
            },
        },
    )(rs)


def _schedule_batch(size):
    def tamper(rs):
        group = _one(rs, "aws:autoscaling/group:Group", "batch-asg")
        _add(
            "aws:autoscaling/schedule:Schedule",
            "batch-pin",
            {
                "autoscalingGroupName": group["inputs"].get("name") or group["id"],
                "scheduledActionName": "pin",
                "recurrence": "0 * * * *",
                "minSize": size,
                "maxSize": size,
                "desiredCapacity": size,
            },
        )(rs)

    return tamper


def _cluster_admin_for(principal):
    def tamper(rs):
        _add(
            "aws:eks/accessEntry:AccessEntry",
            "pods-entry",
            {"clusterName": "seedance-prod", "principalArn": principal, "type": "STANDARD"},
        )(rs)
        _add(
            "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
            "pods-admin",
            {
                "clusterName": "seedance-prod",
                "principalArn": principal,
                "accessScope": {"type": "cluster"},
                "policyArn": "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
            },
        )(rs)

    return tamper


def _external_key(rs):
    _add("aws:kms/externalKey:ExternalKey", "imported", {"policy": OPEN_KEY_POLICY, "enabled": True})(rs)


REVIEW_3 = [
    ("capacity", "an EC2 Fleet of p5 on demand from the stack's own online template", _fleet("on-demand", 4), RESTRICT),
    ("capacity", "an EC2 Fleet of the online template, all spot", _fleet("spot", 40), RESTRICT),
    (
        "capacity",
        "an AWS Batch managed spot environment of p5 with no launch template",
        _add(
            "aws:batch/computeEnvironment:ComputeEnvironment",
            "train-batch",
            {
                "type": "MANAGED",
                "computeResources": {
                    "type": "SPOT",
                    "instanceTypes": ["p5.48xlarge"],
                    "minVcpus": 768,
                    "maxVcpus": 1536,
                },
            },
        ),
        RESTRICT,
    ),
    (
        "capacity",
        "a group launching from a launch configuration by name",
        _add(
            "aws:autoscaling/group:Group",
            "ops",
            {"launchConfiguration": "legacy-ops-lc-imdsv1", "minSize": 1, "maxSize": 1},
        ),
        RESTRICT,
    ),
    (
        "cost",
        "a group with no desired capacity, at a minimum of 40 (Auto Scaling starts it there)",
        lambda rs: _batch_at_its_minimum(_one(rs, "aws:autoscaling/group:Group", "batch-asg")["inputs"]),
        BUDGET,
    ),
    (
        "cost",
        "an On-Demand Capacity Reservation of 8 p5 (billed used or not)",
        _add(
            "aws:ec2/capacityReservation:CapacityReservation",
            "p5-hold",
            {
                "instanceType": "p5.48xlarge",
                "instanceCount": 8,
                "endDateType": "unlimited",
                "tags": {"team": "ml-platform", "env": "prod", "cost-center": "cc-ml-prod-4430"},
            },
        ),
        BUDGET,
    ),
    ("cost", "the system node group's type from its template (p5), none named", _system_nodes_from_template, BUDGET),
    ("cost", "instances of p5 from the online template, their type not named", _pets_from_template, BUDGET),
    ("cost", "a scheduled action that sets the batch group to 40 every hour", _schedule_batch(40), BUDGET),
    (
        "cost",
        "the online group's types chosen by attributes",
        _online(
            lambda g: g["mixedInstancesPolicy"]["launchTemplate"].update(
                overrides=[{"instanceRequirements": {"acceleratorCount": {"min": 8}, "vcpuCount": {"min": 192}}}]
            )
        ),
        BUDGET,
    ),
    (
        "cost",
        "the serving group put in the EFA pool's placement group (one zone, one rack)",
        _online(lambda g: g.update(placementGroup="seedance-prod-train")),
        "aws-autoscaling-group-restrict-placement-group",
    ),
    (
        "platform",
        "Kueue's chart named by a local path beside the pinned repository",
        lambda rs: _one(rs, "kubernetes:helm.sh/v3:Release", "queues-kueue")["inputs"].update(
            chart="./kueue", repositoryOpts={"repo": "oci://registry.k8s.io/kueue/charts"}
        ),
        "kubernetes-kueue-queue-restrict-to-decision",
    ),
    (
        "admin",
        "AdministratorAccess-Amplify on a node role",
        _add(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "amplify",
            {
                "role": "seedance-prod-online-node-role",
                "policyArn": "arn:aws:iam::aws:policy/AdministratorAccess-Amplify",
            },
        ),
        ADMIN_RULE,
    ),
    (
        "rbac",
        "the built-in system:kubelet-api-admin bound to a team",
        _bound("ClusterRoleBinding", "system:kubelet-api-admin", {"kind": "Group", "name": "seedance-tenant-video-ml"}),
        BINDING,
    ),
    (
        "rbac",
        "deletecollection of the admission policy bindings",
        _add(
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
            "guard-sweeper",
            {
                "metadata": {"name": "guard-sweeper"},
                "rules": [
                    {
                        "apiGroups": ["admissionregistration.k8s.io"],
                        "resources": ["validatingadmissionpolicybindings"],
                        "verbs": ["deletecollection"],
                    }
                ],
            },
        ),
        ROLE,
    ),
    ("access", "the administrators' admin policy in every namespace by a wildcard", _admins_in("*"), ACCESS),
    ("access", "the administrators' admin policy in kube-system", _admins_in("video-api", "kube-system"), ACCESS),
    (
        "access",
        "Triton's pod role given cluster-admin (a principal the config names nowhere)",
        _cluster_admin_for("arn:aws:iam::123456789012:role/seedance-prod-triton-video-models"),
        ACCESS,
    ),
    (
        "access",
        "a team's people given a node's access entry (EC2_LINUX: system:nodes)",
        lambda rs: next(
            r
            for r in rs
            if r["type"] == "aws:eks/accessEntry:AccessEntry" and "engineers" in r["inputs"]["principalArn"]
        )["inputs"].update(type="EC2_LINUX", kubernetesGroups=[]),
        ACCESS,
    ),
    (
        "resource types",
        "a replica of the stack key with a key policy open to anyone",
        _add(
            "aws:kms/replicaKey:ReplicaKey",
            "replica",
            {"primaryKeyArn": "arn:aws:kms:us-east-1:123456789012:key/mrk-1", "policy": OPEN_KEY_POLICY},
        ),
        IAM,
    ),
    ("resource types", "a key of imported material with a key policy open to anyone", _external_key, IAM),
    ("encryption", "a key of imported material (it cannot rotate)", _external_key, ROTATION),
    (
        "encryption",
        "model objects written under SSE-S3, which overrides the bucket's default",
        _add(
            "aws:s3/bucketObjectv2:BucketObjectv2",
            "model",
            {
                "bucket": "seedance-prod-models-123456789012",
                "key": "video/1/model.onnx",
                "serverSideEncryption": "AES256",
            },
        ),
        "aws-s3-bucket-require-customer-key",
    ),
    (
        "guards",
        "the volume guard's validations always true",
        _guard_spec("volume-guard", validations=[{"expression": "true", "message": "ok"}]),
        GUARDS,
    ),
    (
        "guards",
        "the tenant Service guard's validation admits every type",
        _guard_spec("tenant-services", validations=[{"expression": "has(object.spec)", "message": "ok"}]),
        GUARDS,
    ),
    (
        "guards",
        "a second declaration of the volume guard that admits everything",
        _guard_twice("volume-guard", validations=[{"expression": "true", "message": "ok"}]),
        GUARDS,
    ),
    (
        "public ip",
        "an Elastic IP on an instance",
        _add("aws:ec2/eip:Eip", "pet-ip", {"domain": "vpc", "instance": "i-0pet0"}),
        PUBLIC_IP,
    ),
    (
        "public ip",
        "an Elastic IP association with a node's network interface",
        _add(
            "aws:ec2/eipAssociation:EipAssociation",
            "pet-association",
            {"allocationId": "eipalloc-0pet", "networkInterfaceId": "eni-0pet"},
        ),
        PUBLIC_IP,
    ),
    (
        "public ip",
        "a private subnet that gives every instance a public address",
        lambda rs: next(r for r in rs if r["type"] == "aws:ec2/subnet:Subnet" and "private" in r["name"])[
            "inputs"
        ].update(mapPublicIpOnLaunch=True),
        "aws-autoscaling-group-require-private-subnets",
    ),
    (
        "iam",
        "the model bucket's ACLs turned back on and granted to another account",
        _acl_to_another_account,
        "aws-s3-bucket-disallow-public-access",
    ),
    (
        "cost",
        "a VolumeAttributesClass that modifies a claim's volume to gp2",
        _add(
            "kubernetes:storage.k8s.io/v1:VolumeAttributesClass",
            "cheap",
            {"metadata": {"name": "cheap"}, "driverName": "ebs.csi.aws.com", "parameters": {"type": "gp2"}},
        ),
        "aws-ebs-volume-disallow-gp2-io1",
    ),
    (
        "cost",
        "a capacity reservation with no tags",
        _add(
            "aws:ec2/capacityReservation:CapacityReservation",
            "hold",
            {"instanceType": "g6.xlarge", "instanceCount": 1, "endDateType": "unlimited"},
        ),
        "aws-resource-tags-require-cost-tags",
    ),
]
ATTACKS += REVIEW_3

# Issue 49, item 3: identities by what they can do and become, whatever resource grants it.
ESCALATION = "aws-iam-role-disallow-privilege-escalation"
ENTRY = "aws-iam-role-restrict-platform-role-entry"
EXTENSION = "kubernetes-api-extension-require-pinned-chart"
KNOWN_DOCUMENT = "aws-iam-policy-require-known-document"
HOME = "123456789012"


def _grant(role_part, *statements):
    """An inline policy for a role of the plan (found by its logical name)."""

    def tamper(rs):
        role = _one(rs, "aws:iam/role:Role", role_part)
        _add(
            "aws:iam/rolePolicy:RolePolicy",
            f"{role['name']}-extra",
            {"role": role["id"], "policy": json.dumps({"Version": "2012-10-17", "Statement": list(statements)})},
        )(rs)

    return tamper


def _attach(role_part, arn):
    def tamper(rs):
        role = _one(rs, "aws:iam/role:Role", role_part)
        _add("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "extra", {"role": role["id"], "policyArn": arn})(rs)

    return tamper


def _role_trust(role_part, change):
    def tamper(rs):
        role = _one(rs, "aws:iam/role:Role", role_part)
        trust = json.loads(role["inputs"]["assumeRolePolicy"])
        change(trust["Statement"])
        role["inputs"]["assumeRolePolicy"] = json.dumps(trust)

    return tamper


def _allow(action, resource="*", **more):
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


TRITON_SUB = f"{ISSUER}:sub"
IDENTITY = [
    # Escalation: Cloudsplaining's methods and the platform's own, however the actions are spelled.
    (
        "escalation",
        "PassRole of any role with RunInstances",
        _grant("autoscaler", _allow(["iam:PassRole", "ec2:RunInstances"])),
        ESCALATION,
    ),
    (
        "escalation",
        "a new policy version of one named policy",
        _grant("triton-video-role", _allow("iam:CreatePolicyVersion", f"arn:aws:iam::{HOME}:policy/x")),
        ESCALATION,
    ),
    (
        "escalation",
        "the breaker's code by a wildcard action",
        _grant(
            "interruptions", _allow("lambda:Update*", f"arn:aws:lambda:us-east-1:{HOME}:function:seedance-prod-breaker")
        ),
        ESCALATION,
    ),
    (
        "escalation",
        "run-command on nodes by NotAction",
        _grant(
            "alertmanager",
            {"Effect": "Allow", "NotAction": ["iam:*", "s3:*"], "Resource": f"arn:aws:ec2:us-east-1:{HOME}:instance/*"},
        ),
        ESCALATION,
    ),
    (
        "escalation",
        "an AWS-managed policy that holds run-command",
        _attach("alertmanager", "arn:aws:iam::aws:policy/AmazonSSMFullAccess"),
        ESCALATION,
    ),
    (
        "escalation",
        "cluster-admin by an access policy association",
        _grant("autoscaler", _allow("EKS:associateAccessPolicy")),
        ESCALATION,
    ),
    # Exfiltration: reads of data whatever its name.
    (
        "exfiltration",
        "every object of every bucket",
        _grant("triton-video-role", _allow("s3:Get*", "arn:aws:s3:::*/*")),
        ESCALATION,
    ),
    (
        "exfiltration",
        "every secret of the account",
        _grant("autoscaler", _allow("secretsmanager:GetSecretValue", f"arn:aws:secretsmanager:*:{HOME}:secret:*")),
        ESCALATION,
    ),
    (
        "exfiltration",
        "parameters by NotResource",
        _grant(
            "alertmanager",
            {"Effect": "Allow", "Action": "ssm:GetParameters", "NotResource": "arn:aws:ssm:*:*:parameter/x"},
        ),
        ESCALATION,
    ),
    # Entry: ways into a platform role the config does not name.
    (
        "entry",
        "a Pod Identity association for the publisher role",
        _add(
            "aws:eks/podIdentityAssociation:PodIdentityAssociation",
            "publisher-for-ci",
            {
                "clusterName": "seedance-prod",
                "namespace": "video-api",
                "serviceAccount": "ci",
                "roleArn": f"arn:aws:iam::{HOME}:role/seedance-prod-triton-video-publisher",
            },
        ),
        ENTRY,
    ),
    (
        "entry",
        "the publisher trusts Pod Identity",
        _role_trust(
            "triton-video-publisher",
            lambda ss: ss.append(
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "pods.eks.amazonaws.com"},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                }
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "Triton's model role for a team's service account",
        _role_trust(
            "triton-video-role",
            lambda ss: ss[0]["Condition"]["StringEquals"].update(
                {TRITON_SUB: "system:serviceaccount:video-api:trainer"}
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "the publisher role for a team's people",
        _role_trust(
            "triton-video-publisher",
            lambda ss: ss[0]["Principal"].update(
                AWS=[*ss[0]["Principal"]["AWS"], f"arn:aws:iam::{HOME}:role/video-ml-engineers"]
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "nodes assume Triton's roles by a pattern",
        _grant("online-node-role", _allow("sts:AssumeRole", f"arn:aws:iam::{HOME}:role/seedance-prod-triton-*")),
        ENTRY,
    ),
    (
        "entry",
        "the breaker passes Triton's model role",
        _grant("breaker-role", _allow("iam:PassRole", f"arn:aws:iam::{HOME}:role/seedance-prod-triton-video-models")),
        ENTRY,
    ),
    # Known documents: a policy the gate cannot read is refused in prod.
    (
        "managed",
        "a managed policy the copy does not hold",
        _attach("triton-video-role", "arn:aws:iam::aws:policy/SomethingNew"),
        KNOWN_DOCUMENT,
    ),
    (
        "managed",
        "a managed policy at another path than its own",
        _attach("triton-video-role", "arn:aws:iam::aws:policy/AmazonEBSCSIDriverPolicy"),
        KNOWN_DOCUMENT,
    ),
    (
        "managed",
        "a customer policy the plan does not make",
        _attach("triton-video-role", f"arn:aws:iam::{HOME}:policy/team-extras"),
        KNOWN_DOCUMENT,
    ),
]
ATTACKS += IDENTITY

# Issue 49, item 7: the model bucket's and the key's policies by effect.
PUBLISHER_DENY = "aws-s3-bucket-require-model-publisher-deny"
REPLICATION = "aws-s3-bucket-restrict-replication"
MODELS = "seedance-prod-models-123456789012"


def _models_policy(change):
    def tamper(rs):
        policy = _one(rs, "aws:s3/bucketPolicy:BucketPolicy", "models-tls-only")
        document = json.loads(policy["inputs"]["policy"])
        change(document["Statement"])
        policy["inputs"]["policy"] = json.dumps(document)

    return tamper


def _guard(change):
    return _models_policy(lambda ss: [change(s) for s in ss if str(s.get("Sid", "")).startswith("OnlyPublishersWrite")])


def _settings(change):
    return _models_policy(lambda ss: [change(s) for s in ss if s.get("Sid") == "OnlyAdministratorsChangeTheBucket"])


def _replicate(source, destination):
    return _add(
        "aws:s3/bucketReplicationConfig:BucketReplicationConfig",
        "replicate",
        {
            "bucket": source,
            "role": f"arn:aws:iam::{HOME}:role/replication",
            "rules": [{"id": "all", "status": "Enabled", "destination": {"bucket": destination}}],
        },
    )


def _from_the_network(type_, name, key, statement):
    def tamper(rs):
        endpoint = _one(rs, "aws:ec2/vpcEndpoint:VpcEndpoint", "s3-gateway")["id"]
        vpc = _one(rs, "aws:ec2/vpc:Vpc")["id"]
        filled = json.loads(json.dumps(statement).replace("ENDPOINT", endpoint).replace("VPC", vpc))
        _statement(type_, name, filled, key)(rs)

    return tamper


BUCKETS = [
    (
        "bucket",
        "the publisher Deny narrowed to plan files",
        _guard(lambda s: s.update(Resource=s["Resource"] + ".plan")),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "the publisher Deny in another letter case",
        _guard(lambda s: s.update(Resource=s["Resource"].replace("/seedance/", "/SEEDANCE/"))),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "replication left out of the publisher Deny",
        _guard(lambda s: s.update(Action=[a for a in s["Action"] if "Replicate" not in a])),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "a second condition on the publisher Deny",
        _guard(lambda s: s["Condition"].update(Bool={"aws:ViaAWSService": "false"})),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "a team's role excepted from the settings Deny",
        _settings(
            lambda s: s["Condition"]["ArnNotEquals"]["aws:PrincipalArn"].append(
                f"arn:aws:iam::{HOME}:role/video-ml-engineers"
            )
        ),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "the settings Deny under IfExists",
        _settings(lambda s: s.update(Condition={"ArnNotEqualsIfExists": s["Condition"]["ArnNotEquals"]})),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "the models replicated out of the stack",
        _replicate(MODELS, "arn:aws:s3:::someone-elses-archive"),
        REPLICATION,
    ),
    (
        "bucket",
        "incident records replicated into the model bucket",
        _replicate(f"seedance-prod-incidents-{HOME}", f"arn:aws:s3:::{MODELS}"),
        REPLICATION,
    ),
    (
        "bucket",
        "the models readable from the S3 endpoint alone",
        _from_the_network(
            "aws:s3/bucketPolicy:BucketPolicy",
            "models-tls-only",
            "policy",
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{MODELS}/*",
                "Condition": {"StringEquals": {"aws:SourceVpce": "ENDPOINT"}},
            },
        ),
        IAM,
    ),
    (
        "bucket",
        "the key usable from the VPC alone",
        _from_the_network(
            "aws:kms/key:Key",
            "prod-key",
            "policy",
            {
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": "kms:Decrypt",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceVpc": "VPC"}},
            },
        ),
        IAM,
    ),
]
ATTACKS += BUCKETS


def _new_role(logical, trust_statement, physical=None):
    inputs = {
        "assumeRolePolicy": json.dumps({"Statement": [trust_statement]}),
        **({"name": physical} if physical else {}),
    }
    return _add("aws:iam/role:Role", logical, inputs)


def _both(*tampers):
    def tamper(rs):
        for one in tampers:
            one(rs)

    return tamper


OUTSIDE_ROLE = f"arn:aws:iam::{HOME}:role/ops-admin"
LAMBDA_TRUST = {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
# The stop-58 review of item 3 (53 edits, 22 caught before the fixes): what got through, by principle, each
# with the review's spelling and a second one.
REVIEW_4 = [
    # Data of any name: the name must be spelled out, whatever the action reading it.
    (
        "exfiltration",
        "a parameter's history on every parameter",
        _grant("triton-video-role", _allow("ssm:GetParameterHistory")),
        ESCALATION,
    ),
    (
        "exfiltration",
        "older object versions of every bucket",
        _grant("triton-video-role", _allow("s3:GetObjectVersion", "arn:aws:s3:::*")),
        ESCALATION,
    ),
    (
        "exfiltration",
        "parameters two levels down anywhere",
        _grant("autoscaler", _allow("ssm:GetParameters", "arn:aws:ssm:*:*:parameter/*/*")),
        ESCALATION,
    ),
    (
        "exfiltration",
        "the root parameter path",
        _grant("autoscaler", _allow("ssm:GetParametersByPath", f"arn:aws:ssm:us-east-1:{HOME}:parameter/")),
        ESCALATION,
    ),
    (
        "exfiltration",
        "every bucket but those ending in a",
        _grant(
            "triton-video-role",
            _allow("s3:GetObject", [f"arn:aws:s3:::*{c}/*" for c in "bcdefghijklmnopqrstuvwxyz0123456789-."]),
        ),
        ESCALATION,
    ),
    # Code or commands run as another role, each action alone.
    (
        "escalation",
        "a layer for the breaker's function",
        _grant("interruptions", _allow(["lambda:UpdateFunctionConfiguration", "lambda:PublishLayerVersion"])),
        ESCALATION,
    ),
    (
        "escalation",
        "a build of an existing project with its role",
        _grant("alertmanager", _allow("codebuild:StartBuild")),
        ESCALATION,
    ),
    (
        "escalation",
        "an existing stack updated with its role",
        _grant("alertmanager", _allow("cloudformation:UpdateStack")),
        ESCALATION,
    ),
    (
        "escalation",
        "a State Manager association on the nodes",
        _grant("alertmanager", _allow("ssm:CreateAssociation")),
        ESCALATION,
    ),
    (
        "escalation",
        "an access entry updated into a group",
        _grant(
            "triton-video-role",
            _allow("eks:UpdateAccessEntry", f"arn:aws:eks:us-east-1:{HOME}:access-entry/seedance-prod/*"),
        ),
        ESCALATION,
    ),
    (
        "escalation",
        "a new version of the nodes' launch template",
        _grant(
            "autoscaler", _allow("ec2:CreateLaunchTemplateVersion", f"arn:aws:ec2:us-east-1:{HOME}:launch-template/*")
        ),
        ESCALATION,
    ),
    # Passing or assuming a role the plan does not declare, whatever runs it.
    (
        "escalation",
        "a role outside the plan passed to a schedule",
        _grant("autoscaler", _allow("iam:PassRole", OUTSIDE_ROLE), _allow("scheduler:CreateSchedule")),
        ESCALATION,
    ),
    (
        "escalation",
        "a role outside the plan assumed",
        _grant("triton-video-role", _allow("sts:AssumeRole", OUTSIDE_ROLE)),
        ESCALATION,
    ),
    # One name, two roles: the policy is credited to the role of that physical name.
    (
        "escalation",
        "a decoy role named as Triton's role, holding a Deny",
        _both(
            _new_role("seedance-prod-triton-video-models", LAMBDA_TRUST),
            _grant("triton-video-role", _allow(["s3:GetObject", "iam:PutRolePolicy"])),
            lambda rs: _add(
                "aws:iam/rolePolicy:RolePolicy",
                "decoy-deny",
                {
                    "role": "seedance-prod-triton-video-models",
                    "policy": json.dumps({"Statement": [{"Effect": "Deny", "Action": "*", "Resource": "*"}]}),
                },
            )(rs),
        ),
        ESCALATION,
    ),
    # Web identity through the plan's own cluster's provider, by StringEquals.
    (
        "entry",
        "Triton's role for another cluster's service account",
        _role_trust(
            "triton-video-role",
            lambda ss: ss[0].update(
                Principal={
                    "Federated": f"arn:aws:iam::{HOME}:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/0THER0CLUSTER"
                }
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "a look-alike issuer the plan declares",
        _both(
            _add(
                "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
                "look-alike",
                {"url": "https://oidc.eks.attacker.example/id/ABC", "clientIdLists": ["sts.amazonaws.com"]},
            ),
            _role_trust(
                "triton-video-role",
                lambda ss: ss[0].update(
                    Principal={"Federated": f"arn:aws:iam::{HOME}:oidc-provider/oidc.eks.attacker.example/id/ABC"}
                ),
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "Triton's service account under IfExists",
        _role_trust(
            "triton-video-role",
            lambda ss: ss[0].update(Condition={"StringEqualsIfExists": ss[0]["Condition"]["StringEquals"]}),
        ),
        ENTRY,
    ),
    # One service per role, and the program's own; compute runs as a role of the plan its service alone assumes.
    (
        "entry",
        "the publisher trusts EC2 as well",
        _role_trust(
            "triton-video-publisher",
            lambda ss: ss.append(
                {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "the breaker's function runs as the publisher",
        lambda rs: _one(rs, "aws:lambda/function:Function", "breaker")["inputs"].update(
            role=f"arn:aws:iam::{HOME}:role/seedance-prod-triton-video-publisher"
        ),
        ENTRY,
    ),
    (
        "entry",
        "a function runs as the deployer",
        _add(
            "aws:lambda/function:Function",
            "helper",
            {
                "role": "arn:aws:iam::123456789012:role/seedance-deployer",
                "runtime": "python3.12",
                "handler": "h.handler",
            },
        ),
        ENTRY,
    ),
    (
        "entry",
        "an EventBridge target runs a shell on the nodes",
        _add(
            "aws:cloudwatch/eventTarget:EventTarget",
            "shell",
            {
                "arn": "arn:aws:ssm:us-east-1::document/AWS-RunShellScript",
                "rule": "r",
                "runCommandTargets": [{"key": "tag:eks:cluster-name", "values": ["seedance-prod"]}],
            },
        ),
        ENTRY,
    ),
    (
        "entry",
        "a launch template boots nodes as another profile",
        lambda rs: _one(rs, "aws:ec2/launchTemplate:LaunchTemplate", "batch-template")["inputs"].update(
            iamInstanceProfile={"arn": f"arn:aws:iam::{HOME}:instance-profile/deployer-profile"}
        ),
        ENTRY,
    ),
    (
        "entry",
        "an add-on associates a service account with the deployer",
        lambda rs: _one(rs, "aws:eks/addon:Addon", "ebs-csi")["inputs"].update(
            podIdentityAssociations=[
                {
                    "roleArn": "arn:aws:iam::123456789012:role/seedance-deployer",
                    "serviceAccount": "ebs-csi-controller-sa",
                }
            ]
        ),
        ENTRY,
    ),
    (
        "entry",
        "the publisher joins the cluster as a node",
        _add(
            "aws:eks/accessEntry:AccessEntry",
            "publisher-node",
            {
                "clusterName": "seedance-prod",
                "principalArn": f"arn:aws:iam::{HOME}:role/seedance-prod-triton-video-publisher",
                "type": "EC2_LINUX",
            },
        ),
        ENTRY,
    ),
]
ATTACKS += REVIEW_4


def _raw_policy(role_part, text):
    """An inline policy for a role of the plan, written as the text given (spelled as IAM may refuse it)."""

    def tamper(rs):
        role = _one(rs, "aws:iam/role:Role", role_part)
        _add("aws:iam/rolePolicy:RolePolicy", f"raw-{len(rs)}", {"role": role["id"], "policy": text})(rs)

    return tamper


def _respelled(type_, name, old, new):
    """The resource's policy text with its first `old` written as `new` (a spelling JSON allows)."""

    def tamper(rs):
        resource = _one(rs, type_, name)
        resource["inputs"]["policy"] = resource["inputs"]["policy"].replace(old, new, 1)

    return tamper


def _key_statement(statement):
    return _statement("aws:kms/key:Key", "prod-key", statement)


def _endpoint_statement(endpoint, statement):
    def tamper(rs):
        filled = json.loads(json.dumps(statement).replace("VPC", _one(rs, "aws:ec2/vpc:Vpc")["id"]))
        _statement("aws:ec2/vpcEndpoint:VpcEndpoint", endpoint, filled)(rs)

    return tamper


EKS_OTHER = "oidc.eks.eu-west-1.amazonaws.com/id/5E8A1C2B3D4F5A6B7C8D9E0F1A2B3C4D"
DENY_ALL_SEND = '{"Statement": [{"Sid": "Guard rail", "Effect": "Deny", "Action": "ssm:*", "Resource": "*"}]}'
# The stop-58 second review (42 edits in shapes of its own, run against the tree after the first review's
# fixes: 24 caught, 4 of them by the known-type list alone): what got through, by principle, two spellings each.
REVIEW_5 = [
    # IRSA: a platform service account enters only the role something in the plan gives it.
    (
        "entry",
        "Grafana's service account into the publisher role",
        _role_trust(
            "triton-video-publisher",
            lambda ss: ss.append(
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": f"arn:aws:iam::{HOME}:oidc-provider/{ISSUER}"},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{ISSUER}:sub": "system:serviceaccount:grafana:grafana",
                            f"{ISSUER}:aud": "sts.amazonaws.com",
                        }
                    },
                }
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "the VPC CNI's service account into Triton's role",
        _role_trust(
            "triton-video-role",
            lambda ss: ss[0]["Condition"]["StringEquals"].update(
                {TRITON_SUB: "system:serviceaccount:kube-system:aws-node"}
            ),
        ),
        ENTRY,
    ),
    # One cluster, one issuer: another EKS cluster's provider registered beside the plan's own.
    (
        "entry",
        "another cluster's issuer registered and trusted",
        _both(
            _add(
                "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
                "other-cluster",
                {"url": f"https://{EKS_OTHER}", "clientIdLists": ["sts.amazonaws.com"]},
            ),
            _role_trust(
                "triton-video-publisher",
                lambda ss: ss.append(
                    {
                        "Effect": "Allow",
                        "Principal": {"Federated": f"arn:aws:iam::{HOME}:oidc-provider/{EKS_OTHER}"},
                        "Action": "sts:AssumeRoleWithWebIdentity",
                        "Condition": {
                            "StringEquals": {
                                f"{EKS_OTHER}:sub": "system:serviceaccount:triton-video:triton-video",
                                f"{EKS_OTHER}:aud": "sts.amazonaws.com",
                            }
                        },
                    }
                ),
            ),
        ),
        ENTRY,
    ),
    (
        "entry",
        "another cluster's issuer registered alone",
        _add(
            "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
            "other-cluster",
            {"url": f"https://{EKS_OTHER}", "clientIdLists": ["sts.amazonaws.com"]},
        ),
        ENTRY,
    ),
    # Code of another account running as a platform role.
    (
        "entry",
        "a layer of another account in the breaker",
        lambda rs: _one(rs, "aws:lambda/function:Function", "breaker")["inputs"].update(
            layers=["arn:aws:lambda:us-east-1:999988887777:layer:wrapper:3"]
        ),
        ENTRY,
    ),
    (
        "entry",
        "a layer of another account among the stack's",
        lambda rs: _one(rs, "aws:lambda/function:Function", "breaker")["inputs"].update(
            layers=[f"arn:aws:lambda:us-east-1:{HOME}:layer:ours:1", "arn:aws:lambda:us-east-1:210987654321:layer:x:9"]
        ),
        ENTRY,
    ),
    # A Deny in a document IAM refuses guards nothing.
    (
        "escalation",
        "run-command revoked by a Deny whose Sid IAM refuses",
        _both(_grant("alertmanager", _allow("ssm:SendCommand")), _raw_policy("alertmanager", DENY_ALL_SEND)),
        ESCALATION,
    ),
    (
        "escalation",
        "run-command revoked by a Deny spelled in lower case",
        _both(
            _grant("alertmanager", _allow("ssm:SendCommand")),
            _raw_policy("alertmanager", DENY_ALL_SEND.replace("Guard rail", "GuardRail").replace('"Deny"', '"deny"')),
        ),
        ESCALATION,
    ),
    # Data out by snapshots.
    (
        "exfiltration",
        "volume snapshots shared with another account",
        _grant("autoscaler", _allow(["ec2:CreateSnapshot", "ec2:ModifySnapshotAttribute"])),
        ESCALATION,
    ),
    ("exfiltration", "snapshot actions by a wildcard", _grant("autoscaler", _allow("ec2:*Snapshot*")), ESCALATION),
    # The publisher Deny covers every served file by its shape, not the probes'.
    (
        "bucket",
        "the publisher Deny narrowed to the probes' names",
        _guard(lambda s: s.update(Resource=[s["Resource"].replace("/*/*", f"/{m}/*") for m in ("m", "Model-Ω")])),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "the publisher Deny narrowed to files with a dot",
        _guard(lambda s: s.update(Resource=s["Resource"] + ".*")),
        PUBLISHER_DENY,
    ),
    # One writer of the model bucket's policy.
    (
        "bucket",
        "the model bucket's policy set inline as well",
        lambda rs: _one(rs, "aws:s3/bucket:Bucket", "models-bucket")["inputs"].update(
            policy=json.dumps(
                {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"AWS": f"arn:aws:iam::{HOME}:role/video-ml-engineers"},
                            "Action": "s3:PutObject",
                            "Resource": f"arn:aws:s3:::{MODELS}/*",
                        }
                    ]
                }
            )
        ),
        PUBLISHER_DENY,
    ),
    (
        "bucket",
        "an inline policy of TLS alone on the model bucket",
        lambda rs: _one(rs, "aws:s3/bucket:Bucket", "models-bucket")["inputs"].update(
            policy=json.dumps(
                {
                    "Statement": [
                        {
                            "Effect": "Deny",
                            "Principal": "*",
                            "Action": "s3:*",
                            "Resource": f"arn:aws:s3:::{MODELS}/*",
                            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                        }
                    ]
                }
            )
        ),
        PUBLISHER_DENY,
    ),
    # An encryption context is the caller's to supply: it names a caller only for a service that sets it.
    (
        "bucket",
        "the key for anyone who names a log group's context",
        _key_statement(
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
                "Resource": "*",
                "Condition": {"ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:us-east-1:{HOME}:*"}},
            }
        ),
        IAM,
    ),
    (
        "bucket",
        "a guardrail Deny by that context beside kms:* for anyone",
        _both(
            _key_statement({"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:*", "Resource": "*"}),
            _key_statement(
                {
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "*",
                    "Resource": "*",
                    "Condition": {
                        "ArnNotLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:us-east-1:{HOME}:*"}
                    },
                }
            ),
        ),
        IAM,
    ),
    # Through an endpoint a network origin always holds.
    (
        "bucket",
        "the S3 gateway endpoint open to any caller from the VPC",
        _endpoint_statement(
            "s3-gateway",
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": ["s3:PutObject", "s3:GetObject"],
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceVpc": "VPC"}},
            },
        ),
        IAM,
    ),
    (
        "bucket",
        "the STS endpoint open to any caller from its own endpoint",
        _endpoint_statement(
            "endpoints-sts",
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "sts:*",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceVpce": "vpce-e8c21c1023e750c6c"}},
            },
        ),
        IAM,
    ),
    # A document whose keys repeat is not the gate's to guess.
    (
        "bucket",
        "the publisher Deny's Resource given twice",
        _respelled(
            "aws:s3/bucketPolicy:BucketPolicy",
            "models-tls-only",
            '"Resource": "arn:aws:s3:::',
            '"Resource": "arn:aws:s3:::x/*", "Resource": "arn:aws:s3:::',
        ),
        IAM,
    ),
    (
        "bucket",
        "a key statement's Effect given twice",
        _respelled("aws:kms/key:Key", "prod-key", '"Effect": "Allow"', '"Effect": "Deny", "Effect": "Allow"'),
        IAM,
    ),
    # Only the account administers the key.
    (
        "bucket",
        "a team's role given kms:* in the key policy",
        _key_statement(
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{HOME}:role/video-ml-engineers"},
                "Action": "kms:*",
                "Resource": "*",
            }
        ),
        "aws-kms-key-restrict-key-policy",
    ),
    (
        "bucket",
        "a node role given free grants",
        _key_statement(
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{HOME}:role/seedance-prod-online-node-role-48a5364"},
                "Action": "kms:CreateGrant",
                "Resource": "*",
            }
        ),
        "aws-kms-key-restrict-key-policy",
    ),
]
ATTACKS += REVIEW_5


def _rendered_by(release_name, key, objects):
    """Objects put into a pinned chart's values, which that chart renders as they are."""
    return lambda rs: (
        _one(rs, "kubernetes:helm.sh/v3:Release", release_name)["inputs"]["values"].setdefault(key, []).extend(objects)
    )


CRD_OF_ANOTHER_GROUP = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "evils.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Evil", "plural": "evils"},
        "scope": "Namespaced",
        "versions": [
            {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
        ],
    },
}
# Stop 59's review (issue 51): another pinned chart's values render extensions and queues as the chart's own.
REVIEW_6 = [
    (
        "extension",
        "a CRD in Grafana's extraObjects",
        _rendered_by("grafana", "extraObjects", [CRD_OF_ANOTHER_GROUP]),
        EXTENSION,
    ),
    (
        "extension",
        "a webhook that sees every Secret, in Grafana's extraObjects",
        _rendered_by(
            "grafana",
            "extraObjects",
            [
                {
                    "apiVersion": "admissionregistration.k8s.io/v1",
                    "kind": "ValidatingWebhookConfiguration",
                    "metadata": {"name": "evil"},
                    "webhooks": [
                        {
                            "name": "evil.example.com",
                            "admissionReviewVersions": ["v1"],
                            "sideEffects": "None",
                            "failurePolicy": "Ignore",
                            "clientConfig": {"service": {"name": "grafana", "namespace": "grafana"}},
                            "rules": [
                                {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
                            ],
                        }
                    ],
                }
            ],
        ),
        EXTENSION,
    ),
    (
        "extension",
        "a ClusterQueue open to every namespace, in Prometheus' extraManifests",
        # The chart renders each entry through `tpl`: a YAML document as text.
        _rendered_by(
            "metrics-prometheus",
            "extraManifests",
            [
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: free-for-all\n"
                "spec:\n  namespaceSelector: {}\n  cohortName: seedance-batch\n"
            ],
        ),
        EXTENSION,
    ),
]
ATTACKS += REVIEW_6

ACCOUNTS = "kubernetes-workload-restrict-service-account"


def _running_as(kind, namespace, account):
    """A workload of the program's own, in a platform namespace, running as a platform identity."""
    pod = {
        "serviceAccountName": account,
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/kueue/kueue:v0.19.2",
                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}},
            }
        ],
    }
    template = {"metadata": {"labels": {"app": "impostor"}}, "spec": pod}
    specs = {
        "Deployment": ("apps/v1", {"selector": {"matchLabels": {"app": "impostor"}}, "template": template}),
        "CronJob": ("batch/v1", {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}),
        "Pod": ("v1", pod),
    }
    api, spec = specs[kind]
    group = "core/v1" if api == "v1" else api
    return _add(
        f"kubernetes:{group}:{kind}",
        f"impostor-{kind.lower()}",
        {"apiVersion": api, "kind": kind, "metadata": {"name": "impostor", "namespace": namespace}, "spec": spec},
    )


REVIEW_7 = [
    (
        "service account",
        "a Deployment in Kueue's namespace running as Kueue's controller (which alone starts a team's Job)",
        _running_as("Deployment", "kueue-system", "kueue-controller-manager"),
        ACCOUNTS,
    ),
    (
        "service account",
        "a CronJob in kube-system running as the cluster autoscaler (its IAM role scales the GPU groups)",
        _running_as("CronJob", "kube-system", "cluster-autoscaler"),
        ACCOUNTS,
    ),
    (
        "service account",
        "a Pod in kube-system running as the Job controller",
        _running_as("Pod", "kube-system", "job-controller"),
        ACCOUNTS,
    ),
    (
        "rbac",
        "the team's role writes Kueue Workloads and their status (admitting its own work)",
        _tenant_role(
            [
                {
                    "apiGroups": ["kueue.x-k8s.io"],
                    "resources": ["workloads", "workloads/status", "localqueues"],
                    "verbs": ["create", "update", "patch"],
                }
            ]
        ),
        ROLE,
    ),
    (
        "rbac",
        "the team's role creates ProvisioningRequests (nodes no queue counts)",
        _tenant_role(
            [
                {"apiGroups": ["autoscaling.x-k8s.io"], "resources": ["provisioningrequests"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["podtemplates"], "verbs": ["create"]},
            ]
        ),
        ROLE,
    ),
    (
        "rbac",
        "the team's role edits ClusterQueues and flavors (its own quota)",
        _tenant_role(
            [{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "resourceflavors"], "verbs": ["*"]}]
        ),
        ROLE,
    ),
]
ATTACKS += REVIEW_7

AUTOSCALER = "kubernetes-autoscaler-require-platform-values"


def _autoscaler_values(change):
    return lambda rs: change(_one(rs, "kubernetes:helm.sh/v3:Release", "autoscaler-release")["inputs"]["values"])


REVIEW_8 = [
    (
        "autoscaler",
        "GPU nodes never a scale-down candidate (utilization thresholds at 0)",
        _autoscaler_values(
            lambda v: v["extraArgs"].update(
                {"scale-down-utilization-threshold": "0", "scale-down-gpu-utilization-threshold": "0"}
            )
        ),
        AUTOSCALER,
    ),
    (
        "autoscaler",
        "no autoscaler running (replicaCount 0)",
        _autoscaler_values(lambda v: v.update(replicaCount=0)),
        AUTOSCALER,
    ),
    (
        "autoscaler",
        "its image from another registry, with its role",
        _autoscaler_values(
            lambda v: v.setdefault("image", {}).update(repository="docker.io/someone/cluster-autoscaler")
        ),
        AUTOSCALER,
    ),
    (
        "autoscaler",
        "a group's own options keep its idle nodes for a month",
        lambda rs: _one(rs, "aws:autoscaling/group:Group", "batch-asg")["inputs"]["tags"].append(
            {
                "key": "k8s.io/cluster-autoscaler/node-template/autoscaling-options/scaledownunneededtime",
                "value": "720h",
                "propagateAtLaunch": True,
            }
        ),
        AUTOSCALER,
    ),
]
POOLS = "aws-autoscaling-group-restrict-to-config"


def _train_group(change):
    return lambda rs: change(_one(rs, "aws:autoscaling/group:Group", "train-asg")["inputs"])


REVIEW_8 += [
    (
        "pool",
        "H100s in the EFA pool (a p5 override, priced at desired 0)",
        _train_group(
            lambda g: g["mixedInstancesPolicy"]["launchTemplate"]["overrides"].append({"instanceType": "p5.48xlarge"})
        ),
        POOLS,
    ),
    ("pool", "the EFA pool's maximum four times the config's", _train_group(lambda g: g.update(maxSize=16)), POOLS),
    (
        "pool",
        "the batch group never terminates (Terminate suspended)",
        lambda rs: _one(rs, "aws:autoscaling/group:Group", "batch-asg")["inputs"]["suspendedProcesses"].append(
            "Terminate"
        ),
        POOLS,
    ),
    (
        "pool",
        "the EFA pool recycles its nodes daily",
        _train_group(lambda g: g.update(maxInstanceLifetime=86400)),
        POOLS,
    ),
]
ATTACKS += REVIEW_8

QUEUES = "kubernetes-kueue-queue-restrict-to-decision"
CLASSES = "kubernetes-priorityclass-restrict-to-platform"
REVIEW_9 = [
    (
        "priority",
        "batch raised above serving, preempting it",
        lambda rs: _one(rs, "kubernetes:scheduling.k8s.io/v1:PriorityClass", "seedance-batch")["inputs"].update(
            value=200000, preemptionPolicy="PreemptLowerPriority"
        ),
        CLASSES,
    ),
    (
        "priority",
        "a global default class",
        lambda rs: _one(rs, "kubernetes:scheduling.k8s.io/v1:PriorityClass", "seedance-online")["inputs"].update(
            globalDefault=True
        ),
        CLASSES,
    ),
    (
        "priority",
        "a class of the program's above the add-ons'",
        _add(
            "kubernetes:scheduling.k8s.io/v1:PriorityClass",
            "urgent",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "urgent"},
                "value": 2000000,
            },
        ),
        CLASSES,
    ),
    (
        "queues",
        "a team's LocalQueue stopped and drained",
        lambda rs: _one(rs, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "video-train")["inputs"]["spec"].update(
            stopPolicy="HoldAndDrain"
        ),
        QUEUES,
    ),
    (
        "queues",
        "the ProvisioningRequest API gone while gangs need it",
        lambda rs: rs.remove(
            _one(rs, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "provisioningrequests")
        ),
        QUEUES,
    ),
    (
        "queues",
        "the EFA flavor admitted without its gang check",
        lambda rs: _one(rs, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "video-ml-batch")["inputs"]["spec"].pop(
            "admissionChecksStrategy"
        ),
        QUEUES,
    ),
]
ATTACKS += REVIEW_9

BUDGET_RULE = "aws-budget-restrict-to-config"
REVIEW_10 = [
    (
        "budget",
        "AWS's budget raised a hundredfold (its alerts and the breaker never fire)",
        lambda rs: _one(rs, "aws:budgets/budget:Budget", "budget-monthly")["inputs"].update(limitAmount="9500000.00"),
        BUDGET_RULE,
    ),
    (
        "budget",
        "the breaker's hold switched off",
        lambda rs: _one(rs, "aws:cloudwatch/eventRule:EventRule", "breaker-hold")["inputs"].update(state="DISABLED"),
        BUDGET_RULE,
    ),
    (
        "budget",
        "the budget's e-mails unsubscribed",
        lambda rs: [
            rs.remove(r)
            for r in [
                r
                for r in rs
                if r["type"] == "aws:sns/topicSubscription:TopicSubscription" and "budget-mail" in r["name"]
            ]
        ],
        BUDGET_RULE,
    ),
]
PLACEMENT = "aws-autoscaling-group-restrict-placement-group"
REVIEW_10 += [
    (
        "budget",
        "the EFA pool's template on dedicated tenancy (a premium the estimate does not price)",
        lambda rs: _one(rs, "aws:ec2/launchTemplate:LaunchTemplate", "train-template")["inputs"].update(
            placement={"tenancy": "dedicated"}
        ),
        PLACEMENT,
    ),
    (
        "pool",
        "the batch template names the EFA pool's placement group itself",
        lambda rs: _one(rs, "aws:ec2/launchTemplate:LaunchTemplate", "batch-template")["inputs"].update(
            placement={"groupName": "seedance-prod-train"}
        ),
        PLACEMENT,
    ),
]
ATTACKS += REVIEW_10


GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "policies" / "attacks.json"


@pytest.mark.parametrize("kind, spelling, tamper, rule", ATTACKS, ids=[f"{a[0]}: {a[1]}" for a in ATTACKS])
def test_each_attack_fails_the_prod_gate_naming_the_rule_that_guards_it(
    prod_plan,
    tmp_path,
    capsys,
    kind,
    spelling,
    tamper,
    rule,
):
    """...and says what it found, whole, as tests/golden/policies/attacks.json has it (a finding that names
    the wrong control, value or resource shows in review). Regenerate after an intended change:
        UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/policies/test_gate_attacks.py"""
    code, out = gate(tampered(prod_plan, tamper), tmp_path, capsys)
    named = set(re.findall(r"\[mandatory\] ([a-z0-9-]+):", out))
    assert code == 1 and rule in named, (kind, spelling, named)
    said = sorted(line.strip() for line in out.splitlines() if f"[mandatory] {rule}:" in line)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps({**golden, f"{kind}: {spelling}": said}, indent=1, sort_keys=True) + "\n")
        golden = json.loads(GOLDEN.read_text())
    assert said == golden[f"{kind}: {spelling}"], f"regenerate: UPDATE_GOLDEN=1 pytest {__file__}"


def test_every_kind_is_attacked_in_three_spellings_or_more():
    kinds = {}
    for kind, *_ in ATTACKS:
        kinds[kind] = kinds.get(kind, 0) + 1
    assert min(kinds.values()) >= 3, kinds
