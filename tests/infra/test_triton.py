"""Triton serving in each stack's offline plan: warm pool, preload, autoscaling on Triton's metrics, drains."""

import json

import pytest

from components.catalog.instance_types import gpu_instance_type
from seedance.cli import main
from seedance.offline_cloud import OFFLINE_ACCOUNT_ID
from tests.helm import values_of
from tests.k8s_checks import assert_checkov_clean_and_every_skip_needed, declared_manifests, schema_errors
from tests.policy_evaluation import Request, allows, denies
from tests.stacks import bad_stack, stack_config

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"


def stable(plan):
    return next(d for d in plan.of_type(DEPLOYMENT) if d.inputs["metadata"]["name"] == "triton-video")


def container(plan):
    (triton,) = stable(plan).inputs["spec"]["template"]["spec"]["containers"]
    return triton


def flags(triton):
    return dict(a.removeprefix("--").split("=", 1) for a in triton["args"])


def test_container_preloads_models_from_s3_and_needs_a_gpu(stack_plan):
    triton = container(stack_plan)
    bucket = stack_plan.outputs["model_repository_bucket"]
    assert triton["image"] == "nvcr.io/nvidia/tritonserver:26.07-py3"
    assert flags(triton)["model-repository"] == f"s3://{bucket}/seedance/video"
    assert not any(a.startswith("--preload-model") for a in triton["args"])  # no such flag exists
    assert triton["resources"]["limits"]["nvidia.com/gpu"] == "1" == triton["resources"]["requests"]["nvidia.com/gpu"]
    assert triton["resources"]["requests"]["cpu"] == "3" and triton["resources"]["requests"]["memory"] == "12Gi"
    assert {p["name"]: p["containerPort"] for p in triton["ports"]} == {"http": 8000, "grpc": 8001, "metrics": 8002}


