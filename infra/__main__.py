"""seedance-gpu: GPU training and inference on EKS. Run with `pulumi up` or `seedance plan`."""

import pulumi
import pulumi_aws as aws

from components.cluster import Cluster
from components.encryption import StackKey
from components.network import Network
from infra.config import load_from_pulumi

# Validate everything first: a bad value stops the run before any resource is declared.
config = load_from_pulumi()
zones = config.usable_zones(aws.get_availability_zones(state="available").names)
tags = config.resource_tags
name = config.cluster_name

key = StackKey(name, region=config.region, tags=tags)
network = Network(name, config.network, zones=zones, cluster_name=name, tags=tags)
cluster = Cluster(
    name,
    config.cluster,
    cluster_name=name,
    region=config.region,
    subnet_ids=network.private_subnet_ids,
    kms_key_arn=key.key_arn,
    tags=tags,
)

pulumi.export("region", config.region)
pulumi.export("vpc_id", network.vpc_id)
pulumi.export("private_subnet_ids", network.private_subnet_ids)
pulumi.export("cluster_name", cluster.name)
pulumi.export("cluster_endpoint", cluster.endpoint)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("oidc_provider_arn", cluster.oidc_provider_arn)
pulumi.export("kms_key_arn", key.key_arn)
