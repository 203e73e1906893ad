"""GPU sharing per node group and the Descheduler, in config and in the plans."""

import base64
import tomllib

import pytest
import yaml

from components.catalog.instance_types import gpu_instance_type
from components.compute.config import CONFIG_LABEL, GpuSharingConfig
from components.compute.device_plugin import device_plugin_values
from components.compute.labels import AMI_FAMILY_LABEL, NODE_GROUP_LABEL
from seedance.cli import main
from tests.k8s_checks import node_labels, selects
from tests.stacks import REPO, bad_stack, stack_config


def release(plan, chart):
    (found,) = [r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == chart]
    return found


def test_time_slicing_configs_for_the_device_plugin():
    values = device_plugin_values(
        {
            "online": GpuSharingConfig(mode="time-slicing", replicas=4),
            "train": GpuSharingConfig(mode="time-slicing", replicas=2),
            "batch": GpuSharingConfig(),
        }
    )
    configs = {name: yaml.safe_load(text) for name, text in values["config"]["map"].items()}
    default = values["config"]["default"]
    assert configs == {
        "online": {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
        },
        "train": {
            "version": "v1",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
        },
        default: {"version": "v1", "flags": {"migStrategy": "none"}},
    }


def test_every_gpu_node_runs_one_device_plugin_with_its_groups_sharing(stack_plan):
    """Bottlerocket's NVIDIA variants run the plugin themselves; a second (Helm) plugin on them would
    fight over nvidia.com/gpu. Every node gets exactly one, and it shares GPUs as its group asked,
    which is also what the contract tells pods they can request."""
    values = release(stack_plan, "nvidia-device-plugin").inputs["values"]
    configs = {name: yaml.safe_load(text) for name, text in values["config"]["map"].items()}
    pools = {p["name"]: p for p in stack_plan.outputs["gpu_pools"]}
    for asg in stack_plan.of_type("aws:autoscaling/group:Group"):
        labels = node_labels(asg)
        group = labels[NODE_GROUP_LABEL]
        template = next(
            t
            for t in stack_plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
            if t.name.endswith(f"-{group}-template")
        )
        user_data = base64.b64decode(template.inputs["userData"]).decode()
        helm = selects(values["affinity"], labels)
        builtin = labels[AMI_FAMILY_LABEL] == "bottlerocket"
        assert helm + builtin == 1, group
        if helm:
            config = configs[labels.get(CONFIG_LABEL, values["config"]["default"])]
            slicing = config.get("sharing", {}).get("timeSlicing", {}).get("resources", [{}])[0]
            replicas = slicing.get("replicas", 1)
        else:
            plugin = tomllib.loads(user_data)["settings"].get("kubelet-device-plugins", {}).get("nvidia", {})
            replicas = plugin.get("time-slicing", {}).get("replicas", 1)
        physical = {t: gpu_instance_type(t).gpus for t in pools[group]["instance_types"]}
        assert pools[group]["gpus_per_node"] == {t: n * replicas for t, n in physical.items()}, group


def test_dev_shares_online_gpus_four_ways_and_batch_not_at_all(plan_of):
    dev = plan_of("dev")
    pools = {p["name"]: p for p in dev.outputs["gpu_pools"]}
    assert set(pools["online"]["gpus_per_node"].values()) == {4}  # four pods per 1-GPU node
    assert pools["batch"]["gpus_per_node"]["g6.xlarge"] == 1


@pytest.mark.parametrize("group, types", [(0, ["p4d.24xlarge"]), (1, ["p4d.24xlarge"]), (0, ["g6.12xlarge"])])
def test_mig_is_refused_until_something_partitions_the_gpus(tmp_path, capsys, group, types):
    """A MIG strategy in the device plugin only advertises partitions; without a MIG manager none exist
    and pods asking for them never schedule. Refused on every AMI family and GPU."""
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    groups = document["config"]["seedance-gpu:gpu_node_groups"]
    groups[group] = {
        **groups[group],
        "instance_types": types,
        "local_storage": False,
        "min_gpus": 0,
        "desired_gpus": 8,
        "max_gpus": 16,
        "gpu_sharing": {"mode": "mig"},
    }
    stack_file = bad_stack(tmp_path, ["seedance-gpu:gpu_node_groups"], groups)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    assert (
        f"gpu_node_groups[{group}].gpu_sharing.mode = \"mig\": allowed: 'none' or 'time-slicing'"
        in capsys.readouterr().err
    )


def test_descheduler_with_the_sources_settings_in_staging_and_prod(plan_of):
    assert not [
        r for r in plan_of("dev").of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "descheduler"
    ]
    values = release(plan_of("prod"), "descheduler").inputs["values"]
    (profile,) = values["deschedulerPolicy"]["profiles"]
    plugins = {p["name"]: p.get("args") for p in profile["pluginConfig"]}
    assert plugins["LowNodeUtilization"]["thresholds"] == {"cpu": 35, "memory": 45}
    assert plugins["PodLifeTime"]["maxPodLifeTimeSeconds"] == 72 * 3600
    assert "RemoveDuplicates" in profile["plugins"]["balance"]["enabled"]
    assert plugins["DefaultEvictor"] == {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}  # 0.34's form


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_lifetime_limit_never_evicts_the_stacks_training_pods(plan_of, stack):
    """One source for the training namespace: the checkpoint claims' (a pod evicted there loses the work
    since its last checkpoint), not a name written twice."""
    config = stack_config(stack)
    (profile,) = release(plan_of(stack), "descheduler").inputs["values"]["deschedulerPolicy"]["profiles"]
    lifetime = next(p["args"] for p in profile["pluginConfig"] if p["name"] == "PodLifeTime")
    training = config.storage.checkpoints.namespace if config.storage.checkpoints else None
    assert training is None or training in lifetime["namespaces"]["exclude"]
    assert set(config.scheduling.lifetime_exempt_namespaces) <= set(lifetime["namespaces"]["exclude"])


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_descheduler_release_matches_the_cluster_minor(plan_of, stack):
    """Its minor follows the Kubernetes minor it was built for (the descheduler's compatibility matrix)."""
    chart = release(plan_of(stack), "descheduler").inputs["version"]
    minor = stack_config(stack).cluster.kubernetes_version.split(".")[1]
    assert chart.split(".")[1] == minor
