"""No server-side-apply patch (`kubernetes:<group>/<version>:<Kind>Patch`) edits an object past the rules:
a patch is judged as nothing else is, so a DeploymentPatch could make a chart's pods privileged, a
ServicePatch could open a NodePort, a NamespacePatch could lower a namespace's Pod Security level. The one
patch the platform needs is allowed: Pod Security audit and warn labels on a namespace it does not own
(kube-system), which report and never admit."""

from components.plan.resources import K8S_NAMESPACE_PATCH as NAMESPACE_PATCH
from policies.framework import Rule

PATCH_SUFFIX = "Patch"
REPORTING_LABELS = frozenset(
    f"pod-security.kubernetes.io/{mode}{suffix}" for mode in ("audit", "warn") for suffix in ("", "-version")
)


def _labels_only(props: dict) -> dict | None:
    """The labels a NamespacePatch sets when it sets nothing else (None when it sets more)."""
    if set(props) - {"apiVersion", "kind", "metadata"}:
        return None
    metadata = props.get("metadata") or {}
    if not isinstance(metadata, dict) or set(metadata) - {"name", "labels"}:
        return None
    labels = metadata.get("labels") or {}
    return labels if isinstance(labels, dict) else None


def check(resource, config):
    if not (resource.type.startswith("kubernetes:") and resource.type.endswith(PATCH_SUFFIX)):
        return
    kind = resource.type.rsplit(":", 1)[1].removesuffix(PATCH_SUFFIX)
    metadata = resource.props.get("metadata") or {}
    target = (
        "/".join(str(part) for part in (metadata.get("namespace"), metadata.get("name")) if part)
        if isinstance(metadata, dict)
        else "?"
    )
    if resource.type == NAMESPACE_PATCH:
        labels = _labels_only(resource.props)
        if labels is not None:
            other = sorted(set(labels) - REPORTING_LABELS)
            if not other:
                return
            yield (
                f"{resource.name}: patches namespace {target}'s labels {', '.join(other)}: a patch may add "
                "Pod Security audit and warn labels only (an enforce label belongs on a namespace the stack declares)"
            )
            return
    yield (
        f"{resource.name}: a {kind}Patch edits {kind} {target or '?'} past every rule that judges a {kind}: "
        "declare the object, or set it through its chart's values"
    )


RULE = Rule(
    name="kubernetes-patch-restrict-to-audit-labels",
    description="No Kubernetes patch resource edits an object the gate does not judge; a namespace patch may add "
    "Pod Security audit and warn labels only.",
    severity="critical",
    remediation="Declare the object in the stack (or set it in the Helm release's values) so the rules judge it.",
    topics=("security", "kubernetes"),
    check_resource=check,
    type_prefix="kubernetes:",
    type_suffix=PATCH_SUFFIX,
    standards=("Pod Security Admission: namespace labels", "EKS BPG: Multi-tenancy - policy as code"),
)
