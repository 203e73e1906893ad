"""Day two on the program itself: each change planned offline and diffed against the committed plan, as
the pull-request check shows it (`seedance check --compare`). A change of spot share or of the types
a group may launch never rolls running nodes; a new image or user data rolls them at the class's pace."""

from dataclasses import replace
from datetime import UTC, datetime
from unittest import mock

import pytest
import yaml

import components.stack.derivation
from components.compute.node_bootstrap import ami_ssm_parameter
from components.compute.node_images import NodeImage, NodeImagesDocument, render_node_images
from components.plan.diff import plan_diff
from components.stack.capacity import RunMode
from components.stack.config import ConfigError
from components.stack.derivation import node_images
from seedance.check_command import plan_resources
from seedance.cli import offline_plan
from tests.stacks import REPO, stack_config

PINNED = datetime(2026, 12, 1, tzinfo=UTC)


def _images_file(tmp_path, al2023="ami-0a1b2c3d4e5f60718", bottlerocket="ami-0b1b2c3d4e5f60718"):
    config = stack_config("dev")
    version = config.cluster.kubernetes_version
    document = NodeImagesDocument(
        images_version=1,
        stack="dev",
        region=config.region,
        kubernetes_version=version,
        images={
            "al2023/x86_64": NodeImage(
                image_id=al2023,
                name="amazon-eks-node-al2023-x86_64-nvidia-1.36-v20261120",
                parameter=ami_ssm_parameter("al2023", version, "x86_64"),
                pinned_at=PINNED,
            ),
            "bottlerocket/x86_64": NodeImage(
                image_id=bottlerocket,
                name="bottlerocket-aws-k8s-1.36-nvidia-x86_64-v1.50.0",
                parameter=ami_ssm_parameter("bottlerocket", version, "x86_64"),
                pinned_at=PINNED,
            ),
        },
    )
    path = tmp_path / f"images-{al2023}-{bottlerocket}.json"
    path.write_text(render_node_images(document))
    return path


def _plan(tmp_path, images, change=None):
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    if change:
        change(document["config"])
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(yaml.safe_dump(document))
    with mock.patch.object(components.stack.derivation, "images_path", lambda _dir, _stack: images):
        plan, _ = offline_plan("dev", REPO / "infra", stack_file)
    return plan_resources(plan)


def _groups(base, head):
    return {c.resource.name: c for c in plan_diff(base, head) if c.resource.type == "aws:autoscaling/group:Group"}


def _group(config, name):
    return next(g for g in config["seedance-gpu:gpu_node_groups"] if g["name"] == name)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    directory = tmp_path_factory.mktemp("base")
    return directory, _plan(directory, _images_file(directory))


def test_a_spot_share_change_replaces_no_running_node(plan_of):
    from tests.conftest import _spot_stack_plan  # the committed stack decided from a spot market

    before = plan_resources(plan_of("dev"))
    spot = {r.urn: r for r in plan_resources(_spot_stack_plan("dev"))}
    # The decision's new mix on the program's own groups (the spot lock also prices fewer types).
    after = [
        replace(
            r,
            props={
                **r.props,
                "mixedInstancesPolicy": {
                    **r.props["mixedInstancesPolicy"],
                    "instancesDistribution": spot[r.urn].props["mixedInstancesPolicy"]["instancesDistribution"],
                },
            },
        )
        if r.type == "aws:autoscaling/group:Group"
        else r
        for r in before
    ]
    changed = _groups(before, after)
    assert changed, "the spot lock should change the groups' mix"
    # A decision changes no launch template (no user data, no tag): what rolls nodes is never a price.
    templates = [c for c in plan_diff(before, list(spot.values())) if c.resource.type.endswith("LaunchTemplate")]
    assert templates == []
    for change in changed.values():
        assert change.nodes.refresh and change.nodes.replaces == "none", change.nodes.summary()


def test_an_added_type_replaces_nothing_a_removed_type_only_its_nodes(base):
    directory, before = base
    added = _plan(
        directory, _images_file(directory), lambda c: _group(c, "online")["instance_types"].append("g6e.xlarge")
    )
    assert _groups(before, added)["seedance-dev-online-asg"].nodes.replaces == "none"
    removed = _plan(
        directory, _images_file(directory), lambda c: _group(c, "online")["instance_types"].remove("g4dn.xlarge")
    )
    nodes = _groups(before, removed)["seedance-dev-online-asg"].nodes
    assert (nodes.replaces, nodes.types) == ("types", ("g4dn.xlarge",))


def test_a_new_image_rolls_only_its_groups_at_the_batch_pace(base):
    directory, before = base
    after = _plan(directory, _images_file(directory, al2023="ami-0f0e0d0c0b0a09080"))
    groups = _groups(before, after)
    assert groups["seedance-dev-batch-asg"].nodes.replaces == "all"
    assert "at least 90% healthy, at most 100%" in groups["seedance-dev-batch-asg"].nodes.pace  # no extra GPUs
    assert "seedance-dev-online-asg" not in groups  # Bottlerocket's image did not move


