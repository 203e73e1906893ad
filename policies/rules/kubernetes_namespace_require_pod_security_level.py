"""A namespace the stack creates enforces at least the Pod Security level the stack config gives it: a
plan that lowers the label (or drops it: Pod Security Admission's default is privileged) opens the
namespace to pods the gate never saw, created later by whoever may create pods there. The level is enforced
at the latest version of the standard: `enforce-version: v1.0` keeps the level's name and drops every control
added since (seccomp, dropping capabilities, non-root user)."""

from components.plan.resources import K8S_NAMESPACE
from policies.expectations import PLATFORM_NAMESPACE_LEVELS
from policies.framework import Rule
from policies.readers.pods import LEVELS, at_least

ENFORCE = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION = f"{ENFORCE}-version"


def check(resource, config):
    if resource.type != K8S_NAMESPACE:
        return
    metadata = resource.props.get("metadata") or {}
    name = metadata.get("name")
    required = config["namespace_levels"].get(name, config["default_level"])
    labels = metadata.get("labels") or {}
    label, version = labels.get(ENFORCE), labels.get(ENFORCE_VERSION)
    if required != "privileged" and not at_least(label, required):
        yield (
            f"{resource.name}: namespace {name} enforces {label or 'nothing (privileged)'}; "
            f"the stack allows it {required}"
        )
    elif required != "privileged" and version is not None and str(version).strip() != "latest":
        yield (
            f"{resource.name}: namespace {name} enforces {label} as of {version} ({ENFORCE_VERSION}), without "
            "the controls added since; enforce the latest version"
        )


RULE = Rule(
    name="kubernetes-namespace-require-pod-security-level",
    description="Every namespace the stack creates enforces the Pod Security level its stack config gives it, or "
    "a stricter one.",
    severity="critical",
    remediation=f"Set the `{ENFORCE}` label to the level the stack gives the namespace (docs/security.md).",
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
    },
    check_resource=check,
    resource_types=frozenset({K8S_NAMESPACE}),
    standards=("Pod Security Admission: namespace labels", "CIS EKS 4.2 (Pod Security Standards)"),
)
