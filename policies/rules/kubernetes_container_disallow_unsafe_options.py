"""What the platform's programs are told at start, wherever their pods are (a chart's, the program's, any
kind, found by shape): nothing opens a door or turns off a cost control. The cluster autoscaler keeps
scale-down on and removes an unneeded node within the minutes the stack config sets (idle GPU nodes cost
the most); metrics-server verifies the kubelets' certificates; Prometheus keeps its lifecycle and admin
APIs off (a POST would reload or wipe it); Triton keeps every API group the platform restricts behind its
admin key, over HTTP and gRPC (a caller could otherwise load a model or read shared memory)."""

from components.serving.manifests import ADMIN_HEADER, RESTRICTED_APIS
from policies.framework import Rule
from policies.readers.options import minutes, programs, switched_on, values, words
from policies.readers.pods import containers, pods

# Triton's restricted-API options, and Triton's name for the argument (command_line_parser.cc).
TRITON_RESTRICTED = ("http-restricted-api", "grpc-restricted-protocol")


def _autoscaler(found, config):
    if values(found, "scale-down-enabled") and not switched_on(found, "scale-down-enabled"):
        yield "turns the cluster autoscaler's scale-down off: idle GPU nodes are never removed"
    unneeded = values(found, "scale-down-unneeded-time", takes_value=True)
    limit = config["max_scale_down_unneeded_minutes"]
    if unneeded and (minutes(unneeded[-1]) is None or minutes(unneeded[-1]) > limit):
        yield f"keeps an unneeded node {unneeded[-1]} before removing it; the stack config allows {limit}m"


def _triton(found):
    for option in TRITON_RESTRICTED:
        guarded: set[str] = set()
        for value in values(found, option, takes_value=True):
            apis, _, key = value.partition(":")
            if key.partition("=")[0] == ADMIN_HEADER:
                guarded |= set(apis.split(","))
        open_apis = [api for api in RESTRICTED_APIS if api not in guarded]
        if open_apis:
            yield f"leaves Triton's {', '.join(open_apis)} open to every caller over --{option}"


def _findings(container, config):
    found = words(container)
    names = programs(container)
    if "cluster-autoscaler" in names:
        yield from _autoscaler(found, config)
    if "metrics-server" in names and switched_on(found, "kubelet-insecure-tls"):
        yield "skips verifying the kubelets' certificates (--kubelet-insecure-tls)"
    if "prometheus" in names:
        for api in ("web.enable-lifecycle", "web.enable-admin-api"):
            if switched_on(found, api):
                yield f"opens Prometheus's {api.removeprefix('web.enable-')} API (--{api}) to whoever reaches it"
    if "tritonserver" in names:
        yield from _triton(found)


def check(resource, config):
    if not resource.type.startswith("kubernetes:"):
        return
    for _, spec, _ in pods(resource):
        for where, container in containers(spec):
            for finding in _findings(container, config):
                yield f"{resource.name}: {where} {finding}"


RULE = Rule(
    name="kubernetes-container-disallow-unsafe-options",
    description="The platform's programs start with scale-down on, certificates verified, admin APIs off and "
    "Triton's restricted APIs behind its key.",
    severity="high",
    remediation="Keep the options the platform sets (components/cluster/autoscaler.py, "
    "components/monitoring/, components/serving/manifests.py); change the stack config, not a chart's flags.",
    topics=("security", "cost"),
    config={"max_scale_down_unneeded_minutes": {"type": "number", "default": 60}},
    check_resource=check,
    type_prefix="kubernetes:",
    standards=(
        "metrics-server: security (verify kubelet serving certificates)",
        "EKS BPG: Cost optimization - Cluster Autoscaler scale-down",
        "Triton: restricted API access",
    ),
)