def test_a_user_data_line_rolls_an_online_group_by_surge(base):
    directory, before = base
    after = _plan(directory, _images_file(directory), lambda c: _group(c, "online")["gpu_sharing"].update(replicas=2))
    nodes = _groups(before, after)["seedance-dev-online-asg"].nodes
    assert nodes.replaces == "all" and "at least 100% healthy, at most 150%" in nodes.pace


def test_a_tag_on_the_group_alone_replaces_nothing_a_stack_tag_rolls_at_pace(base):
    directory, before = base
    breaker = _plan(
        directory, _images_file(directory), lambda c: c["seedance-gpu:capacity"].update(budget_breaker=True)
    )
    assert all(not c.nodes or c.nodes.replaces == "none" for c in _groups(before, breaker).values())
    # Stack tags are also on the nodes' volumes, which only the launch template tags: a new template version.
    retagged = _plan(directory, _images_file(directory), lambda c: c["seedance-gpu:tags"].update(team="vision"))
    assert {c.nodes.replaces for c in _groups(before, retagged).values()} == {"all"}


def test_a_real_run_refuses_an_unpinned_image_and_a_pin_for_another_version(tmp_path):
    config = stack_config("dev")
    with pytest.raises(
        ConfigError, match=r"no pinned image for al2023/x86_64, bottlerocket/x86_64.*seedance images pin"
    ):
        node_images(config, "dev", tmp_path, RunMode())
    assert node_images(config, "dev", tmp_path, RunMode.offline_plan()) == (
        {},
        ["al2023/x86_64", "bottlerocket/x86_64"],
    )
    path = _images_file(tmp_path)
    (tmp_path / "node-images.dev.json").write_text(path.read_text().replace(config.cluster.kubernetes_version, "1.30"))
    with pytest.raises(ConfigError, match=r"kubernetes_version = '1.30'"):
        node_images(config, "dev", tmp_path, RunMode())
    (tmp_path / "node-images.dev.json").write_text(path.read_text().replace("ami-0a1b2c3d4e5f60718", "ami-zz"))
    with pytest.raises(ConfigError, match=r"images.al2023/x86_64.image_id"):
        node_images(config, "dev", tmp_path, RunMode())
    # An image pinned from another parameter (a hand edit, another family's) is not deployed.
    (tmp_path / "node-images.dev.json").write_text(path.read_text().replace("/amazon-linux-2023/", "/amazon-linux-2/"))
    with pytest.raises(ConfigError, match=r"images.al2023/x86_64.parameter"):
        node_images(config, "dev", tmp_path, RunMode())


def test_every_zonal_volume_has_a_group_that_launches_in_its_zone_alone(stack_plan):
    """The autoscaler starts a node for a pod whose PV pins a zone only from a group that launches there:
    every group the volume's affinity lets its pods use launches in that zone alone."""
    config = stack_config(stack_plan.stack)
    resources = plan_resources(stack_plan)
    subnets = {r.id: r.props.get("availabilityZone") for r in resources if r.type == "aws:ec2/subnet:Subnet"}
    volumes = [r for r in resources if r.type == "kubernetes:core/v1:PersistentVolume"]
    for volume in volumes:
        (term,) = volume.props["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        allowed = {e["key"]: set(e["values"]) for e in term["matchExpressions"] if e["operator"] == "In"}
        zones, groups = allowed["topology.kubernetes.io/zone"], allowed["seedance.io/node-group"]
        assert groups, "the volume names the groups its pods may run on"
        for group in groups:
            asg = next(r for r in resources if r.name == f"{config.cluster_name}-{group}-asg")
            assert {subnets[s] for s in asg.props["vpcZoneIdentifiers"]} == zones, group
    if stack_plan.stack == "prod":
        assert volumes, "prod pre-provisions checkpoint volumes"


def test_gpu_nodes_are_replaced_only_by_the_refreshes_the_stack_starts(stack_plan):
    """Protected from the group's own scale-in (a new mix, zone rebalancing), replaced by a refresh the
    stack starts (which must be told to replace protected nodes, or it replaces none)."""
    for asg in stack_plan.of_type("aws:autoscaling/group:Group"):
        preferences = asg.inputs["instanceRefresh"]["preferences"]
        assert asg.inputs["protectFromScaleIn"] is True and "AZRebalance" in asg.inputs["suspendedProcesses"]
        assert preferences["scaleInProtectedInstances"] == "Refresh" and preferences["skipMatching"] is True


def test_volumes_in_one_zone_need_a_single_zone_group():
    from pydantic import ValidationError

    from components.stack.config import StackConfig

    config = stack_config("prod")
    values = config.model_dump()
    values["storage"]["checkpoints"]["node_group"] = "batch"
    with pytest.raises(ValidationError, match="single_zone: true"):
        StackConfig.model_validate(values)
