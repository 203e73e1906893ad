"""Pods by the Pod Security Standards, as Pod Security Admission checks them at v1.35
(k8s.io/pod-security-admission/policy, release v0.36.2: check_*.go): every control of the baseline and
restricted levels, over the pod of every kind that carries one, with each field read as the API server
reads it.

`violations(spec, level, metadata)` answers: which controls of `level` does this pod break, and where.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from components.plan.resources import POD_CARRIERS, pod_spec

LEVELS = ("privileged", "baseline", "restricted")
# Baseline: capabilities a container may add (PSS "Capabilities").
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# Baseline: the safe sysctls (PSS "Sysctls").
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)  # to 1.32
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
# Restricted: the volume types a pod may use (PSS "Volume Types").
RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)  # image: from 1.33
VOLUME_SOURCES = frozenset(
    {
        "hostPath",
        "awsElasticBlockStore",
        "azureDisk",
        "azureFile",
        "cephfs",
        "cinder",
        "fc",
        "flexVolume",
        "flocker",
        "gcePersistentDisk",
        "gitRepo",
        "glusterfs",
        "iscsi",
        "nfs",
        "photonPersistentDisk",
        "portworxVolume",
        "quobyte",
        "rbd",
        "scaleIO",
        "storageos",
        "vsphereVolume",
        *RESTRICTED_VOLUMES,
    }
)
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


@dataclass(frozen=True)
class Exemption:
    """What one named workload of a namespace may do beyond its level: host paths (exact, normalised)
    and capabilities. The platform's own node agents need these; nothing else gets them."""

    namespace: str
    workload: str
    host_paths: frozenset[str] = frozenset()
    capabilities: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Finding:
    control: str  # the PSS control's name
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.control}: {self.where} {self.detail}"


