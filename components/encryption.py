"""`StackKey`: the customer-managed KMS key that encrypts the stack's secrets, volumes and logs."""

from __future__ import annotations

import json
from typing import Mapping

import pulumi
import pulumi_aws as aws

from components.iam_documents import stack_key_policy


class StackKey(pulumi.ComponentResource):
    key_arn: pulumi.Output[str]
    key_id: pulumi.Output[str]

    def __init__(self, name: str, *, region: str, tags: Mapping[str, str],
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:encryption:StackKey", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
        policy = pulumi.Output.all(partition.partition, identity.account_id).apply(
            lambda values: json.dumps(stack_key_policy(values[0], values[1], region))
        )
        key = aws.kms.Key(
            f"{name}-key",
            description=f"{name}: EKS secrets, EBS volumes and logs",
            enable_key_rotation=True,
            deletion_window_in_days=30,  # the maximum: a deleted key makes every volume unreadable
            policy=policy,
            tags=dict(tags),
            opts=child,
        )
        aws.kms.Alias(f"{name}-alias", name=f"alias/{name}", target_key_id=key.key_id, opts=child)
        self.key_arn = key.arn
        self.key_id = key.key_id
        self.register_outputs({"key_arn": self.key_arn, "key_id": self.key_id})
