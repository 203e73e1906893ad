"""A multi-node pool's network (components/compute/efa.py): one EFA per network card, the primary an EFA with
ENA, the rest EFA-only, all in the nodes' security group and none public; and the pool's config refused
where the layout cannot hold (types without EFA on every card, types unlike, more than one zone)."""

import base64

import pytest
import yaml
from pydantic import ValidationError

from components.catalog.instance_types import gpu_instance_type, gpu_instance_types
from components.common.validation import FieldError
from components.compute.config import GpuNodeGroupConfig
from components.compute.efa import (
    EFA_HUGEPAGES,
    EFA_PLUGIN_CHART,
    EFA_PLUGIN_NAMESPACE,
    EFA_PLUGIN_VERSION,
    EFA_RESOURCE,
    HUGEPAGES_RESOURCE,
    efa_device_plugin_values,
    efa_interfaces,
)
from components.compute.labels import AGENT_TOLERATIONS, EFA_LABEL
from components.plan.resources import PLACEMENT_GROUP
from components.stack.config import ConfigError, parse_stack_config
from policies.expectations import stack_policy_config
from seedance import charts
from seedance.check_command import check, cluster_version, plan_resources
from seedance.cli import offline_plan
from tests.stacks import REPO, stack_config

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ASG = "aws:autoscaling/group:Group"


@pytest.mark.parametrize("instance_type, cards", [("p5.48xlarge", 32), ("p4d.24xlarge", 4), ("g6e.12xlarge", 1)])
def test_one_adapter_per_network_card_the_primary_with_ena(instance_type, cards):
    interfaces = efa_interfaces(instance_type, "sg-1")
    assert len(interfaces) == cards == gpu_instance_type(instance_type).efa_interfaces
    primary, *others = interfaces
    assert (primary["network_card_index"], primary["device_index"], primary["interface_type"]) == (0, 0, "efa")
    assert primary["associate_public_ip_address"] == "false"
    assert [(i["network_card_index"], i["device_index"], i["interface_type"]) for i in others] == [
        (card, 0, "efa-only") for card in range(1, cards)
    ]
    # EFA-only interfaces take no address, so no public one either; every interface is the nodes' group's.
    assert all("associate_public_ip_address" not in i for i in others)
    assert all(i["security_groups"] == ["sg-1"] and i["delete_on_termination"] == "true" for i in interfaces)


def test_the_instance_table_has_an_adapter_on_every_card_of_each_efa_type():
    """The layout puts one on each card: a type whose cards outnumber its adapters would be refused."""
    for shape in gpu_instance_types().values():
        assert shape.efa_interfaces in (0, shape.network_cards), shape.name


def pool(**changes):
    base = {
        "name": "train",
        "workload_class": "batch",
        "instance_types": ["p4d.24xlarge"],
        "desired_gpus": 0,
        "max_gpus": 16,
        "single_zone": True,
        "efa": True,
    }
    return GpuNodeGroupConfig(**{**base, **changes})


@pytest.mark.parametrize(
    "changes, field, says",
    [
        ({"instance_types": ["g6.xlarge"], "max_gpus": 4}, "efa", "g6.xlarge take no Elastic Fabric Adapter"),
        ({"instance_types": ["g6e.12xlarge", "g5.12xlarge", "g4dn.12xlarge"]}, None, None),  # alike: 1 card each
        ({"single_zone": False}, "single_zone", "must share a subnet"),
    ],
)
def test_an_efa_pool_is_refused_where_its_layout_cannot_hold(changes, field, says):
    if field is None:
        assert pool(**changes).efa
        return
    with pytest.raises(ValidationError) as raised:
        pool(**changes)
    (error,) = [e["ctx"]["error"] for e in raised.value.errors()]
    assert isinstance(error, FieldError) and error.field == field and says in str(error)


def test_types_that_differ_in_cards_are_refused():
    # p4d and p5 differ in GPUs too, which the group refuses first: the card rule is checked on its own here.
    config = pool()
    object.__setattr__(config, "instance_types", ["p4d.24xlarge", "g6e.12xlarge"])
    with pytest.raises(FieldError, match="differ in network cards"):
        config._check_efa()


