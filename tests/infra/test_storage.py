"""Checkpoint and local storage in each stack's offline plan, checked against schemas and checkov."""

import base64

import pytest
import yaml

from seedance.cli import main
from tests.k8s_checks import assert_checkov_clean_and_every_skip_needed, declared_manifests, schema_errors
from tests.stacks import bad_stack, stack_config

STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"


def storage_classes(plan):
    return {r.inputs["provisioner"]: r for r in plan.of_type(STORAGE_CLASS)}


def test_checkpoint_class_is_encrypted_retained_and_waits_for_its_pod(stack_plan):
    checkpoints = storage_classes(stack_plan)["ebs.csi.aws.com"]
    parameters = checkpoints.inputs["parameters"]
    assert parameters["encrypted"] == "true" and parameters["kmsKeyId"] == stack_plan.outputs["kms_key_arn"]
    assert parameters["type"] in ("io2", "gp3") and int(parameters["iops"]) >= 3000
    assert checkpoints.inputs["reclaimPolicy"] == "Retain" and checkpoints.inputs["allowVolumeExpansion"] is True
    assert checkpoints.inputs["volumeBindingMode"] == "WaitForFirstConsumer"
    (csi,) = [a for a in stack_plan.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "aws-ebs-csi-driver"]
    assert csi.urn in checkpoints.dependencies


def test_the_sizing_picks_io2_for_prod_and_gp3_for_dev(plan_of):
    assert storage_classes(plan_of("prod"))["ebs.csi.aws.com"].inputs["parameters"]["type"] == "io2"
    assert storage_classes(plan_of("dev"))["ebs.csi.aws.com"].inputs["parameters"]["type"] == "gp3"


def test_local_class_binds_late_and_only_in_the_stacks_zones(stack_plan):
    local = storage_classes(stack_plan)["kubernetes.io/no-provisioner"]
    assert local.inputs["volumeBindingMode"] == "WaitForFirstConsumer"
    (term,) = local.inputs["allowedTopologies"]
    (expression,) = term["matchLabelExpressions"]
    zones = sorted(
        s.inputs["availabilityZone"] for s in stack_plan.of_type("aws:ec2/subnet:Subnet") if "-private-" in s.name
    )
    assert expression == {"key": "topology.kubernetes.io/zone", "values": zones}


