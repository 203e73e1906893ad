"""The one place that knows Pulumi type tokens, and how a plan's resources look to the pure readers
of a plan (cost estimate, policies, Terraform export)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from seedance_client.tokens import (
    HELM_RELEASE as CLIENT_HELM_RELEASE,
)
from seedance_client.tokens import (
    STACK as CLIENT_STACK,
)
from seedance_client.tokens import (
    STACK_REFERENCE as CLIENT_STACK_REFERENCE,
)

ASG = "aws:autoscaling/group:Group"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
EBS_VOLUME = "aws:ebs/volume:Volume"
EC2_INSTANCE = "aws:ec2/instance:Instance"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_ACCESS_ENTRY = "aws:eks/accessEntry:AccessEntry"
EKS_ADDON = "aws:eks/addon:Addon"
EKS_ACCESS_POLICY = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
KMS_KEY = "aws:kms/key:Key"
# Keys of imported material (they cannot rotate automatically) and replicas of multi-Region keys (each with
# its own key policy; a replica decrypts what its primary encrypted).
KMS_EXTERNAL_KEYS = ("aws:kms/externalKey:ExternalKey", "aws:kms/replicaExternalKey:ReplicaExternalKey")
KMS_REPLICA_KEY = "aws:kms/replicaKey:ReplicaKey"
KMS_KEY_POLICY = "aws:kms/keyPolicy:KeyPolicy"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
ELASTIC_IP = "aws:ec2/eip:Eip"
EIP_ASSOCIATION = "aws:ec2/eipAssociation:EipAssociation"
TRANSIT_GATEWAY_ATTACHMENT = "aws:ec2transitgateway/vpcAttachment:VpcAttachment"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
# What a resource is expected to carry a month, in GB (NAT data processed, log ingestion): an assumption
# the program states on the resource, so every reader of the plan prices it alike.
EXPECTED_GB_TAG = "seedance.io/expected-gb-month"
VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
ROUTE = "aws:ec2/route:Route"
ROUTE_TABLE_ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
INTERNET_GATEWAY = "aws:ec2/internetGateway:InternetGateway"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
# The VPC's default group: the program adopts it with no rules (CIS AWS 5.4: it admits nothing).
DEFAULT_SECURITY_GROUP = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
SECURITY_GROUP_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
MANAGED_PREFIX_LIST = "aws:ec2/managedPrefixList:ManagedPrefixList"
MANAGED_PREFIX_LIST_ENTRY = "aws:ec2/managedPrefixListEntry:ManagedPrefixListEntry"
IAM_ROLE = "aws:iam/role:Role"
# Fleets that launch instances beside Auto Scaling (judged for the template they launch from).
SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest"
EC2_FLEET = "aws:ec2/fleet:Fleet"
SPOT_INSTANCE_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"
# A scheduled action of an Auto Scaling group: it sets the group's sizes at its times.
ASG_SCHEDULE = "aws:autoscaling/schedule:Schedule"
# Capacity that launches or bills instances outside the groups and node groups (AWS Batch makes its own
# Auto Scaling groups; a capacity reservation bills its instances whether or not they run).
BATCH_COMPUTE_ENVIRONMENT = "aws:batch/computeEnvironment:ComputeEnvironment"
CAPACITY_RESERVATION = "aws:ec2/capacityReservation:CapacityReservation"
KMS_GRANT = "aws:kms/grant:Grant"
RAM_PRINCIPAL_ASSOCIATION = "aws:ram/principalAssociation:PrincipalAssociation"
LOAD_BALANCERS = frozenset(
    {"aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer", "aws:elb/loadBalancer:LoadBalancer"}
)
S3_ENCRYPTION_CONFIGURATIONS = frozenset(
    {
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
    }
)
# S3's server-side encryption algorithms that use a KMS key (SSE-KMS and its dual-layer form).
S3_KMS_ALGORITHMS = frozenset({"aws:kms", "aws:kms:dsse"})
K8S_NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
K8S_MUTATING_WEBHOOKS = "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration"
K8S_VALIDATING_WEBHOOKS = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration"
K8S_WEBHOOK_CONFIGURATIONS = frozenset({K8S_MUTATING_WEBHOOKS, K8S_VALIDATING_WEBHOOKS})
# What attaches a managed policy to a role, a user or a group.
IAM_ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
IAM_POLICY_ATTACHMENT = "aws:iam/policyAttachment:PolicyAttachment"
IAM_USER_POLICY_ATTACHMENT = "aws:iam/userPolicyAttachment:UserPolicyAttachment"
IAM_GROUP_POLICY_ATTACHMENT = "aws:iam/groupPolicyAttachment:GroupPolicyAttachment"
IAM_POLICY_ATTACHMENTS = (
    IAM_ROLE_POLICY_ATTACHMENT,
    IAM_POLICY_ATTACHMENT,
    "aws:iam/roleManagedPolicyAttachment:RoleManagedPolicyAttachment",
    IAM_USER_POLICY_ATTACHMENT,
    IAM_GROUP_POLICY_ATTACHMENT,
)
# IAM entities and what gives them policies (policies/readers/identity.py reads them together).
IAM_USER = "aws:iam/user:User"
IAM_GROUP = "aws:iam/group:Group"
IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
IAM_USER_POLICY = "aws:iam/userPolicy:UserPolicy"
IAM_GROUP_POLICY = "aws:iam/groupPolicy:GroupPolicy"
IAM_CUSTOMER_POLICY = "aws:iam/policy:Policy"
IAM_GROUP_MEMBERSHIP = "aws:iam/groupMembership:GroupMembership"
IAM_USER_GROUP_MEMBERSHIP = "aws:iam/userGroupMembership:UserGroupMembership"
IAM_INSTANCE_PROFILE = "aws:iam/instanceProfile:InstanceProfile"
IAM_OIDC_PROVIDER = "aws:iam/openIdConnectProvider:OpenIdConnectProvider"
EKS_POD_IDENTITY_ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
# Compute that runs as a role it names.
LAMBDA_FUNCTION = "aws:lambda/function:Function"
EVENT_TARGET = "aws:cloudwatch/eventTarget:EventTarget"
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
BUDGET = "aws:budgets/budget:Budget"
SNS_SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
SFN_STATE_MACHINE = "aws:sfn/stateMachine:StateMachine"
ECS_TASK_DEFINITION = "aws:ecs/taskDefinition:TaskDefinition"
CODEBUILD_PROJECT = "aws:codebuild/project:Project"
S3_REPLICATION_CONFIG = "aws:s3/bucketReplicationConfig:BucketReplicationConfig"
K8S_CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
K8S_SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
K8S_SECRET = "kubernetes:core/v1:Secret"
S3_BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy"
K8S_ADMISSION_POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
K8S_ADMISSION_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
HELM_RELEASE = CLIENT_HELM_RELEASE
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
K8S_DEPLOYMENT = "kubernetes:apps/v1:Deployment"
K8S_HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
K8S_STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
K8S_PDB = "kubernetes:policy/v1:PodDisruptionBudget"
K8S_SERVICE = "kubernetes:core/v1:Service"
K8S_STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
# A claim naming one has the CSI driver modify its volume to these parameters (Kubernetes 1.34 GA).
K8S_VOLUME_ATTRIBUTES_CLASSES = (
    "kubernetes:storage.k8s.io/v1:VolumeAttributesClass",
    "kubernetes:storage.k8s.io/v1beta1:VolumeAttributesClass",
)
K8S_CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
K8S_NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
K8S_NAMESPACE = "kubernetes:core/v1:Namespace"
K8S_CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
K8S_PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
KUEUE_FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
KUEUE_CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
KUEUE_LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
KUEUE_ADMISSION_CHECK = "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck"
KUEUE_PROVISIONING_CONFIG = "kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig"
KUEUE_TOPOLOGY = "kubernetes:kueue.x-k8s.io/v1beta2:Topology"
# The program's own Kueue objects, from the stack config (components/tenancy/queues.py).
KUEUE_KINDS = (
    KUEUE_FLAVOR,
    KUEUE_CLUSTER_QUEUE,
    KUEUE_LOCAL_QUEUE,
    KUEUE_ADMISSION_CHECK,
    KUEUE_PROVISIONING_CONFIG,
    KUEUE_TOPOLOGY,
)
K8S_ROLES = ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "kubernetes:rbac.authorization.k8s.io/v1:Role")
K8S_ROLE_BINDINGS = (
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
)
S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
# What can carry an S3 ACL, and the bucket's public access block.
S3_OBJECTS = ("aws:s3/bucketObject:BucketObject", "aws:s3/bucketObjectv2:BucketObjectv2")
S3_ACL_HOLDERS = (*S3_BUCKETS, "aws:s3/bucketAclV2:BucketAclV2", *S3_OBJECTS)
# A bucket's object ownership: anything but BucketOwnerEnforced turns its ACLs back on.
S3_OWNERSHIP_CONTROLS = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
S3_PUBLIC_ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
# The engine's own types: a stack, and a reference to another stack's outputs.
STACK, STACK_REFERENCE = CLIENT_STACK, CLIENT_STACK_REFERENCE
# Resources that launch EC2 instances from settings of their own; each keeps the instance metadata options
# in `metadataOptions` and its public-IP switch in `associatePublicIpAddress` (templates: per network
# interface). Auto Scaling groups, fleets and EKS node groups launch from one of these.
INSTANCE_LAUNCHERS = (LAUNCH_TEMPLATE, EC2_INSTANCE, SPOT_INSTANCE_REQUEST, LAUNCH_CONFIGURATION)
# Kubernetes kinds whose pod template is at spec.template.spec.
K8S_WORKLOADS = (
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:batch/v1:Job",
    "kubernetes:apps/v1:ReplicaSet",
    "kubernetes:core/v1:ReplicationController",
)
K8S_POD = "kubernetes:core/v1:Pod"
K8S_CRON_JOB = "kubernetes:batch/v1:CronJob"
# Every kind that runs pods of its own (`pod_spec` finds the pod in each).
POD_CARRIERS = (*K8S_WORKLOADS, K8S_POD, K8S_CRON_JOB)

# Inputs that hold an IAM policy document, and what kind of document it is: a trust policy (who may
# assume a role), an identity policy (what a role may do), or a resource policy (who may use a key,
# endpoint, bucket, queue or topic; an endpoint policy only narrows what identity policies allow).
POLICY_DOCUMENTS = {
    IAM_ROLE: ("assumeRolePolicy", "trust"),
    "aws:iam/rolePolicy:RolePolicy": ("policy", "identity"),
    "aws:iam/policy:Policy": ("policy", "identity"),
    "aws:iam/userPolicy:UserPolicy": ("policy", "identity"),
    "aws:iam/groupPolicy:GroupPolicy": ("policy", "identity"),
    KMS_KEY: ("policy", "resource"),
    **{key: ("policy", "resource") for key in (*KMS_EXTERNAL_KEYS, KMS_REPLICA_KEY)},
    VPC_ENDPOINT: ("policy", "endpoint"),
    S3_BUCKET_POLICY: ("policy", "resource"),
    "aws:sqs/queuePolicy:QueuePolicy": ("policy", "resource"),
    "aws:sns/topicPolicy:TopicPolicy": ("policy", "resource"),
    "aws:kms/keyPolicy:KeyPolicy": ("policy", "resource"),
    "aws:ecr/repositoryPolicy:RepositoryPolicy": ("policy", "resource"),
    "aws:ecr/registryPolicy:RegistryPolicy": ("policy", "resource"),
    "aws:secretsmanager/secretPolicy:SecretPolicy": ("policy", "resource"),
    "aws:ec2/vpcEndpointPolicy:VpcEndpointPolicy": ("policy", "endpoint"),
    "aws:efs/fileSystemPolicy:FileSystemPolicy": ("policy", "resource"),
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": ("policyDocument", "resource"),
    "aws:cloudwatch/eventBusPolicy:EventBusPolicy": ("policy", "resource"),
    # The same documents given inline on the resource itself.
    "aws:s3/bucket:Bucket": ("policy", "resource"),
    "aws:sqs/queue:Queue": ("policy", "resource"),
    "aws:sns/topic:Topic": ("policy", "resource"),
    "aws:secretsmanager/secret:Secret": ("policy", "resource"),
}
# A Lambda permission is one resource-policy statement spelled as inputs (principal, sourceArn, ...).
LAMBDA_PERMISSION = "aws:lambda/permission:Permission"

# AWS resources that take tags although a plan may omit them (then they are untagged).
TAGGABLE_WITHOUT_TAGS_INPUT = (
    EBS_VOLUME,
    EC2_INSTANCE,
    VPC,
    NAT_GATEWAY,
    LOAD_BALANCER,
    KMS_KEY,
    LAUNCH_TEMPLATE,
    "aws:ec2/subnet:Subnet",
    "aws:s3/bucket:Bucket",
    "aws:eks/cluster:Cluster",
    *KMS_EXTERNAL_KEYS,
    KMS_REPLICA_KEY,
    CAPACITY_RESERVATION,
    EC2_FLEET,
    SPOT_FLEET,
    SPOT_INSTANCE_REQUEST,
    BATCH_COMPUTE_ENVIRONMENT,
    ELASTIC_IP,
)

# Terraform resource types whose names do not follow the provider's rule (see seedance/tfplan.py).
TERRAFORM_TYPES = {
    LOAD_BALANCER: "aws_lb",
    "aws:s3/bucket:Bucket": "aws_s3_bucket",
}


# How a value not known until the resource exists appears: the engine's sentinels (by the kind the policy
# SDK names in its messages, pulumi_policy/proxy.py), or as a plan file writes it.
UNKNOWN_KINDS = {
    "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7": "boolean",
    "3eeb2bf0-c639-47a8-9e75-3b44932eb421": "number",
    "04da6b54-80e4-46f7-96ec-b56ff0331ba9": "string",
    "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2": "Array",
    "030794c1-ac77-496b-92df-f27374a8bd58": "asset",
    "e48ece36-62e2-4504-bad9-02848725956a": "archive",
    "dd056dcd-154b-4c76-9bd3-c8f88648b5ff": "Object",
    "(unknown)": "unknown",
}
UNKNOWN_VALUES = frozenset(UNKNOWN_KINDS)


def is_unknown(value: Any) -> bool:
    return isinstance(value, str) and value in UNKNOWN_VALUES


# How a plan file writes a secret value it was not asked to show (`seedance plan --json` without
# `--show-secrets`): the value is gone, so nothing can be compared with it.
MASK = "[secret]"


def holds_masked(value: Any) -> bool:
    if isinstance(value, dict):
        return any(holds_masked(v) for v in value.values())
    if isinstance(value, list):
        return any(holds_masked(v) for v in value)
    return isinstance(value, str) and value == MASK


# How the engine wraps a secret value on the wire (and in plan files): {SIG: SECRET, "value": ...}.
_SECRET_SIGNATURE = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")


def reveal_secrets(value: Any) -> Any:
    """The value with every wire-format secret wrapper replaced by what it wraps: policies judge the
    value (a secret tag is still a tag); they never print it."""
    if isinstance(value, dict):
        if value.get(_SECRET_SIGNATURE[0]) == _SECRET_SIGNATURE[1]:
            return reveal_secrets(value.get("value"))
        return {k: reveal_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal_secrets(v) for v in value]
    return value


@dataclass(frozen=True)
class PlanResource:
    """A resource as a plan, a plan file or a policy engine sees it: type, URN and camelCase inputs."""

    urn: str
    type: str
    name: str
    props: dict[str, Any]
    parent: str | None = None
    dependencies: tuple[str, ...] = field(default=())
    id: str | None = None  # the physical id, when the plan knows it (offline plans do)


def listed(value: Any) -> list[Any]:
    """A value a document may give as one item or a list of them (IAM's elements; a block, which Terraform's
    plans write as a list), as a list."""
    return value if isinstance(value, list) else [value]


def tags_of(resource: PlanResource) -> dict[Any, Any] | None:
    """The resource's tags as a map (ASGs tag with a list), as the plan writes them; None when it has no
    `tags` input."""
    tags = resource.props.get("tags")
    if isinstance(tags, list):
        return {t.get("key"): t.get("value") for t in tags if isinstance(t, dict)}
    return tags if isinstance(tags, dict) else None


def public_ip_switches(resource: PlanResource) -> list[Any]:
    """Every `associatePublicIpAddress` an instance launcher sets (absent: the subnet decides)."""
    props = resource.props
    switches = [props["associatePublicIpAddress"]] if "associatePublicIpAddress" in props else []
    return switches + [
        i["associatePublicIpAddress"] for i in props.get("networkInterfaces") or [] if "associatePublicIpAddress" in i
    ]


def pod_spec(resource: PlanResource) -> dict[str, Any] | None:
    """The pod a workload runs: a Pod's own spec, a CronJob's job template's, or the template's."""
    if resource.type == K8S_POD:
        return resource.props.get("spec")
    if resource.type == K8S_CRON_JOB:
        job = ((resource.props.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}
        return (job.get("template") or {}).get("spec")
    if resource.type not in K8S_WORKLOADS:
        return None
    return ((resource.props.get("spec") or {}).get("template") or {}).get("spec")


def requests_gpu(resource: PlanResource) -> bool:
    spec = pod_spec(resource) or {}
    return any("nvidia.com/gpu" in ((c.get("resources") or {}).get("limits") or {}) for c in spec.get("containers", []))
