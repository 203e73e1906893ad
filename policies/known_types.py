"""The resource types the gate can judge: a positive model. In prod, a type not on this list is a mandatory
finding (`pulumi-resource-require-known-type`), however harmless it looks: a kind the readers do not know
may carry a pod, an identity or a door the rules never read (a KubeRay RayCluster's privileged pod, an EKS
Pod Identity association, a ConfigGroup's objects that are not in the plan).

Each entry names the rules that judge the type (a test checks that each named resource rule judges it);
an entry with none says in `NOTHING_TO_JUDGE` why there is nothing to judge. Adding a type takes a rule
that judges it, with pass and fail fixtures, and its entry here. Kubernetes kinds are keyed by the type
token the provider gives them (`kubernetes:<group>/<version>:<Kind>`), rendered chart objects alike. Pure."""

from __future__ import annotations

POD_RULES = (
    "kubernetes-container-disallow-unsafe-options",
    "kubernetes-container-limit-memory-per-vcpu",
    "kubernetes-container-require-cpu-memory-requests",
    "kubernetes-grafana-disallow-anonymous-access",
    "kubernetes-pod-enforce-pod-security-standards",
    "kubernetes-tenant-require-contract-fit",
    "kubernetes-workload-require-cost-labels",
    "kubernetes-workload-restrict-service-account",
)
# A workload's pod template is also judged for its spread and, in Triton's namespaces, its model control.
WORKLOAD_RULES = (
    *POD_RULES,
    "kubernetes-deployment-disallow-strict-zone-spread",
    "kubernetes-deployment-require-triton-model-control",
)

