"""The IAM role EC2 worker nodes run as: only the managed policies a node needs.

The VPC CNI's permissions are not here: it runs with its own IRSA role.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.common.iam import service_assume_role_policy

NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")


def node_role(
    name: str, parent: pulumi.Resource, tags: Mapping[str, str]
) -> tuple[aws.iam.Role, list[pulumi.Resource]]:
    """The role and its policy attachments (nodes must wait for the attachments)."""
    child = pulumi.ResourceOptions(parent=parent)
    partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=parent)).partition
    role = aws.iam.Role(
        f"{name}-node-role",
        assume_role_policy=json.dumps(service_assume_role_policy("ec2.amazonaws.com")),
        tags=dict(tags),
        opts=child,
    )

    def policy_arn(policy: str) -> pulumi.Output[str]:
        return partition.apply(lambda p: f"arn:{p}:iam::aws:policy/{policy}")

    attachments: list[pulumi.Resource] = [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy.lower()}", role=role.name, policy_arn=policy_arn(policy), opts=child
        )
        for policy in NODE_POLICIES
    ]
    return role, attachments
