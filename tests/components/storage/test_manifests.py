"""The storage objects' manifests, function by function."""

from components.storage.manifests import PROVIDER_WAIT_FOR, static_checkpoint_volume


def test_a_pre_provisioned_claim_is_bound_to_its_volume_and_awaited_as_bound():
    volume, claim = static_checkpoint_volume(
        "checkpoints-0", "vol-0abc", "us-east-1a", 800, "checkpoints", "training", "train"
    )
    assert volume["spec"]["claimRef"] == {"namespace": "training", "name": "checkpoints-0"}
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"] == "checkpoints-0"
    assert claim["spec"]["storageClassName"] == volume["spec"]["storageClassName"] == "checkpoints"
    # The class waits for a first consumer; this claim does not, so the provider must wait for Bound.
    assert claim["metadata"]["annotations"] == {PROVIDER_WAIT_FOR: "jsonpath={.status.phase}=Bound"}
