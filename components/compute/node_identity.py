"""`PoolIdentity`: the admission policy that ties each pool's labels and taint to its nodes' IAM role
(components/compute/pool_identity.py says why)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.common.k8s_objects import declare
from components.compute.pool_identity import pool_identity_policy


class PoolIdentity(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        pools: dict[str, tuple[pulumi.Input[str], str]],
        *,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`pools`: pool name -> (its node role ARN, its workload class)."""
        super().__init__("seedance:compute:PoolIdentity", name, None, opts)
        names = sorted(pools)
        # The role ARNs exist once the roles do: the policy's spec waits for them, its kind does not.
        specs = pulumi.Output.all(*[pools[n][0] for n in names]).apply(
            lambda arns: [
                m["spec"] for m in pool_identity_policy({arn: (n, pools[n][1]) for n, arn in zip(names, arns)})
            ]
        )
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)

        def spec(index: int) -> pulumi.Output[Any]:
            return specs.apply(lambda s: s[index])

        for index, manifest in enumerate(pool_identity_policy({})):
            declare(
                {**manifest, "spec": spec(index)},
                f"{name}-{manifest['kind'].lower()}",
                in_cluster,
            )
        self.register_outputs({})
