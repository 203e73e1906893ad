"""Each stack exports exactly the platform contract, with the declared types."""

import pytest

from components.contract.contract import (CONTRACT_VERSION, ContractVersionError, PlatformContract,
                                          check_compatible)
from seedance.engine import Secret


def test_outputs_are_exactly_the_contract(stack_plan):
    outputs = stack_plan.outputs
    assert set(outputs) == set(PlatformContract.model_fields)
    assert isinstance(outputs["kubeconfig"], Secret)
    contract = PlatformContract.model_validate({**outputs, "kubeconfig": outputs["kubeconfig"].value})
    assert contract.contract_version == CONTRACT_VERSION
    assert [p.name for p in contract.gpu_pools] == ["batch", "online"]
    assert contract.pool("online").node_selector == {"seedance.io/workload-class": "online",
                                                      "seedance.io/node-group": "online"}
    assert contract.pool("online").tolerations[0]["key"] == "nvidia.com/gpu"
    assert contract.storage_classes.checkpoint == "checkpoints" and contract.storage_classes.local == "local-nvme"
    assert contract.triton_endpoints["video"].grpc.endswith(":8001")
    assert {"s3_gateway", "kms"} <= set(contract.endpoint_ids)


@pytest.mark.parametrize("producer, consumer, ok", [
    ("1.0", "1.0", True), ("1.3", "1.1", True), ("1.0", "1.1", False), ("2.0", "1.0", False), ("x", "1.0", False),
])
def test_version_compatibility(producer, consumer, ok):
    if ok:
        check_compatible(producer, consumer)
    else:
        with pytest.raises(ContractVersionError):
            check_compatible(producer, consumer)
