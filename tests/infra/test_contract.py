"""Each stack exports exactly the platform contract, with the declared types."""

import pytest

from seedance_client.contract import CONTRACT_VERSION, ContractVersionError, PlatformContract, check_compatible
from seedance_client.engine import Secret
from tests.stacks import stack_config


def test_outputs_are_exactly_the_contract(stack_plan):
    outputs = stack_plan.outputs
    assert set(outputs) == set(PlatformContract.model_fields)
    assert isinstance(outputs["kubeconfig"], Secret)
    contract = PlatformContract.model_validate({**outputs, "kubeconfig": outputs["kubeconfig"].value})
    assert contract.contract_version == CONTRACT_VERSION
    assert [p.name for p in contract.gpu_pools] == [g.name for g in stack_config(stack_plan.stack).gpu_node_groups]
    assert contract.pool("online").node_selector == {
        "seedance.io/workload-class": "online",
        "seedance.io/node-group": "online",
    }
    assert contract.pool("online").tolerations[0]["key"] == "nvidia.com/gpu"
    assert contract.storage_classes.checkpoint == "checkpoints" and contract.storage_classes.local == "local-nvme"
    assert contract.triton_endpoints["video"].grpc.endswith(":8001")
    assert {"s3_gateway", "kms"} <= set(contract.endpoint_ids)


@pytest.mark.parametrize(
    "producer, consumer, ok",
    [
        ("1.0", "1.0", True),
        ("1.3", "1.1", True),
        ("1.0", "1.1", False),
        ("2.0", "1.0", False),
        ("x", "1.0", False),
    ],
)
def test_version_compatibility(producer, consumer, ok):
    if ok:
        check_compatible(producer, consumer)
    else:
        with pytest.raises(ContractVersionError):
            check_compatible(producer, consumer)


def _outputs(plan):
    outputs = dict(plan.outputs)
    outputs["kubeconfig"] = outputs["kubeconfig"].value
    return outputs


def test_a_consumer_ignores_what_a_newer_producer_adds(plan_of):
    """A newer producer (the next minor): fields it adds at every level are ignored, not refused."""
    from seedance_client.reference import parse_contract

    outputs = _outputs(plan_of("prod"))
    newer = {
        **outputs,
        "contract_version": f"{CONTRACT_VERSION.split('.')[0]}.{int(CONTRACT_VERSION.split('.')[1]) + 1}",
        "regions_served": [{"name": "eu"}],
        "gpu_pools": [{**pool, "interconnect": "nvlink"} for pool in outputs["gpu_pools"]],
        "triton_endpoints": {k: {**v, "shard": 1} for k, v in outputs["triton_endpoints"].items()},
    }
    contract = parse_contract(newer, "my-org/seedance-gpu/prod")
    assert contract.pool("batch").gpu_models and contract.triton_endpoints["video"].publisher_role_arn


def test_a_consumer_asking_for_1_0_reads_a_1_0_producer_and_one_asking_more_is_told(plan_of):
    from seedance_client.reference import IncompatiblePlatform, parse_contract

    outputs = _outputs(plan_of("prod"))
    older = {key: value for key, value in outputs.items() if key not in ("checkpoint_claims", "cost_label_keys")}
    older["contract_version"] = "1.0"
    older["gpu_pools"] = [
        {k: v for k, v in pool.items() if k not in ("gpu_models", "gpu_memory_gib")} for pool in outputs["gpu_pools"]
    ]
    older["triton_endpoints"] = {
        k: {f: v[f] for f in ("http", "grpc", "metrics")} for k, v in outputs["triton_endpoints"].items()
    }
    contract = parse_contract(older, "org/seedance-gpu/prod", requires="1.0")
    assert contract.checkpoint_claims == [] and contract.triton_endpoints["video"].publisher_role_arn is None
    with pytest.raises(
        IncompatiblePlatform,
        match=r"^org/seedance-gpu/prod: .*exports contract 1.0; this program "
        rf"needs {CONTRACT_VERSION}",
    ):
        parse_contract(older, "org/seedance-gpu/prod")


