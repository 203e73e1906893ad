"""`PlatformReference`: how an application team's Pulumi program reads a seedance stack.

    platform = PlatformReference("my-org/seedance-gpu/prod")
    batch = platform.pool("batch")            # Output[GpuPool]: node selector, tolerations, GPUs per node
    provider = k8s.Provider("platform", kubeconfig=platform.kubeconfig)

The producer's contract version is checked first; an incompatible one stops the program with one
line that says what to do.
"""

from __future__ import annotations

from typing import Any

import pulumi

from seedance_client.contract import (
    CONTRACT_VERSION,
    SECRET_FIELDS,
    ContractVersionError,
    GpuPool,
    PlatformContract,
    read_contract,
)


class IncompatiblePlatform(pulumi.RunError):
    """The platform stack's contract cannot serve this program (printed as one line, no traceback)."""


def parse_contract(values: dict[str, Any], stack: str, requires: str = CONTRACT_VERSION) -> PlatformContract:
    try:
        return read_contract(values, stack, requires)
    except ContractVersionError as error:
        raise IncompatiblePlatform(str(error)) from None


class PlatformReference:
    contract: pulumi.Output[PlatformContract]
    kubeconfig: pulumi.Output[str]

    def __init__(self, stack: str, *, requires: str = CONTRACT_VERSION, opts: pulumi.ResourceOptions | None = None):
        reference = pulumi.StackReference(stack, opts=opts)
        fields = [name for name in PlatformContract.model_fields if name not in SECRET_FIELDS]
        self.contract = pulumi.Output.all(*[reference.get_output(name) for name in fields]).apply(
            lambda values: parse_contract(dict(zip(fields, values)), stack, requires)
        )
        # Waits for the contract, so a version mismatch is reported before anything uses the cluster.
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.contract, reference.require_output("kubeconfig")).apply(lambda v: v[1])
        )

    def pool(self, name: str) -> pulumi.Output[GpuPool]:
        return self.contract.apply(lambda contract: _pool(contract, name))


def _pool(contract: PlatformContract, name: str) -> GpuPool:
    try:
        return contract.pool(name)
    except KeyError as error:  # a program's mistake, said in one line: no traceback of the SDK's internals
        raise IncompatiblePlatform(error.args[0]) from None
