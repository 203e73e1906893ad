"""`StackKey`: the customer-managed KMS key that encrypts the stack's secrets, volumes and logs."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.common.iam import AUTOSCALING_ROLE_NAME, AUTOSCALING_ROLE_PATH, AUTOSCALING_SERVICE, stack_key_policy


class StackKey(pulumi.ComponentResource):
    key_arn: pulumi.Output[str]
    key_id: pulumi.Output[str]

    def __init__(self, name: str, *, region: str, tags: Mapping[str, str], opts: pulumi.ResourceOptions | None = None):
        super().__init__("seedance:encryption:StackKey", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
        autoscaling_role = self._autoscaling_role(name, tags)
        policy = pulumi.Output.all(partition.partition, identity.account_id, autoscaling_role).apply(
            lambda values: json.dumps(stack_key_policy(values[0], values[1], region, values[2]))
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

    def _autoscaling_role(self, name: str, tags: Mapping[str, str]) -> pulumi.Output[str]:
        """The ARN of the account's Auto Scaling service-linked role, created when the account has none.

        A fresh account gets that role only with its first Auto Scaling group, and KMS rejects a key
        policy naming it before then (MalformedPolicyDocumentException). The created role belongs to
        the account, not the stack: it is retained on destroy, and once it exists later runs find it
        and simply stop declaring it (retained, so nothing is deleted).
        """
        found = aws.iam.get_roles(
            path_prefix=AUTOSCALING_ROLE_PATH,
            name_regex=f"^{AUTOSCALING_ROLE_NAME}$",
            opts=pulumi.InvokeOptions(parent=self),
        )
        if found.arns:
            return pulumi.Output.from_input(sorted(found.arns)[0])
        role = aws.iam.ServiceLinkedRole(
            f"{name}-autoscaling-service-role",
            aws_service_name=AUTOSCALING_SERVICE,
            tags=dict(tags),
            opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
        )
        return role.arn
