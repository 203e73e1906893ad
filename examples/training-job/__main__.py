"""A training Job on the platform's `batch` pool, writing checkpoints to a claim of its checkpoint class.

Everything platform-specific (node selector, tolerations, storage class, kubeconfig) comes from the
platform stack through `PlatformReference`; nothing is copied by hand.
"""

import pulumi
import pulumi_kubernetes as k8s

from components.platform_reference import PlatformReference

config = pulumi.Config()
platform = PlatformReference(config.require("platform_stack"))
gpus = config.get_int("gpus") or 1
batch = platform.pool("batch")


def fits(pool):
    if gpus > pool.max_gpus_per_pod:
        raise pulumi.RunError(f"invalid config training-job:gpus = {gpus}: the batch pool's smallest nodes have "
                              f"{pool.max_gpus_per_pod} GPU(s); allowed: 1 to {pool.max_gpus_per_pod}")
    return pool


batch = batch.apply(fits)
cluster = pulumi.ResourceOptions(provider=k8s.Provider("platform", kubeconfig=platform.kubeconfig))
namespace = k8s.core.v1.Namespace("training", metadata={"name": "training-job"}, opts=cluster)
in_namespace = pulumi.ResourceOptions(provider=cluster.provider, depends_on=[namespace])

claim = k8s.core.v1.PersistentVolumeClaim(
    "checkpoints",
    metadata={"name": "checkpoints", "namespace": "training-job"},
    spec={"accessModes": ["ReadWriteOnce"],
          "storageClassName": platform.contract.apply(lambda c: c.storage_classes.checkpoint),
          "resources": {"requests": {"storage": f"{config.get_int('checkpoint_gib') or 64}Gi"}}},
    opts=in_namespace,
)
# The source's 1 vCPU : 4 GiB; 3 vCPUs per GPU fit the pool's smallest 1-GPU nodes (4 vCPUs, 16 GiB).
resources = {"cpu": str(3 * gpus), "memory": f"{12 * gpus}Gi", "nvidia.com/gpu": str(gpus)}
job = k8s.batch.v1.Job(
    "train",
    metadata={"name": "train", "namespace": "training-job"},
    spec={
        "backoffLimit": 6,  # spot interruptions restart the pod; it resumes from the last checkpoint
        "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": "train"}},
            "spec": {
                "restartPolicy": "OnFailure",
                "nodeSelector": batch.apply(lambda pool: pool.node_selector),
                "tolerations": batch.apply(lambda pool: pool.tolerations),
                "securityContext": {"runAsNonRoot": True, "runAsUser": 10001, "fsGroup": 10001},
                "containers": [{
                    "name": "train",
                    "image": config.require("image"),
                    "command": ["python", "-m", "train", "--checkpoint-dir=/checkpoints", "--resume"],
                    "resources": {"requests": resources, "limits": resources},
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    "volumeMounts": [{"name": "checkpoints", "mountPath": "/checkpoints"}],
                }],
                "volumes": [{"name": "checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints"}}],
            },
        },
    },
    opts=pulumi.ResourceOptions(provider=cluster.provider, depends_on=[claim]),
)
pulumi.export("job", job.metadata.apply(lambda m: f"{m['namespace']}/{m['name']}"))
