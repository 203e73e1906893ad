"""Every pod the plan runs meets the Pod Security Standards level its namespace is allowed: the stack
config's level for the namespaces it creates (restricted for any other), every control of baseline and
restricted, on every kind that carries a pod, declared or rendered from a Helm release by the gate. A
named platform agent may use the host paths and capabilities its exemption lists, nothing more. A namespace
left privileged is its pinned chart's (the device plugin's, the GPU agents'): only what the gate renders from
the release there (`rendered`) gets that level; a pod declared there meets baseline, like any other. In
Triton's namespaces (`non_root_namespaces`) a pod runs as non-root even in a user namespace of its own.
A kind that is not one of the pod-carrying kinds is searched for pods by their shape, at any depth (a
KubeRay cluster's head and workers, a training operator's replicas)."""

from policies.expectations import PLATFORM_EXEMPTIONS, PLATFORM_NAMESPACE_LEVELS
from policies.framework import Rule
from policies.readers.pods import LEVELS, Exemption, pods, violations


def exemption_of(config, namespace, workload) -> Exemption | None:
    for entry in config["exemptions"]:
        if entry["namespace"] == namespace and entry["workload"] == workload:
            return Exemption(
                namespace, workload, frozenset(entry.get("host_paths", [])), frozenset(entry.get("capabilities", []))
            )
    return None


def check(resource, config):
    for where, spec, metadata in pods(resource):
        yield from _judged(resource, config, where, spec, metadata)


def _judged(resource, config, where, spec, pod_meta):
    metadata = resource.props.get("metadata") or {}
    namespace = metadata.get("namespace") or "default"
    level = config["namespace_levels"].get(namespace, config["default_level"])
    allows = f"namespace {namespace} allows {level}"
    if level == "privileged" and not config["rendered"]:
        level, allows = "baseline", f"namespace {namespace} is privileged for its chart's pods only"
    exemption = exemption_of(config, namespace, metadata.get("name"))
    own_users_root = namespace not in config["non_root_namespaces"]
    for finding in violations(spec, level, pod_meta, exemption, own_users_root):
        yield f"{resource.name}{where}: {finding} ({allows})"


RULE = Rule(
    name="kubernetes-pod-enforce-pod-security-standards",
    description="Pods meet their namespace's Pod Security Standards level (baseline and restricted controls), "
    "in every pod-carrying kind and every object a Helm release renders.",
    severity="critical",
    remediation="Drop what the level forbids (privileged, host namespaces, hostPath, hostPort, added "
    "capabilities, Unconfined seccomp, Unmasked /proc; under restricted also run as non-root, "
    "drop ALL, no privilege escalation, RuntimeDefault seccomp), or move the workload to a namespace "
    "the stack config allows more, with the review that takes.",
    topics=("security", "kubernetes"),
    config={
        "namespace_levels": {
            "type": "object",
            "additionalProperties": {"enum": list(LEVELS)},
            "default": PLATFORM_NAMESPACE_LEVELS,
        },
        # Without the stack config (the pack under the engine) a namespace the platform table does not name
        # gets baseline, the least the stack gives any; `seedance check` gives the config's levels and
        # restricted to every other namespace.
        "default_level": {"enum": list(LEVELS), "default": "baseline"},
        # Where pods run as non-root even in a user namespace of their own (hostUsers: false), which
        # restricted otherwise lets run as UID 0: Triton's namespaces, the platform's promise.
        "non_root_namespaces": {"type": "array", "items": {"type": "string"}, "default": []},
        # Set by the gate for what it renders from the plan's Helm releases (the engine renders nothing).
        "rendered": {"type": "boolean", "default": False},
        "exemptions": {
            "type": "array",
            "default": PLATFORM_EXEMPTIONS,
            "items": {
                "type": "object",
                "required": ["namespace", "workload"],
                "properties": {
                    "namespace": {"type": "string"},
                    "workload": {"type": "string"},
                    "host_paths": {"type": "array", "items": {"type": "string"}},
                    "capabilities": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
    check_resource=check,
    type_prefix="kubernetes:",  # pod-carrying kinds by their table, every other kind by the pods' shape
    standards=(
        "Pod Security Standards: baseline",
        "Pod Security Standards: restricted",
        "CIS EKS 4.2.1",
        "CIS EKS 4.2.2",
        "CIS EKS 4.2.3",
        "CIS EKS 4.2.4",
        "CIS EKS 4.2.5",
        "CIS EKS 4.2.6",
        "CIS EKS 4.2.7",
        "CIS EKS 4.2.8",
        "CIS EKS 4.2.9",
    ),
)