KNOWN_TYPES: dict[str, tuple[str, ...]] = {
    "aws:autoscaling/group:Group": (
        "aws-autoscaling-group-allow-gpu-instance-types",
        "aws-autoscaling-group-limit-spot-share",
        "aws-autoscaling-group-prefer-spot-outside-prod",
        "aws-autoscaling-group-require-on-demand-baseline",
        "aws-autoscaling-group-restrict-placement-group",
        "aws-ec2-launch-require-stack-template",
        "aws-ec2-launch-restrict-launchers",
        "aws-resource-tags-require-cost-tags",
        "kubernetes-autoscaler-require-platform-values",
        "aws-autoscaling-group-restrict-to-config",
    ),
    "aws:autoscaling/lifecycleHook:LifecycleHook": ("aws-resource-tags-require-cost-tags",),
    "aws:budgets/budget:Budget": (
        "aws-budget-restrict-to-config",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:cloudwatch/eventRule:EventRule": (
        "aws-budget-restrict-to-config",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:cloudwatch/eventTarget:EventTarget": ("aws-resource-tags-require-cost-tags",),
    "aws:cloudwatch/logGroup:LogGroup": ("aws-resource-tags-require-cost-tags",),
    "aws:ebs/volume:Volume": (
        "aws-ebs-volume-disallow-gp2-io1",
        "aws-ebs-volume-flag-overprovisioned-io2",
        "aws-ebs-volume-limit-io2-iops-per-gib",
        "aws-ebs-volume-require-customer-key",
        "aws-kms-key-require-home-account",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": (
        "aws-resource-tags-require-cost-tags",
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    "aws:ec2/eip:Eip": ("aws-ec2-instance-launch-disallow-public-ip", "aws-resource-tags-require-cost-tags"),
    "aws:ec2/flowLog:FlowLog": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/internetGateway:InternetGateway": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/launchTemplate:LaunchTemplate": (
        "aws-autoscaling-group-allow-gpu-instance-types",
        "aws-ebs-volume-disallow-gp2-io1",
        "aws-ec2-instance-launch-disallow-public-ip",
        "aws-ec2-instance-launch-require-imdsv2",
        "aws-ec2-launch-template-require-encrypted-volumes",
        "aws-ec2-launch-template-restrict-user-data",
        "aws-resource-tags-require-cost-tags",
        "aws-autoscaling-group-restrict-placement-group",
    ),
    # A prefix list the plan creates: its entries are ranges its security groups' ingress admits.
    "aws:ec2/managedPrefixList:ManagedPrefixList": (
        "aws-resource-tags-require-cost-tags",
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    "aws:ec2/managedPrefixListEntry:ManagedPrefixListEntry": ("aws-vpc-security-group-disallow-open-ingress",),
    "aws:ec2/natGateway:NatGateway": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/route:Route": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/routeTable:RouteTable": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/placementGroup:PlacementGroup": (
        "aws-autoscaling-group-restrict-placement-group",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:ec2/securityGroup:SecurityGroup": (
        "aws-resource-tags-require-cost-tags",
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    "aws:ec2/subnet:Subnet": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/vpc:Vpc": ("aws-resource-tags-require-cost-tags",),
    "aws:ec2/vpcEndpoint:VpcEndpoint": ("aws-resource-tags-require-cost-tags", "aws-vpc-endpoint-require-private-dns"),
    "aws:ec2transitgateway/vpcAttachment:VpcAttachment": ("aws-resource-tags-require-cost-tags",),
    "aws:eks/accessEntry:AccessEntry": (
        "aws-eks-access-restrict-admin-policies",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": (
        "aws-eks-access-restrict-admin-policies",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:eks/addon:Addon": ("aws-resource-tags-require-cost-tags", "kubernetes-namespace-require-default-deny"),
    "aws:eks/cluster:Cluster": (
        "aws-eks-access-restrict-admin-policies",
        "aws-eks-cluster-require-control-plane-logs",
        "aws-eks-cluster-require-secrets-encryption",
        "aws-eks-cluster-restrict-public-endpoint",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:eks/nodeGroup:NodeGroup": (
        "aws-autoscaling-group-allow-gpu-instance-types",
        "aws-eks-node-group-require-launch-template",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:iam/instanceProfile:InstanceProfile": ("aws-resource-tags-require-cost-tags",),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": ("aws-resource-tags-require-cost-tags",),
    "aws:iam/role:Role": (
        "aws-iam-policy-disallow-public-principal",
        "aws-iam-policy-require-known-document",
        "aws-iam-role-disallow-admin-policies",
        "aws-iam-role-disallow-privilege-escalation",
        "aws-iam-role-restrict-platform-role-entry",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:iam/rolePolicy:RolePolicy": (
        "aws-iam-role-disallow-admin-policies",
        "aws-iam-role-disallow-privilege-escalation",
        "aws-iam-role-restrict-platform-role-entry",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": (
        "aws-iam-policy-require-known-document",
        "aws-iam-role-disallow-admin-policies",
        "aws-iam-role-disallow-privilege-escalation",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": ("aws-resource-tags-require-cost-tags",),
    "aws:kms/alias:Alias": ("aws-resource-tags-require-cost-tags",),
    "aws:kms/key:Key": (
        "aws-kms-key-require-home-account",
        "aws-kms-key-require-rotation",
        "aws-resource-tags-require-cost-tags",
        "aws-s3-bucket-require-customer-key",
        "aws-kms-key-restrict-key-policy",
    ),
    "aws:lambda/function:Function": ("aws-resource-tags-require-cost-tags",),
    "aws:lambda/permission:Permission": ("aws-resource-tags-require-cost-tags",),
    "aws:s3/bucket:Bucket": (
        "aws-resource-tags-require-cost-tags",
        "aws-s3-bucket-disallow-public-access",
        "aws-s3-bucket-require-customer-key",
        "aws-s3-bucket-restrict-replication",
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ("aws-resource-tags-require-cost-tags",),
    "aws:s3/bucketObjectv2:BucketObjectv2": ("aws-resource-tags-require-cost-tags",),
    "aws:s3/bucketPolicy:BucketPolicy": (
        "aws-iam-policy-disallow-public-principal",
        "aws-resource-tags-require-cost-tags",
        "aws-s3-bucket-require-model-publisher-deny",
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": (
        "aws-resource-tags-require-cost-tags",
        "aws-s3-bucket-disallow-public-access",
    ),
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": ("aws-s3-bucket-restrict-replication",),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "aws-resource-tags-require-cost-tags",
        "aws-s3-bucket-require-customer-key",
    ),
    "aws:s3/bucketVersioning:BucketVersioning": ("aws-resource-tags-require-cost-tags",),
    "aws:sns/topic:Topic": ("aws-resource-tags-require-cost-tags",),
    "aws:sns/topicPolicy:TopicPolicy": ("aws-resource-tags-require-cost-tags",),
    "aws:sns/topicSubscription:TopicSubscription": (
        "aws-budget-restrict-to-config",
        "aws-resource-tags-require-cost-tags",
    ),
    "aws:sqs/queue:Queue": ("aws-resource-tags-require-cost-tags",),
    "aws:sqs/queuePolicy:QueuePolicy": ("aws-resource-tags-require-cost-tags",),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (
        "aws-resource-tags-require-cost-tags",
        "aws-vpc-security-group-disallow-open-ingress",
    ),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy": (
        "kubernetes-admission-binding-require-deny",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding": (
        "kubernetes-tenant-require-contract-fit",
    ),
    # Kueue's chart (a pinned release of the platform: its API, its webhooks) and the platform's queues.
    "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration": (
        "kubernetes-admission-disallow-undeclared-mutation",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration": (
        "kubernetes-api-extension-require-pinned-chart",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition": (
        "kubernetes-api-extension-require-pinned-chart",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck": (
        "kubernetes-kueue-queue-restrict-to-decision",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue": (
        "kubernetes-kueue-queue-restrict-to-decision",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue": (
        "kubernetes-kueue-queue-restrict-to-decision",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig": (
        "kubernetes-kueue-queue-restrict-to-decision",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:kueue.x-k8s.io/v1beta2:Topology": (
        "kubernetes-kueue-queue-restrict-to-decision",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor": (
        "kubernetes-kueue-queue-restrict-to-decision",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:apiregistration.k8s.io/v1:APIService": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:apps/v1:DaemonSet": WORKLOAD_RULES,
    "kubernetes:apps/v1:Deployment": (
        *WORKLOAD_RULES,
        "kubernetes-deployment-require-graceful-drain",
        "kubernetes-deployment-require-warm-pool",
        "kubernetes-hpa-disallow-cpu-only-for-gpu",
    ),
    "kubernetes:apps/v1:StatefulSet": WORKLOAD_RULES,
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:core/v1:ConfigMap": (
        "kubernetes-grafana-disallow-anonymous-access",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:core/v1:LimitRange": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:core/v1:Namespace": (
        "kubernetes-namespace-require-pod-security-level",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:core/v1:NamespacePatch": (
        "kubernetes-patch-restrict-to-audit-labels",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:core/v1:PersistentVolume": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:core/v1:PersistentVolumeClaim": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:core/v1:ResourceQuota": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:core/v1:Secret": (
        "kubernetes-grafana-disallow-anonymous-access",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:core/v1:Service": (
        "kubernetes-service-disallow-node-port",
        "kubernetes-service-require-internal-load-balancer",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:core/v1:ServiceAccount": ("kubernetes-tenant-require-contract-fit",),
    "kubernetes:helm.sh/v3:Release": (
        "kubernetes-tenant-require-contract-fit",
        "kubernetes-autoscaler-require-platform-values",
    ),
    "kubernetes:networking.k8s.io/v1:NetworkPolicy": (
        "kubernetes-namespace-require-default-deny",
        "kubernetes-networkpolicy-disallow-allow-all",
        "kubernetes-networkpolicy-restrict-serving-ingress",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:policy/v1:PodDisruptionBudget": (
        "kubernetes-tenant-require-contract-fit",
        "kubernetes-pdb-require-eviction-room",
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": (
        "kubernetes-rbac-role-disallow-escalation",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": (
        "kubernetes-rbac-binding-disallow-escalating-roles",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:Role": (
        "kubernetes-rbac-role-disallow-escalation",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": (
        "kubernetes-rbac-binding-disallow-escalating-roles",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:scheduling.k8s.io/v1:PriorityClass": (
        "kubernetes-priorityclass-restrict-to-platform",
        "kubernetes-tenant-require-contract-fit",
    ),
    "kubernetes:storage.k8s.io/v1:StorageClass": (
        "aws-ebs-volume-disallow-gp2-io1",
        "aws-ebs-volume-require-customer-key",
        "kubernetes-storageclass-require-wait-for-first-consumer",
        "kubernetes-tenant-require-contract-fit",
    ),
    "pulumi:providers:kubernetes": (),
    "random:index/randomPassword:RandomPassword": (),
    "seedance:cluster:Cluster": (),
    "seedance:cluster:ClusterAutoscaler": (),
    "seedance:cluster:Descheduler": (),
    "seedance:compute:GpuNodeGroup": (),
    "seedance:compute:PoolIdentity": (),
    "seedance:compute:SpotInterruptionHandling": (),
    "seedance:cost:BudgetAlerts": (),
    "seedance:cost:BudgetBreaker": (),
    "seedance:encryption:StackKey": (),
    "seedance:gpu:EfaDevicePlugin": (),
    "seedance:gpu:NvidiaDevicePlugin": (),
    "seedance:monitoring:MetricsPipeline": (),
    "seedance:network:Network": (),
    "seedance:network:PrivateEndpoints": (),
    "seedance:serving:ModelRepository": (),
    "seedance:serving:TritonServing": (),
    "seedance:storage:CheckpointStorage": (),
    "seedance:storage:LocalStorage": (),
    "seedance:storage:VolumeGuard": (),
    "seedance:tenancy:GpuQueues": (),
    "seedance:tenancy:TenantCostLabels": (),
    "seedance:tenancy:TenantGuards": (),
    "seedance:tenancy:TenantSpace": (),
    "tls:index/certRequest:CertRequest": (),
    "tls:index/locallySignedCert:LocallySignedCert": (),
    "tls:index/privateKey:PrivateKey": (),
    "tls:index/selfSignedCert:SelfSignedCert": (),
    # A Capacity Block's start and drain: priced by the estimate the budget rules read.
    "aws:autoscaling/schedule:Schedule": ("budget-monthly-cost-limit", "budget-monthly-cost-warn-near-budget"),
    "seedance:compute:CapacityBlockExpiry": (),
    "seedance:compute:CapacityBlockGroup": (),
    "pulumi:pulumi:Stack": (),
    "pulumi:pulumi:StackReference": (),
    "pulumi:providers:aws": (),
    "pulumi:providers:random": (),
    "pulumi:providers:tls": (),
    "kubernetes:core/v1:Pod": POD_RULES,
    "kubernetes:batch/v1:Job": POD_RULES,
    "kubernetes:batch/v1:CronJob": POD_RULES,
    "kubernetes:apps/v1:ReplicaSet": POD_RULES,
}

_COMPONENT = "a component of this program: it holds nothing itself, and each of its children is judged"
NOTHING_TO_JUDGE: dict[str, str] = {
    **{token: _COMPONENT for token, rules in KNOWN_TYPES.items() if token.startswith("seedance:")},
    "pulumi:pulumi:Stack": "the stack itself: its resources are judged",
    "pulumi:pulumi:StackReference": "reads another stack's outputs; creates nothing",
    "pulumi:providers:kubernetes": "the provider the Kubernetes objects are created with; each object is judged",
    "pulumi:providers:aws": "the provider the AWS resources are created with; each resource is judged",
    "pulumi:providers:random": "the engine's default provider of generated secrets: creates nothing in a cloud",
    "pulumi:providers:tls": "the engine's default provider of keys and certificates: creates nothing in a cloud",
    "random:index/randomPassword:RandomPassword": "a generated secret, held in state: creates nothing in a cloud",
    "tls:index/certRequest:CertRequest": "a certificate request, held in state: creates nothing in a cloud",
    "tls:index/locallySignedCert:LocallySignedCert": "a certificate, held in state: creates nothing in a cloud",
    "tls:index/privateKey:PrivateKey": "a key, held in state: creates nothing in a cloud",
    "tls:index/selfSignedCert:SelfSignedCert": "a certificate, held in state: creates nothing in a cloud",
}

# Kinds whose objects the plan does not hold (the provider expands them at `up`): the gate cannot judge them.
EXPANDED_AT_UP = frozenset(
    {
        "kubernetes:yaml:ConfigFile",
        "kubernetes:yaml:ConfigGroup",
        "kubernetes:yaml/v2:ConfigFile",
        "kubernetes:yaml/v2:ConfigGroup",
        "kubernetes:kustomize:Directory",
        "kubernetes:kustomize/v2:Directory",
        "kubernetes:helm.sh/v3:Chart",
        "kubernetes:helm.sh/v4:Chart",
    }
)

# API versions Kubernetes stopped serving, by (group/version, kind): the minor that removed it and what
# replaces it (kubernetes.io/docs/reference/using-api/deprecation-guide).
REMOVED_API_VERSIONS: dict[tuple[str, str], tuple[str, str]] = {
    **{
        (f"{group}/v1beta1", kind): ("1.22", f"{group}/v1")
        for group, kinds in {
            "admissionregistration.k8s.io": ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
            "apiextensions.k8s.io": ("CustomResourceDefinition",),
            "apiregistration.k8s.io": ("APIService",),
            "certificates.k8s.io": ("CertificateSigningRequest",),
            "coordination.k8s.io": ("Lease",),
            "networking.k8s.io": ("Ingress", "IngressClass"),
            "rbac.authorization.k8s.io": ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
            "scheduling.k8s.io": ("PriorityClass",),
            "storage.k8s.io": ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"),
        }.items()
        for kind in kinds
    },
    ("extensions/v1beta1", "Ingress"): ("1.22", "networking.k8s.io/v1"),
    ("batch/v1beta1", "CronJob"): ("1.25", "batch/v1"),
    ("discovery.k8s.io/v1beta1", "EndpointSlice"): ("1.25", "discovery.k8s.io/v1"),
    ("events.k8s.io/v1beta1", "Event"): ("1.25", "events.k8s.io/v1"),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler"): ("1.25", "autoscaling/v2"),
    ("policy/v1beta1", "PodDisruptionBudget"): ("1.25", "policy/v1"),
    ("policy/v1beta1", "PodSecurityPolicy"): ("1.25", "Pod Security Admission (no replacement kind)"),
    ("node.k8s.io/v1beta1", "RuntimeClass"): ("1.25", "node.k8s.io/v1"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler"): ("1.26", "autoscaling/v2"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"): ("1.26", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration"): ("1.26", "flowcontrol.apiserver.k8s.io/v1"),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity"): ("1.27", "storage.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema"): ("1.29", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration"): ("1.29", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema"): ("1.32", "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration"): ("1.32", "flowcontrol.apiserver.k8s.io/v1"),
}


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def kubernetes_api(token: str) -> tuple[str, str] | None:
    """(apiVersion, kind) of a Kubernetes object's type token; None for any other type."""
    parts = token.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes":
        return None
    group_version = parts[1].removeprefix("core/")
    return group_version, parts[2]


def removed_in(token: str, kubernetes_version: str) -> tuple[str, str] | None:
    """(the minor that removed it, its replacement) when the stack's version no longer serves the type."""
    api = kubernetes_api(token)
    removal = REMOVED_API_VERSIONS.get(api) if api else None
    if removal is None or _minor(kubernetes_version) < _minor(removal[0]):
        return None
    return removal
