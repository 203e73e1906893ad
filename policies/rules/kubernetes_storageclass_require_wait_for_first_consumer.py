"""Local (no-provisioner) StorageClasses bind only once the pod has a node."""

from components.plan.resources import K8S_STORAGE_CLASS
from policies.framework import Rule


def check(resource, config):
    if (
        resource.type == K8S_STORAGE_CLASS
        and resource.props.get("provisioner") == "kubernetes.io/no-provisioner"
        and resource.props.get("volumeBindingMode") != "WaitForFirstConsumer"
    ):
        yield (
            f"{resource.name} binds local volumes immediately: a claim can bind a disk on a node its pod cannot "
            "use; set WaitForFirstConsumer"
        )


RULE = Rule(
    name="kubernetes-storageclass-require-wait-for-first-consumer",
    description="kubernetes.io/no-provisioner StorageClasses use volumeBindingMode WaitForFirstConsumer.",
    severity="high",
    remediation="Set volumeBindingMode: WaitForFirstConsumer.",
    topics=("kubernetes", "storage"),
    check_resource=check,
    resource_types=frozenset({K8S_STORAGE_CLASS}),
)