def test_no_caller_can_load_or_unload_models(plan_of):
    """explicit mode serves load requests, which may carry a model's files (code) inline; poll and none refuse
    them (core model_repository_manager.cc: "explicit model load / unload is not allowed ...")."""
    for deployment in plan_of("prod").of_type(DEPLOYMENT):
        if deployment.inputs["metadata"]["namespace"].startswith("triton-"):
            (triton,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
            assert flags(triton)["model-control-mode"] in {"poll", "none"} and "load-model" not in flags(triton)


def test_a_model_that_fails_to_load_fails_only_itself(stack_plan):
    """Both default to true: the server would exit at start-up on one bad model, or never report ready,
    and every scale-up and spot replacement after it would fail."""
    assert {"exit-on-error": "false", "strict-readiness": "false"}.items() <= flags(container(stack_plan)).items()


def test_published_models_load_without_a_rollout(stack_plan):
    triton = flags(container(stack_plan))
    serving = stack_config(stack_plan.stack).serving[0]
    assert triton["model-control-mode"] == "poll"
    assert triton["repository-poll-secs"] == str(serving.repository_poll_seconds)


def test_the_first_run_on_an_empty_bucket_gives_triton_a_repository(plan_of):
    """Triton exits when its prefix holds nothing ("repository path is not a valid directory"): the run
    that creates the bucket writes a file at each served prefix's root (never inside a model directory,
    which Triton would try to load), and each Deployment waits for it."""
    prod = plan_of("prod")
    objects = {o.inputs["key"]: o for o in prod.of_type("aws:s3/bucketObjectv2:BucketObjectv2")}
    for deployment in prod.of_type(DEPLOYMENT):
        if not deployment.inputs["metadata"]["namespace"].startswith("triton-"):
            continue
        (triton,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
        prefix = flags(triton)["model-repository"].split("/", 3)[3]
        (marker,) = [o for key, o in objects.items() if key.rpartition("/")[0] == prefix]
        assert marker.inputs["bucket"] == prod.outputs["model_repository_bucket"]
        assert marker.urn in deployment.dependencies


def test_only_the_client_namespaces_call_triton_and_only_prometheus_scrapes_it(plan_of):
    """A pod elsewhere reaches no port: the namespace denies by default, and Triton's own policy names
    its callers by the namespace name the API server sets (a label nobody can give another namespace)."""
    prod = plan_of("prod")
    policies = {
        p.inputs["metadata"]["name"]: p.inputs["spec"]
        for p in prod.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if p.inputs["metadata"]["namespace"] == "triton-video"
    }
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    callers, scrapes = policies["triton-video"]["ingress"]
    assert callers["from"] == [
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["video-api"]}]
            }
        }
    ]
    assert {p["port"] for p in callers["ports"]} == {8000, 8001}
    (prometheus,) = scrapes["from"]
    assert prometheus["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}
    assert prometheus["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "server"
    assert [p["port"] for p in scrapes["ports"]] == [8002]
    assert policies["triton-video"]["egress"] == [{"ports": [{"port": 443, "protocol": "TCP"}]}]
    (namespace,) = [
        n for n in prod.of_type("kubernetes:core/v1:Namespace") if n.inputs["metadata"]["name"] == "triton-video"
    ]
    assert namespace.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_the_prometheus_labels_are_the_charts(plan_of):
    """The scrape rule admits the pods the pinned chart labels as its server (rendered with the real chart)."""
    from components.monitoring.config import PROMETHEUS_SERVER_LABELS
    from tests.helm import render_release

    prod = plan_of("prod")
    (release,) = [r for r in prod.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "prometheus"]
    (server,) = [o for o in render_release(release, "1.35") if o["kind"] == "Deployment"]
    assert PROMETHEUS_SERVER_LABELS.items() <= server["spec"]["template"]["metadata"]["labels"].items()


def test_probes_drain_and_security(stack_plan):
    triton = container(stack_plan)
    pod = stable(stack_plan).inputs["spec"]["template"]["spec"]
    assert triton["startupProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert triton["startupProbe"]["failureThreshold"] * triton["startupProbe"]["periodSeconds"] >= 600
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert triton["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    drain = int(triton["lifecycle"]["preStop"]["exec"]["command"][1])
    exit_timeout = int(next(a for a in triton["args"] if a.startswith("--exit-timeout-secs=")).split("=")[1])
    assert pod["terminationGracePeriodSeconds"] > drain + exit_timeout
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 1000
    security = triton["securityContext"]
    assert security["allowPrivilegeEscalation"] is False and security["capabilities"] == {"drop": ["ALL"]}
    assert security["readOnlyRootFilesystem"] is True
    assert pod["nodeSelector"]["seedance.io/workload-class"] == "online"
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_spread_and_rollout(stack_plan):
    spec = stable(stack_plan).inputs["spec"]
    zone, host = spec["template"]["spec"]["topologySpreadConstraints"]
    assert (zone["topologyKey"], zone["maxSkew"], zone["whenUnsatisfiable"]) == (
        "topology.kubernetes.io/zone",
        2,
        "ScheduleAnyway",
    )
    assert host["topologyKey"] == "kubernetes.io/hostname"
    assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}
    assert "replicas" not in spec  # the autoscaler owns the count


def test_autoscaler_keeps_the_warm_pool_and_reads_exactly_the_adapter_metrics(plan_of):
    for stack, warm_pool in (("dev", 1), ("staging", 2), ("prod", 2)):
        plan = plan_of(stack)
        (hpa,) = plan.of_type(HPA)
        spec = hpa.inputs["spec"]
        assert spec["minReplicas"] == warm_pool and spec["maxReplicas"] >= warm_pool
        assert all(m["type"] == "Pods" for m in spec["metrics"])  # never CPU
        assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] >= 300
        assert spec["behavior"]["scaleUp"]["stabilizationWindowSeconds"] > 0
        (adapter,) = [
            r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "prometheus-adapter"
        ]
        published = {rule["name"]["as"] for rule in values_of(adapter)["rules"]["custom"]}
        assert {m["pods"]["metric"]["name"] for m in spec["metrics"]} == published


def test_disruption_budget_service_and_canary(plan_of):
    prod = plan_of("prod")
    (budget,) = prod.of_type("kubernetes:policy/v1:PodDisruptionBudget")
    assert budget.inputs["spec"]["maxUnavailable"] == 1
    assert budget.inputs["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/name": "triton-video"}
    (service,) = prod.of_type("kubernetes:core/v1:Service")
    assert service.inputs["spec"]["type"] == "ClusterIP"
    canary = next(d for d in prod.of_type(DEPLOYMENT) if d.inputs["metadata"]["name"] == "triton-video-canary")
    assert canary.inputs["spec"]["replicas"] == 1
    assert canary.inputs["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] == "triton-video"
    assert "seedance/video-next" in canary.inputs["spec"]["template"]["spec"]["containers"][0]["args"][0]


def test_service_account_role_reads_only_the_model_prefixes(plan_of):
    prod = plan_of("prod")
    (account,) = [
        a
        for a in prod.of_type("kubernetes:core/v1:ServiceAccount")
        if a.inputs["metadata"]["namespace"] == "triton-video"
    ]
    role_arn = account.inputs["metadata"]["annotations"]["eks.amazonaws.com/role-arn"]
    (role,) = [r for r in prod.of_type("aws:iam/role:Role") if r.name.endswith("triton-video-role")]
    assert role_arn.endswith(f":role/{role.inputs['name']}")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]["Condition"]["StringEquals"]
    assert "system:serviceaccount:triton-video:triton-video" in trust.values()
    (policy,) = [p for p in prod.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("triton-video-models")]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    bucket = prod.outputs["model_repository_bucket"]
    assert statements[1]["Resource"] == [
        f"arn:aws:s3:::{bucket}/seedance/video/*",
        f"arn:aws:s3:::{bucket}/seedance/video-next/*",
    ]
    assert statements[2]["Condition"]["StringEquals"]["kms:ViaService"] == "s3.us-east-1.amazonaws.com"


def test_triton_may_make_every_s3_call_it_makes_at_start_up(plan_of):
    """Each call of Triton's S3 filesystem (core src/filesystem/implementations/s3.h) as IAM authorises it,
    through the role, the S3 gateway endpoint and the bucket policy: HeadBucket before every directory
    check is s3:ListBucket with no prefix; ListObjectsV2 of `<dir>/`; HeadObject and GetObject of each
    file are s3:GetObject; the objects are SSE-KMS, so kms:Decrypt through S3."""
    prod = plan_of("prod")
    bucket = f"arn:aws:s3:::{prod.outputs['model_repository_bucket']}"
    (role_policy,) = [
        json.loads(p.inputs["policy"])
        for p in prod.of_type("aws:iam/rolePolicy:RolePolicy")
        if p.name.endswith("triton-video-models")
    ]
    endpoint = json.loads(
        next(
            e for e in prod.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if e.inputs["vpcEndpointType"] == "Gateway"
        ).inputs["policy"]
    )
    (bucket_policy,) = [
        json.loads(p.inputs["policy"]) for p in prod.of_type("aws:s3/bucketPolicy:BucketPolicy") if "models" in p.name
    ]
    through_endpoint = {
        "aws:PrincipalAccount": OFFLINE_ACCOUNT_ID,
        "aws:ResourceAccount": OFFLINE_ACCOUNT_ID,
        "aws:SecureTransport": "true",
    }
    for prefix in ("seedance/video", "seedance/video-next"):
        calls = [
            Request("s3:ListBucket", bucket),  # HeadBucket
            Request("s3:ListBucket", bucket, {"s3:prefix": f"{prefix}/"}),
            Request("s3:ListBucket", bucket, {"s3:prefix": f"{prefix}/identity/1/"}),
            Request("s3:GetObject", f"{bucket}/{prefix}/identity/config.pbtxt"),  # HeadObject, GetObject
            Request("s3:GetObject", f"{bucket}/{prefix}/identity/1/model.py"),
        ]
        for call in calls:
            with_context = Request(call.action, call.resource, {**call.context, **through_endpoint})
            assert allows(role_policy, call), call
            assert allows(endpoint, with_context) and not denies(bucket_policy, with_context), call
    assert not allows(role_policy, Request("s3:GetObject", f"{bucket}/other-team/model/config.pbtxt"))
    assert not allows(role_policy, Request("s3:PutObject", f"{bucket}/seedance/video/identity/config.pbtxt"))
    decrypt = Request("kms:Decrypt", prod.outputs["kms_key_arn"], {"kms:ViaService": "s3.us-east-1.amazonaws.com"})
    assert allows(role_policy, decrypt)
    assert not allows(role_policy, Request(decrypt.action, decrypt.resource))  # only through S3


def test_only_the_sets_publisher_writes_its_models(plan_of):
    """A model is code the servers run: under a served prefix, a model file is written by that set's
    publisher role only (the bucket policy denies everyone else, admins and the serving role included);
    the platform's marker at the prefix's root stays the deployer's to write."""
    prod = plan_of("prod")
    bucket = f"arn:aws:s3:::{prod.outputs['model_repository_bucket']}"
    (bucket_policy,) = [
        json.loads(p.inputs["policy"]) for p in prod.of_type("aws:s3/bucketPolicy:BucketPolicy") if "models" in p.name
    ]
    (publisher,) = [r for r in prod.of_type("aws:iam/role:Role") if r.name.endswith("triton-video-publisher")]
    publisher_arn = f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/{publisher.inputs['name']}"
    (publish,) = [
        json.loads(p.inputs["policy"])
        for p in prod.of_type("aws:iam/rolePolicy:RolePolicy")
        if p.name.endswith("triton-video-publish")
    ]
    admin = f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/platform-admins"
    for prefix in ("seedance/video", "seedance/video-next"):
        model_file = f"{bucket}/{prefix}/identity/2/model.py"
        for action in ("s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"):
            assert denies(bucket_policy, Request(action, model_file, {"aws:PrincipalArn": admin}))
            assert not denies(bucket_policy, Request(action, model_file, {"aws:PrincipalArn": publisher_arn}))
        assert allows(publish, Request("s3:PutObject", model_file))
        assert allows(publish, Request("s3:PutObjectTagging", model_file))  # a tagged upload (the example's)
        marker = f"{bucket}/{prefix}/README.md"
        assert not denies(bucket_policy, Request("s3:PutObject", marker, {"aws:PrincipalArn": admin}))
    assert not allows(publish, Request("s3:PutObject", f"{bucket}/other-team/m/config.pbtxt"))
    kms = Request("kms:GenerateDataKey", prod.outputs["kms_key_arn"], {"kms:ViaService": "s3.us-east-1.amazonaws.com"})
    assert allows(publish, kms) and not allows(publish, Request(kms.action, kms.resource))


def test_model_repository_is_private_encrypted_and_reachable_through_the_endpoint(stack_plan):
    bucket = stack_plan.outputs["model_repository_bucket"]
    (encryption,) = [
        e
        for e in stack_plan.of_type(
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
        )
        if "models" in e.name
    ]
    default = encryption.inputs["rules"][0]["applyServerSideEncryptionByDefault"]
    assert default == {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": stack_plan.outputs["kms_key_arn"]}
    (block,) = [
        b for b in stack_plan.of_type("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock") if "models" in b.name
    ]
    assert all(
        block.inputs[k] is True
        for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    )
    gateway = next(
        e for e in stack_plan.of_type("aws:ec2/vpcEndpoint:VpcEndpoint") if e.inputs["vpcEndpointType"] == "Gateway"
    )
    policy = json.loads(gateway.inputs["policy"])
    ours = {"aws:PrincipalAccount": OFFLINE_ACCOUNT_ID, "aws:ResourceAccount": OFFLINE_ACCOUNT_ID}
    assert allows(policy, Request("s3:ListBucket", f"arn:aws:s3:::{bucket}", ours))
    assert allows(policy, Request("s3:GetObject", f"arn:aws:s3:::{bucket}/seedance/video/config.pbtxt", ours))


def test_a_pinned_digest_is_what_runs(tmp_path):
    """A release tag can be moved; a digest cannot: with one, the pods name it, from the configured registry."""
    import yaml

    from tests.seedance.test_cli import REPO

    digest = "sha256:" + "ab" * 32
    serving = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["seedance-gpu:serving"]
    stack_file = bad_stack(
        tmp_path,
        ["seedance-gpu:serving"],
        [
            {
                **serving[0],
                "image_digest": digest,
                "registry": "123456789012.dkr.ecr.us-west-2.amazonaws.com/tritonserver",
            }
        ],
    )
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file), "--json", str(tmp_path / "p.json")]) == 0
    plan = json.loads((tmp_path / "p.json").read_text())
    (deployment,) = [r for r in plan["resources"] if r["type"] == DEPLOYMENT and r["name"].endswith("deployment")]
    assert (
        deployment["inputs"]["spec"]["template"]["spec"]["containers"][0]["image"]
        == f"123456789012.dkr.ecr.us-west-2.amazonaws.com/tritonserver:26.07-py3@{digest}"
    )


