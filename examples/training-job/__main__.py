"""A training Job on the platform's `batch` pool that survives spot: the pattern a team should copy.

- Interruptions, rebalances and scale-downs do not count as failures: `podFailurePolicy` ignores pods
  the cluster disrupted (condition DisruptionTarget); only the trainer's own failures use up
  `backoffLimit`. (That needs `restartPolicy: Never`: a replacement pod, not an in-place restart.)
- On SIGTERM the trainer has `flush_seconds` to write a checkpoint atomically (a temporary file, fsync,
  rename) and must then exit non-zero, or the Job would count the run as complete. A spot notice comes
  two minutes before the instance goes; the termination handler drains at once, so the flush must fit.
- The autoscaler never evicts it to pack nodes (`safe-to-evict: "false"`).
- `pulumi up` does not wait for training to finish (`pulumi.com/skipAwait`).
- The claim binds where the pod first runs (WaitForFirstConsumer) and the volume stays in that zone, so
  the Job is pinned to one zone of its pool (the contract's `GpuPool.zones`): after an interruption its
  replacement asks for a node in the volume's zone, which a single-zone pool (`single_zone`, prod's
  `train`) always launches. docs/training-on-spot.md says the rest.
- The trainer is the reference one beside this program (trainer/train.py), shipped in a ConfigMap: it
  resumes from its newest complete checkpoint and, on SIGTERM, finishes the step, writes one atomically
  and exits 143. NCCL and data loaders get a memory-backed /dev/shm of `shm_gib` (the default is 64 MiB).

Everything platform-specific (namespace, node selector, tolerations, storage class, kubeconfig, cost
labels) comes from the platform stack through `PlatformReference`; nothing is copied by hand, and the
program creates nothing cluster-scoped.
"""

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from seedance_client.contract import QUEUE_LABEL
from seedance_client.reference import PlatformReference

config = pulumi.Config()
# 1.1 is enough: a 1.2 platform adds its pools' zones, which pin the job (`pinned` below) when it has them.
platform = PlatformReference(config.require("platform_stack"), requires="1.1")
gpus = config.get_int("gpus") or 1
flush_seconds = config.get_int("flush_seconds") or 60
pool_name = config.get("pool") or "batch"
shm_gib = config.get_int("shm_gib") or 8
# The platform's cost labels (contract `cost_label_keys`): the cloud cost tags' keys, this stack's env and the
# app's name; OpenCost and the cost dashboards group by them.
labels = {
    "team": config.require("team"),
    "cost-center": config.require("cost_center"),
    "env": pulumi.get_stack(),
    "app.kubernetes.io/name": "train",
}
# Resumed work is lost work: a spot notice leaves 120 s; the handler's drain and the kubelet take some.
if not 10 <= flush_seconds <= 90:
    raise pulumi.RunError(
        f"invalid config training-job:flush_seconds = {flush_seconds}: a spot notice leaves two "
        "minutes, less the drain; allowed: 10 to 90"
    )
if not 1 <= shm_gib <= 256:
    raise pulumi.RunError(
        f"invalid config training-job:shm_gib = {shm_gib}: counted in the pod's memory; allowed: 1 to 256"
    )


def fits(pool):
    if gpus > pool.max_gpus_per_pod:
        raise pulumi.RunError(
            f"invalid config training-job:gpus = {gpus}: the {pool.name} pool's smallest nodes have "
            f"{pool.max_gpus_per_pod} GPU(s); allowed: 1 to {pool.max_gpus_per_pod}"
        )
    return pool


def cost_labels(keys):
    missing = [key for key in keys if key not in labels]
    if missing:
        raise pulumi.RunError(
            f"the platform asks every object for the labels {', '.join(keys)}; missing: {', '.join(missing)}"
        )
    return labels


batch = platform.pool(pool_name).apply(fits)


def pinned(pool):
    """The pool's node selector, and its zone: the one it launches in, else its first (a 1.0/1.1 platform
    names no zones; then the claim's volume alone holds later pods to its zone)."""
    zone = pool.single_zone or (pool.zones[0] if pool.zones else None)
    return {**pool.node_selector, **({"topology.kubernetes.io/zone": zone} if zone else {})}