def test_what_teams_need_is_in_the_contract(plan_of):
    outputs = _outputs(plan_of("prod"))
    contract = PlatformContract.model_validate(outputs)
    video = contract.triton_endpoints["video"]
    assert video.namespace == "triton-video" and video.client_namespaces == ["video-api"]
    assert video.model_repository == f"s3://{contract.model_repository_bucket}/seedance/video"
    assert video.publisher_role_arn.endswith(":role/seedance-prod-triton-video-publisher")
    assert {c.name for c in contract.checkpoint_claims} == {"checkpoints-0", "checkpoints-1"}
    assert all(c.zone == "us-east-1a" and c.size_gib == 64 for c in contract.checkpoint_claims)
    online = contract.pool("online")
    assert set(online.gpu_models) == set(online.instance_types) == set(online.gpu_memory_gib)
    assert online.gpu_models["g6.xlarge"] == "L4" and online.gpu_memory_gib["g6.xlarge"] == 24
    assert contract.cost_label_keys == ["team", "cost-center", "env", "app.kubernetes.io/name"]


def _read_through_a_stack_reference(outputs: dict, requires: str):
    """The contract as a team's program reads it: PlatformReference over a StackReference, under Pulumi's
    mock runtime (a missing output comes back as None, as it does from the engine)."""
    import pulumi

    from seedance_client.reference import PlatformReference

    class Producer(pulumi.runtime.Mocks):
        def new_resource(self, args):
            assert args.typ == "pulumi:pulumi:StackReference"
            return f"{args.name}-id", {"name": args.name, "outputs": outputs, "secretOutputNames": ["kubeconfig"]}

        def call(self, args):
            return {}

    pulumi.runtime.set_mocks(Producer(), project="team", stack="dev", preview=False)
    found: dict[str, PlatformContract] = {}

    @pulumi.runtime.test
    def read():
        reference = PlatformReference("org/seedance-gpu/prod", requires=requires)
        return reference.contract.apply(lambda contract: found.setdefault("contract", contract))

    read()
    return found["contract"]


@pytest.mark.parametrize(
    "producer, requires",
    [("1.0", "1.0"), ("1.1", "1.0"), ("1.2", "1.2"), ("1.3", "1.3"), ("1.4", "1.4"), ("1.5", "1.4")],
)
def test_the_current_client_reads_older_current_and_newer_producers_through_a_stack_reference(
    plan_of, producer, requires
):
    outputs = {**_outputs(plan_of("prod")), "contract_version": producer}
    if producer == "1.0":  # a 1.0 stack exports none of 1.1's fields
        for field in ("checkpoint_claims", "tenants", "priority_classes", "cost_label_keys"):
            outputs.pop(field)
    if producer in ("1.0", "1.1"):  # nor 1.2's pool zones
        outputs["gpu_pools"] = [{k: v for k, v in pool.items() if k != "zones"} for pool in outputs["gpu_pools"]]
    if producer in ("1.0", "1.1", "1.2"):  # nor 1.3's claim prices
        outputs["storage_classes"] = {k: v for k, v in outputs["storage_classes"].items() if k != "claim_prices"}
    if producer in ("1.0", "1.1", "1.2", "1.3"):  # nor 1.4's queues
        outputs.pop("queues")
    if producer == "1.5":  # a newer producer's fields, at the top and inside
        outputs["regions_served"] = ["eu-west-1"]
        outputs["gpu_pools"] = [{**pool, "interconnect": "efa"} for pool in outputs["gpu_pools"]]
    contract = _read_through_a_stack_reference(outputs, requires)
    assert contract.contract_version == producer and contract.pool("batch").gpus_per_node
    if producer == "1.0":
        assert contract.checkpoint_claims == [] and contract.tenants == [] and contract.priority_classes == {}
    else:
        assert contract.tenants and contract.priority_classes
    assert contract.pool("train").single_zone == (None if producer in ("1.0", "1.1") else "us-east-1a")
    # 1.3: a claim of prod's checkpoint class (io2, 64,000 IOPS) priced without the platform's package
    prices = contract.storage_classes.claim_prices
    assert (prices["checkpoints"].monthly_usd(64) if producer >= "1.3" else prices) == (
        3544.0 if producer >= "1.3" else {}
    )
