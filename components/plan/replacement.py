"""Which input changes make the provider replace a resource (delete and create) instead of updating it
in place, and which it cannot make at all. Pure.

A bridged AWS resource is replaced when an attribute its Terraform schema marks `ForceNew` (SDKv2) or
`RequiresReplace` (framework) changes; a Kubernetes object when its name or namespace changes or a
field in pulumi-kubernetes's force-new table does; a tls key, request or certificate on any input but
its renewal window. The offline machine has no provider plugin to ask, so the table holds the types
this project declares; `replaced_by` returns None for any other, and `seedance diff` says it cannot tell.
Checked against terraform-provider-aws `internal/service/<service>/<resource>.go` (group.go,
ec2_launch_template.go, eks/cluster.go, vpc and subnet, ebs_volume.go, iam role, kms key, ...; the
route, S3 sub-resource, SQS, SNS topic, EventBridge and Budgets entries from the resources' docs),
pulumi-kubernetes `provider/pkg/provider/diff.go` and helm_release.go, terraform-provider-tls
`internal/provider/resource_*.go`.
"""

from __future__ import annotations

_AWS: dict[str, tuple[str, ...]] = {
    "aws:autoscaling/group:Group": ("name", "namePrefix", "initialLifecycleHooks"),
    "aws:autoscaling/lifecycleHook:LifecycleHook": ("name",),
    "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix"),
    "aws:eks/cluster:Cluster": ("name", "roleArn", "kubernetesNetworkConfig.ipFamily",
                                "kubernetesNetworkConfig.serviceIpv4Cidr", "outpostConfig", "remoteNetworkConfig",
                                "bootstrapSelfManagedAddons", "accessConfig.bootstrapClusterCreatorAdminPermissions"),
    "aws:eks/nodeGroup:NodeGroup": ("clusterName", "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "subnetIds",
                                    "amiType", "capacityType", "diskSize", "instanceTypes", "remoteAccess",
                                    "launchTemplate.id", "launchTemplate.name"),
    "aws:eks/addon:Addon": ("clusterName", "addonName"),
    "aws:eks/accessEntry:AccessEntry": ("clusterName", "principalArn", "type"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ("clusterName", "principalArn", "policyArn",
                                                                "accessScope"),
    "aws:ec2/vpc:Vpc": ("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"),
    "aws:ec2/subnet:Subnet": ("vpcId", "cidrBlock", "availabilityZone", "availabilityZoneId", "outpostArn",
                              "ipv4IpamPoolId", "ipv4NetmaskLength", "ipv6IpamPoolId", "ipv6NetmaskLength", "ipv6Native"),
    "aws:ec2/routeTable:RouteTable": ("vpcId",),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ("subnetId", "gatewayId"),
    "aws:ec2/route:Route": ("routeTableId", "destinationCidrBlock", "destinationIpv6CidrBlock",
                            "destinationPrefixListId"),
    "aws:ec2/natGateway:NatGateway": ("allocationId", "subnetId", "connectivityType", "privateIp",
                                      "secondaryPrivateIpAddressCount"),
    "aws:ec2/eip:Eip": ("domain", "networkBorderGroup", "publicIpv4Pool", "address", "ipamPoolId"),
    "aws:ec2/securityGroup:SecurityGroup": ("name", "namePrefix", "vpcId", "description"),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ("securityGroupId",),
    "aws:ec2/vpcEndpoint:VpcEndpoint": ("vpcId", "serviceName", "vpcEndpointType", "serviceRegion",
                                        "resourceConfigurationArn", "serviceNetworkArn", "dnsOptions.privateDnsPreference",
                                        "dnsOptions.privateDnsSpecifiedDomains"),
    "aws:ec2/flowLog:FlowLog": ("vpcId", "subnetId", "eniId", "transitGatewayId", "transitGatewayAttachmentId",
                                "trafficType", "logDestination", "logDestinationType", "iamRoleArn", "logFormat",
                                "maxAggregationInterval", "destinationOptions", "deliverCrossAccountRole"),
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": ("vpcId",),
    "aws:ec2transitgateway/vpcAttachment:VpcAttachment": ("transitGatewayId", "vpcId"),
    "aws:iam/role:Role": ("name", "namePrefix", "path"),
    "aws:iam/rolePolicy:RolePolicy": ("name", "namePrefix", "role"),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ("role", "policyArn"),
    "aws:iam/instanceProfile:InstanceProfile": ("name", "namePrefix", "path"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": ("url",),
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": ("awsServiceName", "customSuffix"),
    "aws:kms/key:Key": ("customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"),
    "aws:kms/alias:Alias": ("name", "namePrefix"),
    "aws:s3/bucket:Bucket": ("bucket", "bucketPrefix", "objectLockEnabled"),
    "aws:s3/bucketPolicy:BucketPolicy": ("bucket",),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ("bucket",),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "bucket", "expectedBucketOwner"),
    "aws:s3/bucketVersioning:BucketVersioning": ("bucket", "expectedBucketOwner"),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ("bucket", "expectedBucketOwner"),
    "aws:s3/bucketObjectv2:BucketObjectv2": ("bucket", "key"),
    "aws:sqs/queue:Queue": ("name", "namePrefix", "fifoQueue"),
    "aws:sqs/queuePolicy:QueuePolicy": ("queueUrl",),
    "aws:sns/topic:Topic": ("name", "namePrefix", "fifoTopic"),
    "aws:sns/topicPolicy:TopicPolicy": ("arn",),
    "aws:sns/topicSubscription:TopicSubscription": ("topicArn", "protocol", "endpoint"),
    "aws:cloudwatch/eventRule:EventRule": ("name", "namePrefix", "eventBusName"),
    "aws:cloudwatch/eventTarget:EventTarget": ("rule", "targetId", "eventBusName"),
    "aws:cloudwatch/logGroup:LogGroup": ("name", "namePrefix", "logGroupClass"),
    "aws:budgets/budget:Budget": ("name", "namePrefix", "accountId"),
    "aws:ebs/volume:Volume": ("availabilityZone", "encrypted", "kmsKeyId", "snapshotId", "outpostArn",
                              "multiAttachEnabled"),
}

