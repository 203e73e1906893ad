"""A workload runs as a service account of its own origin only. A service account is an identity: its IAM role
(IRSA), its RBAC bindings, and what the platform's admission policies let it do (only Kueue's controller
starts a team's queued Job). A pod that names another's account becomes that identity: a Deployment of the
program named `kueue-controller-manager` in Kueue's namespace, or one that a chart's extra objects render as
the autoscaler's account in kube-system, would act as Kueue or scale the GPU groups.

So a pod (in any object, found by its shape) may name a service account that the plan declares, or that a
release renders, only when both come from the same place: the same Helm release, or the program itself.
Kubernetes' own controllers' accounts in kube-system (`*-controller`) are no pod's. `seedance check` gives the
rule every account of the plan and of what the releases render (`service_accounts`); the pack under
`pulumi preview`, which renders no chart, knows the program's only."""

from components.plan.resources import K8S_SERVICE_ACCOUNT
from policies.framework import Rule
from policies.readers.pods import pods

KUBE_SYSTEM = "kube-system"


def account_key(namespace: object, name: object) -> str:
    return f"{namespace or 'default'}/{name}"


def check(resource, config):
    if resource.type == K8S_SERVICE_ACCOUNT:
        return
    metadata = resource.props.get("metadata")
    namespace = (metadata.get("namespace") if isinstance(metadata, dict) else None) or "default"
    origin = str(resource.parent) if resource.parent in config["release_charts"] else ""
    for where, spec, _ in pods(resource):
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
        owner = config["service_accounts"].get(account_key(namespace, account))
        if owner is None and namespace == KUBE_SYSTEM and str(account).endswith("-controller"):
            yield f"{resource.name}{where}: runs as {account} in {KUBE_SYSTEM}, a Kubernetes controller's account"
        elif owner is not None and owner != origin:
            declared = f"release {owner.rsplit('::', 1)[-1]}" if owner else "the program"
            yield (
                f"{resource.name}{where}: runs as service account {account} of {namespace}, which {declared} "
                "declares: its identity (IAM role, RBAC) is that one's workloads' alone"
            )


RULE = Rule(
    name="kubernetes-workload-restrict-service-account",
    description="A pod runs as a service account declared with it (the same Helm release, or the program), never "
    "as another's, nor as a Kubernetes controller's.",
    severity="critical",
    remediation="Give the workload a service account of its own, declared beside it, with the grants it needs.",
    topics=("security", "kubernetes"),
    config={
        # "<namespace>/<name>" -> where the account is declared: "" the program, else the release's URN.
        "service_accounts": {"type": "object", "default": {}},
        # A rendered object's release (its parent) -> the pinned chart it came from (seedance check sets it).
        "release_charts": {"type": "object", "default": {}},
    },
    check_resource=check,
    type_prefix="kubernetes:",
    standards=("EKS BPG: Identity and access management - IRSA scoped to one workload",),
)