def test_nodes_with_local_storage_mount_their_nvme_disks(stack_plan):
    templates = {t.name: t for t in stack_plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    batch = next(t for name, t in templates.items() if name.endswith("-batch-template"))
    user_data = base64.b64decode(batch.inputs["userData"]).decode()
    assert "localStorage:\n      strategy: Mount" in user_data and "seedance.io/local-nvme=true" in user_data
    (daemon,) = stack_plan.of_type("kubernetes:apps/v1:DaemonSet")
    assert daemon.inputs["spec"]["template"]["spec"]["nodeSelector"] == {"seedance.io/local-nvme": "true"}


def test_provisioner_settings_are_ones_it_applies_to_mounted_disks(stack_plan):
    """nodeadm formats and mounts each disk; the provisioner's fsType applies to block devices only,
    so a Filesystem-mode class over mounted directories must not pretend to choose one."""
    (config,) = [
        r
        for r in stack_plan.of_type("kubernetes:core/v1:ConfigMap")
        if "storageClassMap" in (r.inputs.get("data") or {})
    ]
    for settings in yaml.safe_load(config.inputs["data"]["storageClassMap"]).values():
        assert settings["volumeMode"] == "Filesystem" and "fsType" not in settings


def test_prod_preprovisions_protected_encrypted_volumes_with_bound_claims(plan_of):
    prod = plan_of("prod")
    volumes = prod.of_type("aws:ebs/volume:Volume")
    assert len(volumes) == 2
    for volume in volumes:
        assert volume.inputs["type"] == "io2" and volume.inputs["encrypted"] is True
        assert volume.inputs["kmsKeyId"] == prod.outputs["kms_key_arn"] and volume.inputs["iops"] == 64_000
        assert volume.inputs["availabilityZone"] == "us-east-1a" and "cost-center" in volume.inputs["tags"]
    claims = {
        c.inputs["spec"]["volumeName"]
        for c in prod.of_type("kubernetes:core/v1:PersistentVolumeClaim")
        if c.inputs["spec"]["storageClassName"] == "checkpoints"
    }
    persistent = {p.inputs["metadata"]["name"]: p for p in prod.of_type("kubernetes:core/v1:PersistentVolume")}
    assert claims == set(persistent) == {"checkpoints-0", "checkpoints-1"}
    assert all(p.inputs["spec"]["persistentVolumeReclaimPolicy"] == "Retain" for p in persistent.values())


def test_the_training_namespace_is_baseline_and_denies_by_default(plan_of):
    """Training pods may run as root (baseline, not restricted) but never privileged; they reach each other
    (collectives), DNS and HTTPS, and nothing reaches them from another namespace."""
    prod = plan_of("prod")
    namespace = stack_config("prod").storage.checkpoints.namespace
    (ns,) = [n for n in prod.of_type("kubernetes:core/v1:Namespace") if n.inputs["metadata"]["name"] == namespace]
    assert ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    policies = {
        p.inputs["metadata"]["name"]: p.inputs["spec"]
        for p in prod.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if p.inputs["metadata"]["namespace"] == namespace
    }
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert policies["training"]["ingress"] == [{"from": [{"podSelector": {}}]}]  # its own pods only
    assert {"ports": [{"port": 443, "protocol": "TCP"}]} in policies["training"]["egress"]
    assert [p["port"] for p in policies["allow-dns"]["egress"][0]["ports"]] == [53, 53]


def test_declared_objects_match_the_official_schemas(stack_plan):
    version = stack_config(stack_plan.stack).cluster.kubernetes_version
    manifests = declared_manifests(stack_plan, "seedance:storage:CheckpointStorage") + declared_manifests(
        stack_plan, "seedance:storage:LocalStorage"
    )
    assert len(manifests) >= 7
    assert schema_errors(manifests, version) == []


def test_checkov_passes_with_only_justified_skips(plan_of, tmp_path, capsys):
    manifests = declared_manifests(plan_of("prod"), "seedance:storage:CheckpointStorage") + declared_manifests(
        plan_of("prod"), "seedance:storage:LocalStorage"
    )
    assert main(["fio-job", "--stack", "prod"]) == 0
    import yaml

    manifests += list(yaml.safe_load_all(capsys.readouterr().out))
    assert schema_errors(manifests[-3:], "1.34") == []
    assert_checkov_clean_and_every_skip_needed(manifests, tmp_path)


@pytest.mark.parametrize(
    "path, value, expected",
    [
        (
            ["seedance-gpu:gpu_node_groups"],
            [
                {
                    "name": "batch",
                    "workload_class": "batch",
                    "instance_types": ["p3.2xlarge"],
                    "desired_gpus": 1,
                    "max_gpus": 4,
                    "local_storage": True,
                }
            ],
            "seedance-gpu:gpu_node_groups[0].local_storage = true: p3.2xlarge have no NVMe instance store",
        ),
        (
            ["seedance-gpu:storage", "checkpoints", "profile", "random_read_iops"],
            300_000,
            "seedance-gpu:storage.checkpoints.profile.random_read_iops = 300000: needs 300,000 IOPS",
        ),
        (
            ["seedance-gpu:storage", "checkpoints", "node_group"],
            "training",
            'seedance-gpu:storage.checkpoints.node_group = "training": must name a GPU node group',
        ),
        # An interruption loses up to one interval: at the batch class's whole tolerance, one notice costs it all.
        (
            ["seedance-gpu:storage", "checkpoints", "profile", "interval_seconds"],
            1800,
            "seedance-gpu:storage.checkpoints.profile.interval_seconds = 1800: is more than half the batch class's "
            "interruption tolerance (1800 s); allowed: 30 to 900",
        ),
    ],
)
def test_bad_storage_config_exits_2_naming_the_key(tmp_path, capsys, path, value, expected):
    stack_file = bad_stack(tmp_path, path, value)
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_claims_of_every_ebs_class_carry_the_cost_tags_and_their_owner(stack_plan):
    """The budget counts volumes by the stack's cost tags; a dynamically provisioned volume gets them from
    its class (the checkpoints' and Prometheus's history), and the claim's namespace and name from the
    driver, so a retained one says whose it was."""
    classes = [
        c
        for c in stack_plan.of_type("kubernetes:storage.k8s.io/v1:StorageClass")
        if c.inputs["provisioner"] == "ebs.csi.aws.com"
    ]
    assert classes
    for storage_class in classes:
        tags = dict(
            v.split("=", 1) for k, v in storage_class.inputs["parameters"].items() if k.startswith("tagSpecification_")
        )
        assert stack_config(stack_plan.stack).resource_tags.items() <= tags.items()
        assert tags["kubernetes-namespace"] == "{{ .PVCNamespace }}" and tags["kubernetes-claim"] == "{{ .PVCName }}"


def test_claims_are_priced_by_their_class(plan_of):
    """A claim bills as the volume its class provisions; a claim bound to a declared volume is priced there."""
    from components.cost.estimate import catalog_for, estimate
    from components.plan.resources import PlanResource
    from seedance.check_command import plan_resources

    prod = plan_resources(plan_of("prod"))
    lines = {line.urn: line for line in estimate(prod, catalog_for("us-east-1")).lines}
    claims = [r for r in prod if r.type == "kubernetes:core/v1:PersistentVolumeClaim"]
    bound = [lines[r.urn] for r in claims if r.props["spec"].get("volumeName")]
    assert bound and all(line.monthly_usd == 0 and "pre-provisioned" in line.basis for line in bound)
    (history,) = [lines[r.urn] for r in claims if not r.props["spec"].get("volumeName")]
    assert history.basis == "claim of class monitoring-gp3: gp3 8 GiB" and history.monthly_usd == 8 * 0.08
    claim = PlanResource(
        "urn:c",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "c",
        {"spec": {"storageClassName": "checkpoints", "resources": {"requests": {"storage": "64Gi"}}}},
    )
    (priced,) = estimate([*prod, claim], catalog_for("us-east-1")).lines[-1:]
    assert priced.urn == "urn:c" and priced.monthly_usd > 64 * 0.125  # io2: 64 GiB plus its IOPS