def test_a_stack_with_an_efa_pool_plans_its_interfaces_and_passes_the_gate(tmp_path):
    """prod's train pool (g6e, g6, g5 12xlarge: one card and one adapter each) as an EFA pool."""
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    groups = document["config"]["seedance-gpu:gpu_node_groups"]
    next(g for g in groups if g["name"] == "train")["efa"] = True
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document))
    plan, _ = offline_plan("prod", REPO / "infra", path)
    (template,) = [r for r in plan.of_type(LAUNCH_TEMPLATE) if r.name.endswith("-train-template")]
    (interface,) = template.inputs["networkInterfaces"]
    assert interface["interfaceType"] == "efa" and interface["associatePublicIpAddress"] == "false"
    config = stack_config("prod")
    config = config.model_copy(
        update={"gpu_node_groups": [g.model_copy(update={"efa": g.name == "train"}) for g in config.gpu_node_groups]}
    )
    resources = plan_resources(plan)
    tags = {t["key"]: t["value"] for r in plan.of_type(ASG) if r.name.endswith("-train-asg") for t in r.inputs["tags"]}
    assert tags[f"k8s.io/cluster-autoscaler/node-template/resources/{EFA_RESOURCE}"] == "1"  # scale from zero
    assert tags[f"k8s.io/cluster-autoscaler/node-template/label/{EFA_LABEL}"] == "true"
    # Its huge pages too, and the memory they take from pods (its one type's: g6e.12xlarge, 384 GiB).
    hugepages_mib = EFA_HUGEPAGES * 2
    assert tags[f"k8s.io/cluster-autoscaler/node-template/resources/{HUGEPAGES_RESOURCE}"] == f"{hugepages_mib}Mi"
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/memory"] == f"{384 * 1024 - hugepages_mib}Mi"
    user_data = base64.b64decode(template.inputs["userData"]).decode()
    assert f"sysctl -w vm.nr_hugepages={EFA_HUGEPAGES}" in user_data
    # The gate renders the EFA device plugin's chart too: privileged, in its privileged namespace, it passes.
    version = cluster_version(resources, config)
    violations, _cost = check(resources, "prod", config.region, stack_policy_config(config), kubernetes_version=version)
    assert [v for v in violations if v.level == "mandatory"] == []


def _rendered_plugin() -> list[dict]:
    release = {"name": EFA_PLUGIN_CHART, "namespace": EFA_PLUGIN_NAMESPACE, "chart": EFA_PLUGIN_CHART}
    return charts.render({**release, "version": EFA_PLUGIN_VERSION, "values": efa_device_plugin_values()}, "1.35")


def test_the_efa_device_plugin_runs_on_every_efa_pools_nodes_and_nowhere_else():
    (daemon_set,) = [o for o in _rendered_plugin() if o["kind"] == "DaemonSet"]
    pod = daemon_set["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {EFA_LABEL: "true"}
    assert pod["tolerations"][1:] == AGENT_TOLERATIONS  # after the chart's own CriticalAddonsOnly
    # The chart's own affinity lists the EFA types it supports: every EFA type of the table must be there,
    # or its nodes would get adapters and no plugin.
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    listed = next(e["values"] for e in term["matchExpressions"] if e["key"] == "node.kubernetes.io/instance-type")
    efa_types = {t.name for t in gpu_instance_types().values() if t.efa_interfaces}
    assert efa_types and efa_types <= set(listed)


def test_a_placement_group_is_an_efa_pools_own_and_its_main_groups_only():
    """prod's train pool sets it: its main group launches into the cluster placement group named for it, no
    other group does (a Capacity Block's group neither: AWS places a block's instances itself)."""
    plan, _ = offline_plan("prod", REPO / "infra", REPO / "stacks" / "Pulumi.prod.yaml")
    (placement,) = plan.of_type(PLACEMENT_GROUP)
    assert placement.inputs["strategy"] == "cluster" and placement.inputs["name"] == "seedance-prod-train"
    placed = {g.name: g.inputs.get("placementGroup") for g in plan.of_type(ASG)}
    assert placed.pop("seedance-prod-train-asg") == "seedance-prod-train"
    assert placed and set(placed.values()) == {None}
    with pytest.raises(ValidationError, match="only for a multi-node pool"):
        pool(efa=False, single_zone=False, placement_group=True)


def test_a_placement_group_is_refused_over_a_capacity_reservation_of_the_pools_types():
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]
    values = {k.split(":", 1)[1]: v for k, v in document.items() if k.startswith("seedance-gpu:")}
    values["capacity"]["capacity_reservations"] = [
        {"id": "cr-0123456789abcdef0", "instance_type": "g6e.12xlarge", "zone": "us-east-1a", "count": 2}
    ]
    with pytest.raises(ConfigError) as raised:
        parse_stack_config(document["aws:region"], values)
    message = str(raised.value)
    assert "placement_group" in message and "cr-0123456789abcdef0" in message and "allowed: false" in message
    index = next(i for i, g in enumerate(values["gpu_node_groups"]) if g["name"] == "train")
    values["gpu_node_groups"][index]["placement_group"] = False
    assert parse_stack_config(document["aws:region"], values)