def on(value: Any) -> bool:
    """A switch that is on, however a manifest writes true."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def is_pod_spec(value: Any) -> bool:
    """A pod spec by its shape: `containers`, a list of mappings each naming an `image`."""
    found = value.get("containers") if isinstance(value, dict) else None
    return isinstance(found, list) and bool(found) and all(isinstance(c, dict) and "image" in c for c in found)


def pod_specs_by_shape(value: Any, path: str = "") -> Iterator[tuple[str, dict, dict]]:
    """(path, pod spec, its template's metadata) of every pod spec at any depth of an object, whatever its
    kind calls the field: a custom resource's pods are judged as a Deployment's are."""
    if isinstance(value, dict):
        for key, child in value.items():
            where = f"{path}.{key}" if path else str(key)
            if is_pod_spec(child):
                metadata = value.get("metadata")
                yield where, child, metadata if isinstance(metadata, dict) else {}
            else:
                yield from pod_specs_by_shape(child, where)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from pod_specs_by_shape(child, f"{path}[{index}]")


def containers(spec: dict) -> Iterator[tuple[str, dict]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for index, container in enumerate(spec.get(field) or []):
            if isinstance(container, dict):
                yield f"{field[:-1]} {container.get('name', index)}", container


def normal_path(path: Any) -> str:
    """A host path as the kernel resolves it lexically: `/./etc`, `//etc/`, `/mnt/../etc` are /etc."""
    return posixpath.normpath("/" + str(path).strip()).replace("//", "/")


def _context(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def baseline(spec: dict, metadata: dict, exemption: Exemption | None) -> Iterator[Finding]:
    pod = _context(spec.get("securityContext"))
    allowed_paths = exemption.host_paths if exemption else frozenset()
    allowed_caps = BASELINE_CAPABILITIES | (exemption.capabilities if exemption else frozenset())
    if on(_context(pod.get("windowsOptions")).get("hostProcess")):
        yield Finding("HostProcess", "pod", "runs as a Windows host process")
    for switch in ("hostNetwork", "hostPID", "hostIPC"):
        if on(spec.get(switch)):
            yield Finding("Host Namespaces", "pod", f"sets {switch}")
    for volume in spec.get("volumes") or []:
        host = _context(volume).get("hostPath")
        if host is not None and normal_path(_context(host).get("path")) not in allowed_paths:
            yield Finding(
                "HostPath Volumes", f"volume {volume.get('name')}", f"mounts the node's {_context(host).get('path')}"
            )
    for key, value in (metadata.get("annotations") or {}).items():
        if str(key).startswith(APPARMOR_ANNOTATION) and not (
            value == "runtime/default" or str(value).startswith("localhost/")
        ):
            yield Finding("AppArmor", f"annotation {key}", f"is {value}")
    for sysctl in pod.get("sysctls") or []:
        if _context(sysctl).get("name") not in SAFE_SYSCTLS:
            yield Finding("Sysctls", "pod", f"sets {_context(sysctl).get('name')}")
    yield from _context_findings("pod", pod)
    for where, container in containers(spec):
        context = _context(container.get("securityContext"))
        if on(_context(context.get("windowsOptions")).get("hostProcess")):
            yield Finding("HostProcess", where, "runs as a Windows host process")
        if on(context.get("privileged")):
            yield Finding("Privileged Containers", where, "is privileged")
        for capability in _context(context.get("capabilities")).get("add") or []:
            if str(capability) not in allowed_caps:
                yield Finding("Capabilities", where, f"adds {capability}")
        for port in container.get("ports") or []:
            if _number(_context(port).get("hostPort")) not in (None, 0):
                yield Finding("Host Ports", where, f"binds host port {_context(port).get('hostPort')}")
        # A user namespace of its own (hostUsers: false) lets baseline pods unmask /proc (1.35).
        if context.get("procMount") not in (None, "Default") and spec.get("hostUsers") is not False:
            yield Finding("/proc Mount Type", where, f"mounts /proc {context.get('procMount')}")
        for handler, host in _host_handlers(container):
            yield Finding("Host Probes / Lifecycle Hooks", where, f"{handler} targets host {host}")
        yield from _context_findings(where, context)


def _host_handlers(container: dict) -> Iterator[tuple[str, Any]]:
    """Probes and lifecycle hooks that name a host: the kubelet would call another machine (1.34)."""
    lifecycle = _context(container.get("lifecycle"))
    handlers = [(probe, _context(container.get(probe))) for probe in PROBES]
    handlers += [(f"lifecycle.{hook}", _context(lifecycle.get(hook))) for hook in ("postStart", "preStop")]
    for name, handler in handlers:
        for action in ("httpGet", "tcpSocket"):
            host = _context(handler.get(action)).get("host")
            if host:
                yield f"{name}.{action}", host


def _context_findings(where: str, context: dict) -> Iterator[Finding]:
    """The controls a pod's and a container's securityContext share."""
    apparmor = _context(context.get("appArmorProfile")).get("type")
    if apparmor not in (None, "RuntimeDefault", "Localhost"):
        yield Finding("AppArmor", where, f"sets AppArmor {apparmor}")
    selinux = _context(context.get("seLinuxOptions"))
    if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        yield Finding("SELinux", where, f"sets SELinux options {selinux}")
    if _context(context.get("seccompProfile")).get("type") == "Unconfined":
        yield Finding("Seccomp", where, "runs Unconfined")


def restricted(spec: dict, exemption: Exemption | None, root_in_own_users: bool = True) -> Iterator[Finding]:
    """Restricted's controls. `root_in_own_users=False`: UID 0 is refused in a user namespace of its own too
    (where the platform promises its pods run as non-root, whatever the level allows)."""
    pod = _context(spec.get("securityContext"))
    allowed_paths = exemption.host_paths if exemption else frozenset()
    for volume in spec.get("volumes") or []:
        sources = [k for k in _context(volume) if k in VOLUME_SOURCES]
        for source in sources:
            if source not in RESTRICTED_VOLUMES and not (
                source == "hostPath" and normal_path(_context(volume[source]).get("path")) in allowed_paths
            ):
                yield Finding("Volume Types", f"volume {volume.get('name')}", f"is a {source} volume")
    pod_non_root = pod.get("runAsNonRoot")
    pod_seccomp = _context(pod.get("seccompProfile")).get("type")
    # Root in a user namespace of its own is no node root: 1.35 lets such pods run as UID 0.
    own_users = spec.get("hostUsers") is False and root_in_own_users
    if _number(pod.get("runAsUser")) == 0 and not own_users:
        yield Finding("Running as Non-root user", "pod", "runs as UID 0")
    for where, container in containers(spec):
        context = _context(container.get("securityContext"))
        if context.get("allowPrivilegeEscalation") is not False:
            yield Finding("Privilege Escalation", where, "does not set allowPrivilegeEscalation: false")
        non_root = context.get("runAsNonRoot", pod_non_root)
        if non_root is not True and not own_users:
            yield Finding("Running as Non-root", where, "does not set runAsNonRoot: true (pod or container)")
        if _number(context.get("runAsUser")) == 0 and not own_users:
            yield Finding("Running as Non-root user", where, "runs as UID 0")
        if context.get("procMount") not in (None, "Default"):
            yield Finding("/proc Mount Type", where, f"mounts /proc {context.get('procMount')} (restricted: Default)")
        seccomp = _context(context.get("seccompProfile")).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            yield Finding("Seccomp", where, "sets no RuntimeDefault or Localhost seccomp profile (pod or container)")
        capabilities = _context(context.get("capabilities"))
        if "ALL" not in (capabilities.get("drop") or []):
            yield Finding("Capabilities", where, "does not drop ALL capabilities")
        allowed = {"NET_BIND_SERVICE"} | (exemption.capabilities if exemption else set())
        for capability in capabilities.get("add") or []:
            if str(capability) not in allowed:
                yield Finding("Capabilities", where, f"adds {capability} (restricted allows NET_BIND_SERVICE only)")


def violations(
    spec: dict,
    level: str,
    metadata: dict | None = None,
    exemption: Exemption | None = None,
    root_in_own_users: bool = True,
) -> list[Finding]:
    """The controls of `level` (and the levels below it) the pod breaks."""
    if level == "privileged":
        return []
    found = list(baseline(spec, metadata or {}, exemption))
    if level == "restricted":
        found += [f for f in restricted(spec, exemption, root_in_own_users) if f not in found]
    return found


def at_least(level: Any, required: str) -> bool:
    """Whether a namespace label holds pods to `required` or stricter (an unknown word is privileged, as PSA
    refuses it; absent is privileged, PSA's default)."""
    return level in LEVELS and LEVELS.index(level) >= LEVELS.index(required)


def pod_metadata(resource) -> dict:
    """The pod template's metadata (where AppArmor annotations live), or a Pod's own."""
    spec = resource.props.get("spec") or {}
    template = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or spec.get("template") or {}
    return template.get("metadata") or (resource.props.get("metadata") if "template" not in spec else {}) or {}


# Built-in kinds whose API schema holds no pod (the server drops a field its schema does not have): not
# searched, which is most of the plan's objects.
POD_FREE_KINDS = frozenset(
    f"kubernetes:{api}"
    for api in (
        "core/v1:ConfigMap",
        "core/v1:Secret",
        "core/v1:Service",
        "core/v1:ServiceAccount",
        "core/v1:Namespace",
        "core/v1:NamespacePatch",
        "core/v1:ResourceQuota",
        "core/v1:LimitRange",
        "core/v1:PersistentVolume",
        "core/v1:PersistentVolumeClaim",
        "rbac.authorization.k8s.io/v1:Role",
        "rbac.authorization.k8s.io/v1:ClusterRole",
        "rbac.authorization.k8s.io/v1:RoleBinding",
        "rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "networking.k8s.io/v1:NetworkPolicy",
        "scheduling.k8s.io/v1:PriorityClass",
        "storage.k8s.io/v1:StorageClass",
        "policy/v1:PodDisruptionBudget",
        "autoscaling/v2:HorizontalPodAutoscaler",
        "admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
        "apiregistration.k8s.io/v1:APIService",
    )
)


def pods(resource):
    """(where, pod spec, its metadata): a pod-carrying kind's one pod, else every pod found by its shape."""
    if resource.type in POD_CARRIERS:
        spec = pod_spec(resource)
        if spec is not None:
            yield "", spec, pod_metadata(resource)
        return
    if resource.type in POD_FREE_KINDS:
        return
    for path, spec, metadata in pod_specs_by_shape(resource.props.get("spec")):
        yield f" (spec.{path})", spec, metadata
