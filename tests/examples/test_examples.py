"""The application-team examples, planned under mocks with a mocked StackReference, and checked."""

import json
from pathlib import Path

import pytest

from seedance.cli import main
from seedance.offline_cloud import OfflineCloud
from seedance_client.cli import main as client_main
from seedance_client.contract import QUEUE_LABEL
from seedance_client.engine import ProgramInputError, Secret, run_program
from seedance_client.project import find_project, load_stack_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def platform_outputs_of(plan):
    """A platform stack's real outputs as a StackReference would return them (secrets as plain text)."""
    return {k: v.value if isinstance(v, Secret) else v for k, v in plan.outputs.items()}


def platform_outputs(plan_of, **changes):
    return {**platform_outputs_of(plan_of("dev")), **changes}


def plan_example(name, outputs):
    project = find_project(EXAMPLES / name)
    config = load_stack_config(project, project.stack_file("dev"))
    references = []

    def answer(stack):
        references.append(stack)
        return outputs

    plan = run_program(
        project.program_dir,
        project=project.name,
        stack="dev",
        config=config.values,
        mocks=OfflineCloud("us-west-2", stack_outputs=answer),
    )
    return plan, references


def test_training_job_runs_on_the_batch_pool_with_a_checkpoint_claim(plan_of):
    outputs = platform_outputs(plan_of)
    plan, references = plan_example("training-job", outputs)
    assert references == ["my-org/seedance-gpu/dev"]
    (job,) = plan.of_type("kubernetes:batch/v1:Job")
    pod = job.inputs["spec"]["template"]["spec"]
    (batch,) = [p for p in outputs["gpu_pools"] if p["name"] == "batch"]
    assert pod["nodeSelector"] == {**batch["node_selector"], "topology.kubernetes.io/zone": batch["zones"][0]}
    assert pod["tolerations"] == batch["tolerations"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "checkpoints"
    (claim,) = plan.of_type("kubernetes:core/v1:PersistentVolumeClaim")
    assert claim.inputs["spec"]["storageClassName"] == outputs["storage_classes"]["checkpoint"]
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert isinstance(provider.inputs["kubeconfig"], Secret)


def test_training_job_names_its_queue_where_the_platform_queues_gpus(plan_of):
    """Contract 1.4: with `queues`, the Job names the batch queue (the platform refuses one that names none);
    without, it names none."""
    queued, _ = plan_example("training-job", platform_outputs(plan_of, queues={"batch": "batch", "online": "online"}))
    (job,) = queued.of_type("kubernetes:batch/v1:Job")
    assert job.inputs["metadata"]["labels"][QUEUE_LABEL] == "batch"
    unqueued = {k: v for k, v in platform_outputs(plan_of).items() if k != "queues"}
    plain, _ = plan_example("training-job", unqueued)
    (job,) = plain.of_type("kubernetes:batch/v1:Job")
    assert QUEUE_LABEL not in job.inputs["metadata"]["labels"]


def test_training_job_survives_spot_as_a_team_should_copy_it(plan_of):
    """Disruptions never use up the Job's retries, the flush fits the grace period, the autoscaler does not
    evict it, `pulumi up` does not wait for it, and the team creates nothing cluster-scoped."""
    from tests.k8s_checks import schema_errors

    outputs = platform_outputs(plan_of)
    plan, _ = plan_example("training-job", outputs)
    assert not plan.of_type("kubernetes:core/v1:Namespace")
    (job,) = plan.of_type("kubernetes:batch/v1:Job")
    spec, pod = job.inputs["spec"], job.inputs["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"  # podFailurePolicy needs it: a replacement pod per attempt
    assert {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]} in spec["podFailurePolicy"]["rules"]
    assert spec["template"]["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
    assert job.inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    flush = int(next(a for a in pod["containers"][0]["command"] if a.startswith("--flush-seconds=")).split("=")[1])
    assert flush < pod["terminationGracePeriodSeconds"] <= 120  # inside the two-minute spot notice
    assert job.inputs["metadata"]["namespace"] == outputs["storage_classes"]["training_namespace"]
    assert (
        f"--checkpoint-every-seconds={int(outputs['storage_classes']['checkpoint_interval_seconds'])}"
        in pod["containers"][0]["command"]
    )
    assert set(outputs["cost_label_keys"]) <= set(job.inputs["metadata"]["labels"])
    assert set(outputs["cost_label_keys"]) <= set(spec["template"]["metadata"]["labels"])  # what OpenCost reads
    (claim,) = plan.of_type("kubernetes:core/v1:PersistentVolumeClaim")
    assert set(outputs["cost_label_keys"]) <= set(claim.inputs["metadata"]["labels"])
    manifests = [{"apiVersion": "batch/v1", "kind": "Job", **job.inputs}]
    assert schema_errors(manifests, "1.36") == []


def test_model_deploy_publishes_into_the_repository_under_the_platform_key(plan_of):
    outputs = platform_outputs(plan_of)
    plan, _ = plan_example("model-deploy", outputs)
    objects = {o.inputs["key"]: o for o in plan.of_type("aws:s3/bucketObjectv2:BucketObjectv2")}
    assert sorted(objects) == [
        "seedance/video/identity/1/model.py",
        "seedance/video/identity/config.pbtxt",
        "seedance/video/identity/seedance-version-1.json",
    ]
    pointer = objects["seedance/video/identity/config.pbtxt"]
    assert "version_policy: { specific: { versions: [ 1 ] } }" in pointer.inputs["content"]
    marker = objects["seedance/video/identity/seedance-version-1.json"]
    assert objects["seedance/video/identity/1/model.py"].urn in marker.dependencies  # the marker after the files
    assert marker.urn in pointer.dependencies  # the switch comes last
    version_file = objects["seedance/video/identity/1/model.py"]
    assert version_file.retain_on_delete and "source" in version_file.ignore_changes  # never deleted nor rewritten
    (publisher,) = plan.of_type("pulumi:providers:aws")
    roles = publisher.inputs["assumeRoles"]  # provider inputs reach the engine as JSON text
    (role,) = json.loads(roles) if isinstance(roles, str) else roles
    assert role["roleArn"] == outputs["triton_endpoints"]["video"]["publisher_role_arn"]
    for item in objects.values():
        assert item.inputs["bucket"] == outputs["model_repository_bucket"]
        assert item.inputs["serverSideEncryption"] == "aws:kms" and item.inputs["kmsKeyId"] == outputs["kms_key_arn"]


@pytest.mark.parametrize(
    "version, expected",
    [
        ("2.0", "exports contract 2.0; this program needs 1.1 or a later 1.x"),
        (None, "exports contract_version None, not major.minor"),
    ],
)
def test_an_incompatible_platform_stops_the_program_with_one_clear_line(plan_of, version, expected):
    with pytest.raises(ProgramInputError) as error:
        plan_example("training-job", platform_outputs(plan_of, contract_version=version))
    message = str(error.value)
    assert message.startswith("my-org/seedance-gpu/dev: ") and expected in message and "\n" not in message


def test_training_job_asking_more_gpus_than_a_node_has_is_refused(plan_of):
    outputs = platform_outputs(plan_of)
    project = find_project(EXAMPLES / "training-job")
    config = dict(load_stack_config(project, project.stack_file("dev")).values, **{"training-job:gpus": "2"})
    with pytest.raises(ProgramInputError, match="training-job:gpus = 2: the batch pool's smallest nodes have 1 GPU"):
        run_program(
            project.program_dir,
            project=project.name,
            stack="dev",
            config=config,
            mocks=OfflineCloud("us-west-2", stack_outputs=lambda _: outputs),
        )


def test_a_teams_claim_is_priced_at_the_platforms_class(capsys):
    """The team's plan does not declare the class; the platform's contract says what a claim of it gets."""
    assert main(["check", "--stack", "dev", "--program", str(EXAMPLES / "training-job")]) == 0
    out = capsys.readouterr().out
    assert "checkpoints  (claim of class checkpoints: gp3 64 GiB, 3,000 IOPS)" in out and "$5.12" in out


@pytest.mark.parametrize("example", ["training-job", "model-deploy"])
def test_examples_plan_and_pass_the_check_offline(example, capsys, tmp_path):
    assert (
        main(["plan", "--stack", "dev", "--program", str(EXAMPLES / example), "--json", str(tmp_path / "p.json")]) == 0
    )
    assert main(["check", "--stack", "dev", "--program", str(EXAMPLES / example)]) == 0
    assert "Policy violations: none" in capsys.readouterr().out
    assert main(["check", "--plan", str(tmp_path / "p.json"), "--env", "dev"]) == 0


def test_an_application_config_error_is_one_line_in_a_fresh_process(tmp_path):
    """An error raised inside an apply leaves every dependent Output holding it; without the engine's
    handler, asyncio prints each as "Future exception was never retrieved" when the process ends."""
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "training-job"
    stack_file = tmp_path / "Pulumi.bad.yaml"
    stack_file.write_text(
        (example / "Pulumi.dev.yaml").read_text().replace("training-job:gpus: 1", "training-job:gpus: 9")
    )
    seedance = Path(sys.executable).parent / "seedance"
    result = subprocess.run(
        [str(seedance), "plan", "--program", str(example), "--stack", "dev", "--stack-file", str(stack_file)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "seedance: error: invalid config training-job:gpus = 9: the batch pool's smallest nodes have 1 GPU(s); "
        "allowed: 1 to 1"
    ]


def _team_stack(tmp_path, namespace: str, team: str = "video-ml"):
    """The training job's stack pointed at prod's platform, in `namespace`, as `team`."""
    text = (EXAMPLES / "training-job" / "Pulumi.dev.yaml").read_text()
    text = text.replace("my-org/seedance-gpu/dev", "my-org/seedance-gpu/prod").replace("us-west-2", "us-east-1")
    text = text.replace("training-job:team: video-ml", f"training-job:team: {team}")
    path = tmp_path / f"{namespace}-{team}.yaml"
    path.write_text(text + f"  training-job:namespace: {namespace}\n")
    return path


@pytest.mark.parametrize(
    "namespace, team, refused",
    [
        ("video-train", "video-ml", None),
        ("training", "video-ml", "namespace training belongs to no team of the platform"),
        ("video-train", "speech-ml", "labelled team 'speech-ml' in namespace video-train, which is team 'video-ml''s"),
    ],
)
def test_a_teams_check_holds_its_plan_to_the_platforms_contract(tmp_path, capsys, plan_of, namespace, team, refused):
    """Team checks before apply (issue 36, item 6): its namespace and label from the contract's tenants, and
    a claim on prod's io2 checkpoint class named with its monthly cost."""
    code = main(
        [
            "check",
            "--stack",
            "dev",
            "--program",
            str(EXAMPLES / "training-job"),
            "--stack-file",
            str(_team_stack(tmp_path, namespace, team)),
        ]
    )
    out = capsys.readouterr().out
    assert "[advisory] kubernetes-claim-flag-costly-volume: checkpoints:" in out and "$3,544.00/month" in out
    if refused is None:
        assert code == 0 and "kubernetes-tenant-require-contract-fit" not in out
    else:
        assert code == 1 and refused in out
    # The client alone, with prod's outputs in a file, says the same (one judgement, seedance_client.team_rules).
    contract = tmp_path / "prod-outputs.json"
    contract.write_text(json.dumps(platform_outputs_of(plan_of("prod"))))
    assert (
        client_main(
            [
                "check",
                "--stack",
                "dev",
                "--program",
                str(EXAMPLES / "training-job"),
                "--contract",
                str(contract),
                "--stack-file",
                str(_team_stack(tmp_path, namespace, team)),
            ]
        )
        == code
    )
    client_out = capsys.readouterr().out
    assert "[advisory] kubernetes-claim-flag-costly-volume: checkpoints: $3,544.00/month" in client_out
    assert (refused or "fits the platform's contract") in client_out


def test_the_training_job_runs_the_shipped_trainer_in_one_zone_with_a_shared_memory_volume(plan_of):
    """Issue 36, item 5: the command is a trainer that exists (shipped in a ConfigMap), the pod has a
    memory-backed /dev/shm, and it is pinned to the pool's zone, so its replacement finds its volume."""
    plan, _ = plan_example("training-job", platform_outputs(plan_of))
    (job,) = plan.of_type("kubernetes:batch/v1:Job")
    (trainer,) = plan.of_type("kubernetes:core/v1:ConfigMap")
    spec = job.inputs["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["command"][:2] == ["python", "/opt/trainer/train.py"]
    assert trainer.inputs["data"]["train.py"] == (EXAMPLES / "training-job" / "trainer" / "train.py").read_text()
    shm = next(v for v in spec["volumes"] if v["name"] == "shm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "8Gi"}
    assert {"name": "shm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    (batch,) = [p for p in platform_outputs(plan_of)["gpu_pools"] if p["name"] == "batch"]
    assert spec["nodeSelector"]["topology.kubernetes.io/zone"] == batch["zones"][0]


def replay(plan, s3, leave_out=()):
    """The example's bucket objects written as `pulumi up` writes them (content or file, and metadata)."""
    for item in plan.of_type("aws:s3/bucketObjectv2:BucketObjectv2"):
        key = item.inputs["key"]
        if key.endswith(leave_out):
            continue
        source = item.inputs.get("source")
        body = Path(source.path).read_bytes() if source is not None else item.inputs["content"].encode()
        s3.put_object(Bucket=item.inputs["bucket"], Key=key, Body=body, Metadata=item.inputs.get("metadata") or {})


def example_with_version_2(tmp_path):
    """The model-deploy example with a second version directory, serving it."""
    import shutil

    program = tmp_path / "model-deploy"
    shutil.copytree(EXAMPLES / "model-deploy", program)
    shutil.copytree(program / "model_repository" / "identity" / "1", program / "model_repository" / "identity" / "2")
    return program


def test_the_examples_versions_are_promoted_rolled_back_and_resumed_by_the_cli(plan_of, s3, tmp_path, capsys):
    """Issue 52: a version the Pulumi example wrote could never be promoted or rolled back with the CLI, and
    `--resume` called its byte-identical files different. Both paths write the same objects now."""
    from tests.seedance.test_model_publish import CONFIG, REPOSITORY, text

    outputs = platform_outputs(plan_of)
    program = example_with_version_2(tmp_path)
    project = find_project(program)
    config = load_stack_config(project, project.stack_file("dev"))
    plan = run_program(
        project.program_dir,
        project=project.name,
        stack="dev",
        config={**config.values, "model-deploy:version": "1"},
        mocks=OfflineCloud("us-west-2", stack_outputs=lambda stack: outputs),
    )
    assert plan.outputs["model_repository"] == REPOSITORY
    replay(plan, s3, leave_out=("seedance-version-2.json",))  # version 2 cut off before its marker
    model = program / "model_repository" / "identity"

    def cli(*argv):
        return client_main(["model", *argv, "--repository", REPOSITORY])

    assert cli("publish", str(model), "--version", "2", "--resume") == 0  # its files are found the same
    assert "differs" not in capsys.readouterr().err and "versions: [ 2 ]" in text(s3, CONFIG)
    assert cli("rollback", "identity") == 0 and "versions: [ 1 ]" in text(s3, CONFIG)  # the example's 1
    assert cli("promote", "identity", "--version", "2") == 0 and cli("rollback", "identity", "--to", "1") == 0
    assert "versions: [ 1 ]" in text(s3, CONFIG)