# A namespace the team owns (its quota applies there, and its access entry reaches it); default: the
# platform's training namespace, for a platform without tenants.
namespace = platform.contract.apply(lambda c: config.get("namespace") or c.storage_classes.training_namespace)
checkpoint_every = platform.contract.apply(lambda c: c.storage_classes.checkpoint_interval_seconds or 900)
object_labels = platform.contract.apply(lambda c: cost_labels(c.cost_label_keys))
cluster = pulumi.ResourceOptions(provider=k8s.Provider("platform", kubeconfig=platform.kubeconfig))
trainer = k8s.core.v1.ConfigMap(
    "trainer",
    metadata={"name": "trainer", "namespace": namespace, "labels": object_labels},
    data={"train.py": (Path(__file__).parent / "trainer" / "train.py").read_text()},
    opts=cluster,
)

claim = k8s.core.v1.PersistentVolumeClaim(
    "checkpoints",
    metadata={"name": "checkpoints", "namespace": namespace, "labels": object_labels},
    spec={
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": platform.contract.apply(lambda c: c.storage_classes.checkpoint),
        "resources": {"requests": {"storage": f"{config.get_int('checkpoint_gib') or 64}Gi"}},
    },
    opts=cluster,
)
# The source's 1 vCPU : 4 GiB; 3 vCPUs per GPU fit the pool's smallest 1-GPU nodes (4 vCPUs, 16 GiB).
resources = {"cpu": str(3 * gpus), "memory": f"{12 * gpus + shm_gib}Gi", "nvidia.com/gpu": str(gpus)}
# On a platform that queues GPUs (contract 1.4 `queues`), the Job names its batch queue; Kueue admits it whole.
job_labels = platform.contract.apply(
    lambda c: {**cost_labels(c.cost_label_keys), **({QUEUE_LABEL: c.queues["batch"]} if c.queues else {})}
)
job = k8s.batch.v1.Job(
    "train",
    metadata={
        "name": "train",
        "namespace": namespace,
        "labels": job_labels,
        "annotations": {"pulumi.com/skipAwait": "true"},
    },
    spec={
        "backoffLimit": 3,  # the trainer's own failures; disruptions are not counted (below)
        "podFailurePolicy": {
            "rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            ]
        },
        "template": {
            "metadata": {
                "labels": object_labels,
                "annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
            },
            "spec": {
                "restartPolicy": "Never",
                "priorityClassName": platform.contract.apply(lambda c: c.priority_classes.get("batch")),
                "terminationGracePeriodSeconds": flush_seconds + 10,
                "nodeSelector": batch.apply(pinned),
                "tolerations": batch.apply(lambda pool: pool.tolerations),
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 10001,
                    "fsGroup": 10001,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "train",
                        "image": config.require("image"),
                        "command": checkpoint_every.apply(
                            lambda every: [
                                "python",
                                "/opt/trainer/train.py",
                                "--checkpoint-dir=/checkpoints",
                                f"--flush-seconds={flush_seconds}",
                                f"--checkpoint-every-seconds={int(every)}",
                            ]
                        ),
                        "resources": {"requests": resources, "limits": resources},
                        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                        "volumeMounts": [
                            {"name": "checkpoints", "mountPath": "/checkpoints"},
                            {"name": "trainer", "mountPath": "/opt/trainer", "readOnly": True},
                            {"name": "shm", "mountPath": "/dev/shm"},
                        ],
                    }
                ],
                "volumes": [
                    {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "checkpoints"}},
                    {"name": "trainer", "configMap": {"name": "trainer"}},
                    # Memory-backed, counted in the container's memory limit (sized below).
                    {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{shm_gib}Gi"}},
                ],
            },
        },
    },
    opts=pulumi.ResourceOptions(provider=cluster.provider, depends_on=[claim, trainer]),
)
pulumi.export("job", job.metadata.apply(lambda m: f"{m['namespace']}/{m['name']}"))