# pulumi-kubernetes (provider/pkg/provider/diff.go `forceNew`): every kind is replaced when its name or
# namespace changes; these kinds add their own paths. ConfigMap and Secret data count because the
# provider's default (enableConfigMapMutable / enableSecretMutable off) replaces them on any change.
_K8S_METADATA = ("metadata.name", "metadata.namespace")
_PV_SOURCES = tuple(f"spec.{source}" for source in ("awsElasticBlockStore", "csi", "hostPath", "local", "nfs"))
_K8S_KINDS: dict[str, tuple[str, ...]] = {
    "apps/v1:Deployment": ("spec.selector",),
    "apps/v1:DaemonSet": ("spec.selector",),
    "apps/v1:StatefulSet": ("spec.selector", "spec.podManagementPolicy", "spec.revisionHistoryLimit",
                            "spec.serviceName", "spec.volumeClaimTemplates"),
    "batch/v1:Job": ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
    "core/v1:ConfigMap": ("binaryData", "data"),
    "core/v1:Secret": ("type", "data", "stringData"),
    "core/v1:PersistentVolume": _PV_SOURCES,
    "core/v1:PersistentVolumeClaim": ("spec.accessModes", "spec.selector", "spec.storageClassName",
                                      "spec.volumeName"),
    "core/v1:ResourceQuota": ("spec.scopes",),
    "core/v1:Service": ("spec.clusterIP",),
    "storage.k8s.io/v1:StorageClass": ("parameters", "provisioner"),
    "rbac.authorization.k8s.io/v1:ClusterRoleBinding": ("roleRef",),
    "rbac.authorization.k8s.io/v1:RoleBinding": ("roleRef",),
}
# Fields the API server refuses to change that the provider does not replace on: such an update fails at
# `pulumi up` (the resource needs `replace_on_changes`, or a new name).
_K8S_IMMUTABLE: dict[str, tuple[str, ...]] = {
    "storage.k8s.io/v1:StorageClass": ("reclaimPolicy", "volumeBindingMode"),
    "scheduling.k8s.io/v1:PriorityClass": ("value",),
}
# terraform-provider-tls: every input but the renewal window replaces a key, request or certificate.
_TLS_IN_PLACE = ("earlyRenewalHours",)


def _matching(changed: list[str], paths: tuple[str, ...]) -> list[str]:
    return [c for c in changed if any(c == p or c.startswith(p + ".") or p.startswith(c + ".") for p in paths)]


def replaced_by(type_token: str, changed: list[str]) -> list[str] | None:
    """The changed input paths that make the provider replace the resource (empty: an update in place);
    None when the table does not know the type."""
    if type_token.startswith("tls:"):
        return [c for c in changed if c not in _TLS_IN_PLACE]
    if type_token.startswith("kubernetes:"):
        kind = type_token.split(":", 1)[1]
        if kind == "helm.sh/v3:Release":
            return _matching(changed, ("name", "namespace"))
        return _matching(changed, _K8S_METADATA + _K8S_KINDS.get(kind, ()))
    paths = _AWS.get(type_token)
    return None if paths is None else _matching(changed, paths)


def refused_changes(type_token: str, changed: list[str]) -> list[str]:
    """Changed paths the API server refuses to update and the provider does not replace on."""
    kind = type_token.split(":", 1)[1] if type_token.startswith("kubernetes:") else ""
    return _matching(changed, _K8S_IMMUTABLE.get(kind, ()))
