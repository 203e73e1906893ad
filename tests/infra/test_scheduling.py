"""GPU sharing per node group and the Descheduler, in config and in the plans."""

import base64

import pytest
import yaml

from components.nvidia_device_plugin import GpuSharingConfig, device_plugin_values
from seedance.cli import main
from tests.seedance.test_cli import REPO, bad_stack


def release(plan, chart):
    (found,) = [r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == chart]
    return found


def test_time_slicing_and_mig_configs_for_the_device_plugin():
    values = device_plugin_values({"online": GpuSharingConfig(mode="time-slicing", replicas=4),
                                   "train": GpuSharingConfig(mode="mig", mig_strategy="mixed"),
                                   "batch": GpuSharingConfig()})
    configs = {name: yaml.safe_load(text) for name, text in values["config"]["map"].items()}
    assert configs == {
        "online": {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}},
        "train": {"version": "v1", "flags": {"migStrategy": "mixed"}},
    }
    assert "config" not in device_plugin_values({"batch": GpuSharingConfig()})


def test_dev_shares_online_gpus_four_ways(plan_of):
    dev = plan_of("dev")
    values = release(dev, "nvidia-device-plugin").inputs["values"]
    assert yaml.safe_load(values["config"]["map"]["online"])["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4
    template = next(t for t in dev.of_type("aws:ec2/launchTemplate:LaunchTemplate") if t.name.endswith("-online-template"))
    assert '"nvidia.com/device-plugin.config" = "online"' in base64.b64decode(template.inputs["userData"]).decode()
    online = next(p for p in dev.outputs["gpu_pools"] if p["name"] == "online")
    assert set(online["gpus_per_node"].values()) == {4}  # what pods can request, after sharing


@pytest.mark.parametrize("types, error", [
    (["g6.12xlarge"], "gpu_node_groups[0].gpu_sharing.mode = \"mig\": g6.12xlarge (L4) have no MIG"),
    (["p4d.24xlarge"], None),
])
def test_mig_only_on_a100_h100_class_types(tmp_path, capsys, types, error):
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    groups = document["config"]["seedance-gpu:gpu_node_groups"]
    groups[0] = {"name": "batch", "workload_class": "batch", "instance_types": types, "desired_gpus": 8,
                 "max_gpus": 16, "gpu_sharing": {"mode": "mig"}}
    stack_file = bad_stack(tmp_path, ["seedance-gpu:gpu_node_groups"], groups)
    code = main(["plan", "--stack", "dev", "--stack-file", str(stack_file)])
    err = capsys.readouterr().err
    if error:
        assert code == 2 and error in err
    else:
        assert code == 0, err  # dev's policy denies p4d in `seedance check`; planning allows it


def test_descheduler_with_the_sources_settings_in_staging_and_prod(plan_of):
    assert not [r for r in plan_of("dev").of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "descheduler"]
    values = release(plan_of("prod"), "descheduler").inputs["values"]
    (profile,) = values["deschedulerPolicy"]["profiles"]
    plugins = {p["name"]: p.get("args") for p in profile["pluginConfig"]}
    assert plugins["LowNodeUtilization"]["thresholds"] == {"cpu": 35, "memory": 45}
    assert plugins["PodLifeTime"]["maxPodLifeTimeSeconds"] == 72 * 3600
    assert "RemoveDuplicates" in profile["plugins"]["balance"]["enabled"]
    assert plugins["DefaultEvictor"]["ignorePvcPods"] is True
