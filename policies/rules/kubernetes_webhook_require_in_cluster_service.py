"""Admission webhooks call services inside the cluster only: a webhook with `clientConfig.url` sends every
request it matches (a pod's whole spec, a Secret) to a host outside the cluster, and a mutating one rewrites
what it returns (an image, a sidecar) before any validating guard or Pod Security sees it."""

from components.plan.resources import K8S_WEBHOOK_CONFIGURATIONS as WEBHOOK_CONFIGURATIONS
from policies.framework import Rule


def check(resource, config):
    if resource.type not in WEBHOOK_CONFIGURATIONS:
        return
    for index, webhook in enumerate(resource.props.get("webhooks") or []):
        client = (webhook.get("clientConfig") or {}) if isinstance(webhook, dict) else {}
        if client.get("url") or not client.get("service"):
            name = webhook.get("name", f"#{index}") if isinstance(webhook, dict) else f"#{index}"
            yield (
                f"{resource.name}: webhook {name} calls {client.get('url') or 'no in-cluster service'}: "
                "admission requests leave the cluster"
            )


RULE = Rule(
    name="kubernetes-webhook-require-in-cluster-service",
    description="Admission webhooks call a Service in the cluster, never a URL.",
    severity="critical",
    remediation="Point clientConfig.service at the webhook's Service in the cluster (with its caBundle).",
    topics=("security", "kubernetes"),
    check_resource=check,
    resource_types=WEBHOOK_CONFIGURATIONS,
    standards=("Kubernetes: admission webhooks good practices", "EKS BPG: Multi-tenancy - policy as code"),
)
