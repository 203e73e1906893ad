"""`Cluster`: an EKS control plane from pulumi_aws primitives, its add-ons, system nodes and
the Kubernetes provider later components deploy through."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.cluster.access import AccessGrant, access_grants
from components.cluster.config import AddonName, ClusterConfig, SystemNodesConfig
from components.cluster.kubeconfig import render_kubeconfig
from components.common.iam import irsa_trust_policy, kms_volume_use_policy, service_assume_role_policy
from components.common.k8s_objects import declare
from components.compute.config import GpuSharingConfig
from components.compute.device_plugin import NvidiaDevicePlugin
from components.compute.labels import SYSTEM_NODE_SELECTOR, SYSTEM_TAINT
from components.compute.node_bootstrap import ClusterJoin
from components.compute.node_role import node_role
from components.compute.priority import priority_classes
from components.network.security_groups import https_from
from components.plan.resources import EXPECTED_GB_TAG

_POLICY = "arn:{partition}:iam::aws:policy/{name}"


class Cluster(pulumi.ComponentResource):
    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer_url: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    join: pulumi.Output[ClusterJoin]  # what a self-managed node needs to register
    node_security_group_id: pulumi.Output[str]
    ebs_csi_addon: aws.eks.Addon  # storage classes wait for the driver that serves them
    provider: k8s.Provider

    def __init__(
        self,
        name: str,
        config: ClusterConfig,
        *,
        cluster_name: str,
        region: str,
        subnet_ids: pulumi.Input[list[str]],
        kms_key_arn: pulumi.Input[str],
        tags: Mapping[str, str],
        gpu_sharing: Mapping[str, GpuSharingConfig] | None = None,
        deploy_path: list[pulumi.Resource] | None = None,
        deployer_arn: str,
        app_namespaces: list[str],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("seedance:cluster:Cluster", name, None, opts)
        self._name, self._tags = name, dict(tags)
        self._account_id, self._region = deployer_arn.split(":")[4], region  # the account deployed into
        self._partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        cluster = self._control_plane(config, cluster_name, subnet_ids, kms_key_arn)
        # The provider types a cluster's identity and security group optional; EKS always reports them.
        issuer = cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)  # type: ignore[index]
        oidc = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=issuer,
            client_id_lists=["sts.amazonaws.com"],
            tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        access = self._access(access_grants(config, deployer_arn, app_namespaces), cluster)
        addons, system_nodes = self._addons_and_system_nodes(config, cluster, oidc, issuer, subnet_ids, kms_key_arn)

        # The private endpoint answers on the cluster security group: the deployer needs 443 through it.
        cluster_security_group = cast(
            "pulumi.Output[str]", cluster.vpc_config.apply(lambda vpc: vpc.cluster_security_group_id)
        )
        deployer_rules = [
            https_from(
                f"{name}-api-from-deployer-{index}",
                cluster_security_group,
                cidr,
                "Kubernetes API from the network pulumi up runs in",
                self._tags,
                pulumi.ResourceOptions(parent=self),
            )
            for index, cidr in enumerate(config.deployer_cidrs)
        ]
        ca_data = cluster.certificate_authority.apply(lambda ca: ca.data)
        kubeconfig: pulumi.Output[str] = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, cluster.endpoint, ca_data).apply(
                lambda v: json.dumps(render_kubeconfig(v[0], v[1], v[2], region))
            )
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=kubeconfig,
            # The API is reached over `deploy_path` (the routes back to the deployer) and the deployer rules.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[addons["coredns"], system_nodes, *deployer_rules, *(deploy_path or []), *access],
            ),
        )
        # Serving preempts batch; each pod names its class (components/compute/priority.py).
        self.priority_classes = [
            declare(
                manifest,
                f"{name}-{manifest['metadata']['name']}",
                pulumi.ResourceOptions(parent=self, provider=self.provider),
            )
            for manifest in priority_classes()
        ]
        # kube-system runs privileged node agents, so it cannot enforce a level; it audits and warns at
        # baseline, so a privileged pod someone adds there shows in the audit log (a server-side patch:
        # the namespace is the API server's, not the stack's).
        k8s.core.v1.NamespacePatch(
            f"{name}-kube-system-pod-security",
            metadata={
                "name": "kube-system",
                "labels": {f"pod-security.kubernetes.io/{mode}": "baseline" for mode in ("audit", "warn")},
            },
            opts=pulumi.ResourceOptions(parent=self, provider=self.provider),
        )
        NvidiaDevicePlugin(
            f"{name}-nvidia-device-plugin",
            chart_version=config.device_plugin_version,
            sharing=gpu_sharing,
            opts=pulumi.ResourceOptions(parent=self, provider=self.provider),
        )

        self.name = cluster.name
        self.endpoint = cluster.endpoint
        self.oidc_provider_arn = oidc.arn
        self.oidc_issuer_url = issuer
        self.kubeconfig = kubeconfig
        self.join = pulumi.Output.all(cluster.name, cluster.endpoint, ca_data).apply(
            lambda v: ClusterJoin(
                cluster_name=v[0], endpoint=v[1], certificate_authority=v[2], service_cidr=config.service_cidr
            )
        )
        self.node_security_group_id = cluster_security_group
        self.ebs_csi_addon = addons["aws-ebs-csi-driver"]
        self.register_outputs(
            {
                "name": self.name,
                "endpoint": self.endpoint,
                "oidc_provider_arn": self.oidc_provider_arn,
                "kubeconfig": self.kubeconfig,
            }
        )

    def _managed_policy(self, policy_name: str) -> pulumi.Output[str]:
        return self._partition.apply(lambda p: _POLICY.format(partition=p, name=policy_name))

    def _access_policy(self, policy: str) -> pulumi.Output[str]:
        return self._partition.apply(lambda p: f"arn:{p}:eks::aws:cluster-access-policy/{policy}")

    def _control_plane(
        self,
        config: ClusterConfig,
        cluster_name: str,
        subnet_ids: pulumi.Input[list[str]],
        kms_key_arn: pulumi.Input[str],
    ) -> aws.eks.Cluster:
        """The cluster role, the control-plane log group and the EKS cluster: private endpoint, API
        authentication, secrets encrypted with the stack key."""
        name, tags, child = self._name, self._tags, pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-cluster-role",
            assume_role_policy=self._partition.apply(
                lambda partition: json.dumps(
                    service_assume_role_policy(
                        "eks.amazonaws.com",
                        self._account_id,
                        f"arn:{partition}:eks:{self._region}:{self._account_id}:cluster/{cluster_name}",
                    )
                )
            ),
            tags=tags,
            opts=child,
        )
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=role.name,
            policy_arn=self._managed_policy("AmazonEKSClusterPolicy"),
            opts=child,
        )
        # Created before the cluster so EKS writes into a group with our retention and key.
        log_group = aws.cloudwatch.LogGroup(
            f"{name}-control-plane-logs",
            name=f"/aws/eks/{cluster_name}/cluster",
            retention_in_days=config.log_retention_days,
            kms_key_id=kms_key_arn,
            tags={**tags, EXPECTED_GB_TAG: f"{config.control_plane_log_gb_month:g}"},
            opts=child,
        )
        public_access = bool(config.public_endpoint_cidrs)
        return aws.eks.Cluster(
            f"{name}-eks",
            name=cluster_name,
            version=config.kubernetes_version,
            role_arn=role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=subnet_ids,
                endpoint_private_access=True,
                endpoint_public_access=public_access,
                public_access_cidrs=config.public_endpoint_cidrs or None,
            ),
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                # No hidden, permanent cluster-admin for whoever created the cluster: the deployer's access
                # is an entry of its own (`_access`), which the plan shows and a change can take away.
                bootstrap_cluster_creator_admin_permissions=False,
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                resources=["secrets"],
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=kms_key_arn),
            ),
            enabled_cluster_log_types=list(config.control_plane_logs),
            kubernetes_network_config=aws.eks.ClusterKubernetesNetworkConfigArgs(service_ipv4_cidr=config.service_cidr),
            # Add-ons are managed below as EKS add-ons, so EKS must not install unmanaged copies.
            bootstrap_self_managed_addons=False,
            tags=tags,
            # The flag only counts at creation, and changing it replaces the cluster: a cluster created with
            # it on keeps it (docs/security.md: delete its creator entry once the deployer's exists).
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[cluster_policy, log_group],
                ignore_changes=["accessConfig.bootstrapClusterCreatorAdminPermissions"],
            ),
        )

    def _access(self, grants: list[AccessGrant], cluster: aws.eks.Cluster) -> list[pulumi.Resource]:
        """An access entry per principal and an association per policy it is granted, at its scope."""
        associations: list[pulumi.Resource] = []
        for grant in grants:
            entry_name = f"{self._name}-{grant.name}"
            entry = aws.eks.AccessEntry(
                entry_name,
                cluster_name=cluster.name,
                principal_arn=grant.principal,
                type="STANDARD",
                tags=self._tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            for policy in grant.policies:
                scope = grant.scope(policy)
                associations.append(
                    aws.eks.AccessPolicyAssociation(
                        entry_name if policy == grant.policies[0] else f"{entry_name}-{policy}",
                        cluster_name=cluster.name,
                        principal_arn=grant.principal,
                        policy_arn=self._access_policy(policy),
                        access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(
                            type="namespace", namespaces=list(scope)
                        )
                        if scope
                        else aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                        # A new scope replaces the association, and both copies are one (principal, policy) to
                        # EKS: deleting the old one after creating the new would disassociate the policy.
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[entry], delete_before_replace=True),
                    )
                )
        return associations

    def _irsa_role(
        self,
        role_name: str,
        oidc: aws.iam.OpenIdConnectProvider,
        issuer: pulumi.Output[str],
        namespace: str,
        service_account: str,
    ) -> aws.iam.Role:
        trust = pulumi.Output.all(oidc.arn, issuer).apply(
            lambda v: json.dumps(irsa_trust_policy(v[0], v[1], namespace, service_account))
        )
        return aws.iam.Role(
            f"{self._name}-{role_name}",
            assume_role_policy=trust,
            tags=self._tags,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _addons_and_system_nodes(
        self,
        config: ClusterConfig,
        cluster: aws.eks.Cluster,
        oidc: aws.iam.OpenIdConnectProvider,
        issuer: pulumi.Output[str],
        subnet_ids: pulumi.Input[list[str]],
        kms_key_arn: pulumi.Input[str],
    ) -> tuple[dict[str, aws.eks.Addon], aws.eks.NodeGroup]:
        """The EKS add-ons (the CNI and the EBS CSI driver with their own IRSA roles) and the system
        nodes, in the order nodes need them."""
        name, tags, child = self._name, self._tags, pulumi.ResourceOptions(parent=self)
        # The VPC CNI gets its ENI permissions through IRSA, not through every node's role.
        cni_role = self._irsa_role("vpc-cni-role", oidc, issuer, "kube-system", "aws-node")
        aws.iam.RolePolicyAttachment(
            f"{name}-vpc-cni-policy",
            role=cni_role.name,
            policy_arn=self._managed_policy("AmazonEKS_CNI_Policy"),
            opts=child,
        )
        ebs_csi_role = self._irsa_role("ebs-csi-role", oidc, issuer, "kube-system", "ebs-csi-controller-sa")
        aws.iam.RolePolicyAttachment(
            f"{name}-ebs-csi-policy",
            role=ebs_csi_role.name,
            policy_arn=self._managed_policy("service-role/AmazonEBSCSIDriverPolicy"),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-ebs-csi-kms",
            role=ebs_csi_role.id,
            policy=pulumi.Output.from_input(kms_key_arn).apply(lambda arn: json.dumps(kms_volume_use_policy(arn))),
            opts=child,
        )

        def addon(
            addon_name: AddonName,
            *,
            depends_on: list[pulumi.Resource] | None = None,
            role_arn: pulumi.Input[str] | None = None,
            settings: dict | None = None,
        ) -> aws.eks.Addon:
            return aws.eks.Addon(
                f"{name}-{addon_name}",
                cluster_name=cluster.name,
                addon_name=addon_name,
                addon_version=config.addon_versions.get(addon_name),
                service_account_role_arn=role_arn,
                configuration_values=json.dumps(settings) if settings else None,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on or []),
            )

        # Networking add-ons come before any node so that nodes become Ready.
        # The CNI's network policy agent enforces the stack's NetworkPolicies (declared, not enforced, without it;
        # the add-on schema takes the flag as a string).
        vpc_cni = addon("vpc-cni", role_arn=cni_role.arn, settings={"enableNetworkPolicy": "true"})
        kube_proxy = addon("kube-proxy")
        pod_identity = addon("eks-pod-identity-agent")
        system_nodes = self._system_nodes(
            name,
            config.system_nodes,
            cluster,
            subnet_ids,
            kms_key_arn,
            tags,
            depends_on=[vpc_cni, kube_proxy, pod_identity],
        )
        # CoreDNS and the CSI controller are Deployments: they need the system nodes to schedule on.
        coredns = addon("coredns", depends_on=[system_nodes])
        ebs_csi = addon("aws-ebs-csi-driver", depends_on=[system_nodes], role_arn=ebs_csi_role.arn)
        return {
            "vpc-cni": vpc_cni,
            "kube-proxy": kube_proxy,
            "eks-pod-identity-agent": pod_identity,
            "coredns": coredns,
            "aws-ebs-csi-driver": ebs_csi,
        }, system_nodes

    def _system_nodes(
        self, name, config: SystemNodesConfig, cluster, subnet_ids, kms_key_arn, tags, depends_on
    ) -> aws.eks.NodeGroup:
        child = pulumi.ResourceOptions(parent=self)
        role, attachments = node_role(f"{name}-system", self, tags)
        template = aws.ec2.LaunchTemplate(
            f"{name}-system-nodes",
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
                http_endpoint="enabled",
                http_tokens="required",  # IMDSv2 only
                http_put_response_hop_limit=1,  # pods cannot reach the node's credentials
            ),
            block_device_mappings=[
                aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                    device_name="/dev/xvda",
                    ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                        volume_type="gp3",
                        volume_size=config.disk_size_gib,
                        encrypted="true",
                        kms_key_id=kms_key_arn,
                        delete_on_termination="true",
                    ),
                )
            ],
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags)
                for kind in ("instance", "volume")
            ],
            tags=tags,
            opts=child,
        )
        return aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=cluster.name,
            node_role_arn=role.arn,
            subnet_ids=subnet_ids,
            ami_type="AL2023_x86_64_STANDARD",
            capacity_type="ON_DEMAND",
            instance_types=config.instance_types,
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=config.min_size, desired_size=config.desired_size, max_size=config.max_size
            ),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            labels=SYSTEM_NODE_SELECTOR,
            # Only the platform's add-ons run here (they tolerate it), never a team's pods.
            taints=[
                aws.eks.NodeGroupTaintArgs(key=SYSTEM_TAINT["key"], value=SYSTEM_TAINT["value"], effect="NO_SCHEDULE")
            ],
            tags=tags,
            # The cluster autoscaler owns the desired size once the group exists.
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*attachments, *depends_on], ignore_changes=["scalingConfig.desiredSize"]
            ),
        )
