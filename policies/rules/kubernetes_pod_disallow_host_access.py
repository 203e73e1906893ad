"""Pods do not reach into their node: no privileged containers, no host network, PID or IPC namespace, no
privilege escalation, and no hostPath onto the node's system paths (`/`, /etc, /proc, the kubelet's and
the runtime's state). Any one of these is a way from the pod to the node and every pod on it."""

from components.plan.resources import POD_CARRIERS, pod_spec
from policies.framework import Rule

HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")


def _system_path(path: str, denied: list[str]) -> bool:
    normal = "/" + path.strip("/")
    return normal == "/" or any(normal == d or normal.startswith(d.rstrip("/") + "/") for d in denied)


def check(resource, config):
    spec = pod_spec(resource)
    if spec is None:
        return
    exempt = resource.props.get("metadata", {}).get("namespace") in config["exempt_namespaces"]
    if not exempt:
        for switch in HOST_NAMESPACES:
            if spec.get(switch) is True:
                yield f"{resource.name}: {switch} shares the node's namespace"
        for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
            context = container.get("securityContext") or {}
            if context.get("privileged") is True:
                yield f"{resource.name}: container {container.get('name')} is privileged"
            elif context.get("allowPrivilegeEscalation") is True:
                yield f"{resource.name}: container {container.get('name')} allows privilege escalation"
    for volume in spec.get("volumes", []):
        path = (volume.get("hostPath") or {}).get("path")
        if path is not None and _system_path(str(path), config["denied_host_paths"]):
            yield f"{resource.name}: volume {volume.get('name')} mounts the node's {path}"


RULE = Rule(
    name="kubernetes-pod-disallow-host-access",
    description="Pods run unprivileged in their own namespaces, without privilege escalation, and mount no "
                "node system path.",
    severity="critical",
    remediation="Drop privileged, hostNetwork, hostPID, hostIPC and allowPrivilegeEscalation; mount data "
                "directories (such as /mnt/...) instead of system paths.",
    topics=("security", "kubernetes"),
    config={"exempt_namespaces": {"type": "array", "items": {"type": "string"}, "default": []},
            "denied_host_paths": {"type": "array", "items": {"type": "string"}, "default": [
                "/etc", "/proc", "/sys", "/dev", "/boot", "/root", "/home", "/run", "/var/run", "/var/lib/kubelet",
                "/var/lib/containerd", "/var/lib/docker", "/usr", "/bin", "/sbin", "/lib"]}},
    check_resource=check,
    resource_types=frozenset(POD_CARRIERS),
    standards=("CIS EKS 4.2.1", "CIS EKS 4.2.2", "CIS EKS 4.2.3", "CIS EKS 4.2.4", "CIS EKS 4.2.5",
               "EKS BPG: Pod security - restrict hostPath"),
)