def test_objects_match_the_schemas_and_pass_checkov(plan_of, tmp_path):
    prod = plan_of("prod")
    manifests = declared_manifests(prod, "seedance:serving:TritonServing")
    assert schema_errors(manifests, stack_config("prod").cluster.kubernetes_version) == []
    assert schema_errors(declared_manifests(plan_of("dev"), "seedance:serving:TritonServing"), "1.33") == []
    assert_checkov_clean_and_every_skip_needed(manifests, tmp_path)


def test_plan_json_has_the_serving_objects(tmp_path):
    out = tmp_path / "prod.json"
    assert main(["plan", "--stack", "prod", "--json", str(out)]) == 0
    types = {r["type"] for r in json.loads(out.read_text())["resources"]}
    assert {DEPLOYMENT, HPA, "kubernetes:policy/v1:PodDisruptionBudget"} <= types


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"image_version": "latest"}, 'seedance-gpu:serving[0].image_version = "latest": must pin a Triton release'),
        (
            {"warm_pool": 3, "max_replicas": 2},
            "seedance-gpu:serving[0].warm_pool = 3: the warm pool is larger than max_replicas (2)",
        ),
        (
            {"gpus": 5},
            "seedance-gpu:serving[0].gpus = 5: group online may launch g6.xlarge with 4 GPU(s); allowed: 1 to 4",
        ),
        ({"node_group": "batch"}, 'seedance-gpu:serving[0].node_group = "batch": must name an online GPU node group'),
        ({"service_type": "LoadBalancer"}, 'seedance-gpu:serving[0].service_type = "LoadBalancer"'),
        ({"service_type": "internal-nlb"}, 'service_type = "internal-nlb": needs the AWS Load Balancer Controller'),
        (
            {"model_control_mode": "explicit"},
            'serving[0].model_control_mode = "explicit": opens Triton\'s model load API',
        ),
    ],
)
def test_bad_serving_config_exits_2_naming_the_key(tmp_path, capsys, change, expected):
    import yaml

    from tests.seedance.test_cli import REPO

    serving = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["seedance-gpu:serving"]
    stack_file = bad_stack(tmp_path, ["seedance-gpu:serving"], [{**serving[0], **change}])
    assert main(["plan", "--stack", "dev", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def minutes(duration):
    assert duration.endswith("m"), duration
    return int(duration[:-1])


def test_pulumi_waits_long_enough_for_a_replica_on_a_new_gpu_node(stack_plan):
    """A replica may wait for the autoscaler to boot a GPU node, then pull the image, then load its
    models: the Deployment's create timeout covers all three; an update covers them once per replaced pod."""
    config = stack_config(stack_plan.stack)
    provision = minutes(autoscaler_values(stack_plan)["extraArgs"]["max-node-provision-time"])
    for serving in config.serving:
        (deployment,) = [
            d for d in stack_plan.of_type(DEPLOYMENT) if d.inputs["metadata"]["name"] == f"triton-{serving.name}"
        ]
        per_pod = (serving.image_pull_budget_seconds + serving.startup_budget_seconds) / 60
        timeouts = deployment.custom_timeouts
        assert minutes(timeouts["create"]) >= provision + per_pod
        assert minutes(timeouts["update"]) >= provision + serving.max_replicas * per_pod


def autoscaler_values(plan):
    (release,) = [r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "cluster-autoscaler"]
    return release.inputs["values"]


def test_every_replica_the_hpa_may_ask_for_fits_the_group_at_its_maximum(stack_plan):
    """Read from the plan's own objects: HPA maxima, the surge and canary pods, each pod's requests,
    and the group's largest size and instance types. The autoscaler can add nodes up to the group's
    maximum, no further, so every pod it may be asked to place must fit there."""
    hpas = {h.inputs["spec"]["scaleTargetRef"]["name"]: h for h in stack_plan.of_type(HPA)}
    needed, per_pod = 0, None
    for deployment in stack_plan.of_type(DEPLOYMENT):
        spec = deployment.inputs["spec"]
        name = deployment.inputs["metadata"]["name"]
        if name in hpas:
            needed += hpas[name].inputs["spec"]["maxReplicas"] + spec["strategy"]["rollingUpdate"]["maxSurge"]
        else:
            needed += spec["replicas"]  # the canary
        per_pod = spec["template"]["spec"]["containers"][0]["resources"]["requests"]
    online = next(g for g in stack_config(stack_plan.stack).gpu_node_groups if g.name == "online")
    (asg,) = [a for a in stack_plan.of_type("aws:autoscaling/group:Group") if a.name.endswith("-online-asg")]
    pool = next(p for p in stack_plan.outputs["gpu_pools"] if p["name"] == "online")
    fits = []
    for instance_type, gpus in pool["gpus_per_node"].items():
        spec = gpu_instance_type(instance_type)
        fits.append(
            min(
                gpus // int(per_pod["nvidia.com/gpu"]),
                int((spec.vcpus - 1) // float(per_pod["cpu"])),
                int(spec.memory_gib * 0.85 // int(str(per_pod["memory"]).removesuffix("Gi"))),
            )
        )
    assert needed <= int(asg.inputs["maxSize"]) * min(fits), (stack_plan.stack, needed, fits)
    assert online.max_gpus // online.gpus_per_instance == int(asg.inputs["maxSize"])


def test_a_config_whose_replicas_cannot_all_be_placed_is_refused(tmp_path, capsys):
    stack_file = bad_stack(tmp_path, ["seedance-gpu:serving", 0, "max_replicas"], 23, stack="prod")
    assert main(["plan", "--stack", "prod", "--stack-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert "seedance-gpu:serving[0].max_replicas = 23: group online holds 24 Triton pods" in err
    assert "may be asked for 25" in err and "gpu_node_groups[1].max_gpus" in err


def test_only_the_deployer_and_break_glass_change_the_model_buckets_settings(plan_of):
    """A lifecycle rule could expire every model, a new policy lift the publishers' guard: the bucket's own
    settings are the deployer's and break-glass's, admins and the publisher roles included in the denial."""
    from components.serving.model_repository import BUCKET_SETTINGS_ACTIONS
    from seedance.offline_cloud import OFFLINE_DEPLOYER_ROLE

    prod = plan_of("prod")
    bucket = f"arn:aws:s3:::{prod.outputs['model_repository_bucket']}"
    (bucket_policy,) = [
        json.loads(p.inputs["policy"]) for p in prod.of_type("aws:s3/bucketPolicy:BucketPolicy") if "models" in p.name
    ]
    keepers = [
        f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/{OFFLINE_DEPLOYER_ROLE}",
        *stack_config("prod").cluster.break_glass_principal_arns,
    ]
    others = [
        f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/platform-admins",
        f"arn:aws:iam::{OFFLINE_ACCOUNT_ID}:role/seedance-prod-triton-video-publisher",
        "arn:aws:iam::123456789012:role/video-ml-ci",
    ]
    for action in [*BUCKET_SETTINGS_ACTIONS, "s3:putlifecycleconfiguration"]:
        for arn in others:
            assert denies(bucket_policy, Request(action, bucket, {"aws:PrincipalArn": arn})), (action, arn)
        for arn in keepers:
            assert not denies(bucket_policy, Request(action, bucket, {"aws:PrincipalArn": arn})), (action, arn)
    assert {
        "s3:PutLifecycleConfiguration",
        "s3:PutBucketVersioning",
        "s3:PutBucketPolicy",
        "s3:DeleteBucketPolicy",
    } <= set(BUCKET_SETTINGS_ACTIONS)
