"""What a team's plan must fit on the platforms it reads, judged from their contracts alone. Pure.

The client's `seedance check` runs these over a team's offline plan; the platform's policy pack runs the
same function (rule `kubernetes-tenant-require-contract-fit`). Objects are judged by what they are (their
`kind`, their pod's shape, the labels their nodes must carry), not by the SDK class that wrote them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from seedance_client.contract import (
    ELASTIC_JOB_ANNOTATION,
    GPU_RESOURCE,
    QUEUE_LABEL,
    GpuPool,
    PlatformContract,
)
from seedance_client.contract import (
    SPOT_NOTICE_SECONDS as MAX_GRACE,
)
from seedance_client.pod_admission import (
    PLATFORM_CLASSES,
    PodRules,
    cost_label_refusals,
    pod_refusals,
    quota_classes,
)
from seedance_client.tokens import HELM_RELEASE, LOCAL_KUBERNETES_COMPONENTS, REMOTE_KUBERNETES_COMPONENTS

# A claim above this a month is named with its cost (the platform's rule has the same default).
COSTLY_CLAIM_USD = 1000.0
# Kubernetes's quantity grammar (apimachinery resource.Quantity): a signed decimal, then a binary or
# decimal SI suffix or a decimal exponent.
_QUANTITY = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?$"
)
_FACTORS = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "n": 10**-9,
    "u": 10**-6,
    "m": 10**-3,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}


def quantity_gib(quantity: Any) -> float:
    """A Kubernetes storage quantity (`64Gi`, `100G`, `1.5Ti`, `1e12`, bytes) in GiB; ValueError for
    anything else, or a negative size."""
    match = _QUANTITY.match(str(quantity).strip())
    if match is None:
        raise ValueError(f"{quantity!r} is not a Kubernetes quantity")
    number, suffix, exponent = match.groups()
    factor = 10 ** int(exponent) if exponent is not None else _FACTORS.get(suffix or "", 1)
    size = float(number) * factor / 2**30
    if size < 0:
        raise ValueError(f"{quantity!r} is a negative size")
    return size


def _pod(props: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod an object runs, by shape: a Pod, a workload's template, a CronJob's job template's."""
    spec = props.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    if isinstance(spec.get("containers"), list):
        return props
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = spec.get("template") or job.get("template") or {}
    inner = template.get("spec") if isinstance(template, dict) else None
    return template if isinstance(inner, dict) and isinstance(inner.get("containers"), list) else None


def pod_spec(props: Mapping[str, Any]) -> dict[str, Any] | None:
    pod = _pod(props)
    return pod["spec"] if pod is not None else None


def pod_metadata(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod's own metadata (its template's, for a workload): what admission sees of the pods it makes."""
    metadata = (_pod(props) or {}).get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def tenant_pod_rules(contract: PlatformContract, team: str) -> PodRules:
    """The team's pod rules as its platform's admission holds them, from the contract: the classes its quota
    gives GPUs, and its pools (1.5; before, every pool of those classes, the platform's default)."""
    tenant = next(t for t in contract.tenants if t.name == team)
    classes = quota_classes(tenant.gpus)
    pools = (
        tenant.pools
        if tenant.pools is not None
        else [p.name for p in contract.gpu_pools if p.workload_class in classes]
    )
    return PodRules(
        team,
        contract.priority_classes,
        tuple(classes),
        {p.name: p.workload_class for p in contract.gpu_pools if p.name in pools},
    )


def _term_allows(term: list[tuple[str, str, list[str]]], labels: Mapping[str, str]) -> bool:
    """A node selector term (key, operator, values) against a node's labels, as the scheduler reads it."""
    for key, operator, values in term:
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _selector_terms(spec: Mapping[str, Any]) -> list[list[tuple[str, str, list[str]]]]:
    """The pod's node constraints as OR-ed terms: its nodeSelector AND-ed into each required affinity term."""
    base = [(k, "In", [str(v)]) for k, v in (spec.get("nodeSelector") or {}).items()]
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = [
        [
            (e.get("key"), e.get("operator"), [str(v) for v in e.get("values") or []])
            for e in term.get("matchExpressions") or []
        ]
        for term in required.get("nodeSelectorTerms") or []
    ]
    return [base + term for term in terms] if terms else [base]


def _tolerates(tolerations: list[Mapping[str, Any]], needed: Mapping[str, Any]) -> bool:
    """Whether one of the pod's tolerations may cover a taint the pool's nodes carry, as the contract states
    it (the toleration a pod needs): same key, or none with Exists; Exists, or the same value, or any value
    where the contract's toleration is Exists (the taint's value is not stated: a pod that names one may
    match it); any effect, or the same. Where unsure, a pod reaches the pool: the judgement errs on the
    side of finding."""
    for t in tolerations:
        key_ok = t.get("key") == needed.get("key") or (not t.get("key") and t.get("operator") == "Exists")
        value_ok = (
            t.get("operator") == "Exists" or needed.get("operator") == "Exists" or t.get("value") == needed.get("value")
        )
        if key_ok and value_ok and (not t.get("effect") or t.get("effect") == needed.get("effect")):
            return True
    return False


def pools_reached(spec: Mapping[str, Any], pools: Iterable[GpuPool]) -> tuple[list[GpuPool], bool]:
    """The GPU pools whose nodes the pod may land on (its node selection admits them and it tolerates their
    taints), and whether it asks for a pool at all (names a label the pools' nodes carry)."""
    pools = list(pools)
    if spec.get("nodeName"):  # bound to a node by name: no scheduler, and no NoSchedule taint, stands between
        return pools, True
    pool_keys = {key for pool in pools for key in pool.node_selector}
    # Only the labels that tell pools apart are judged: a pool's nodes carry others (zone, instance type)
    # that its selector does not list, and what a pod asks of those is the scheduler's to meet.
    terms = [[e for e in term if e[0] in pool_keys] for term in _selector_terms(spec)]
    asks = any(term for term in terms)
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    return [
        p
        for p in pools
        if any(_term_allows(term, p.node_selector) for term in terms)
        and all(_tolerates(tolerations, needed) for needed in p.tolerations)
    ], asks


def contract_fit(
    token: str, name: str, props: Mapping[str, Any], contracts: list[PlatformContract], renders_charts: bool = False
) -> list[str]:
    """Why a team's Kubernetes object (its type token and inputs) does not fit its platforms: a namespace no
    team owns (or none: the provider's default, or a cluster-wide object), another team's label, a
    priority class the platform does not have, a pool it does not have or where the team has no GPUs; an
    object whose own objects cannot be judged here (a Helm release unless `renders_charts`, a component the
    provider builds at deploy time) is said to be so."""
    if not contracts or not token.startswith("kubernetes:") or token in LOCAL_KUBERNETES_COMPONENTS:
        return []  # not a Kubernetes object, a platform's own plan, or a component whose children are judged
    kind = props.get("kind") or token.rsplit(":", 1)[-1]  # the SDK writes `kind`; a hand-written plan may not
    if token in REMOTE_KUBERNETES_COMPONENTS:
        return [
            f"{name}: a {kind} is built by the provider at deploy time, so its objects cannot be judged "
            "offline; declare them as objects (or a Helm v3 release, which the platform's check renders)"
        ]
    release = token == HELM_RELEASE
    metadata = props.get("metadata") or {}
    namespace = props.get("namespace") if release else metadata.get("namespace")  # a release names its own
    owners = {ns: t.name for c in contracts for t in c.tenants for ns in t.namespaces}
    owner, found = owners.get(namespace) if namespace is not None else None, []
    if owners:  # a platform that has not divided its cluster among teams (no tenants) owns no namespace to check
        teams = ", ".join(sorted(set(owners.values())))
        if not namespace:
            return [
                f"{name}: a {kind} without a namespace is cluster-wide or lands in the provider's default "
                f"namespace, and neither is a team's ({teams} own namespaces of their own)"
            ]
        if owner is None:
            return [f"{name}: namespace {namespace} belongs to no team of the platform ({teams})"]
        label = (metadata.get("labels") or {}).get("team")
        if label != owner and not release:  # a release's labels are its objects', judged when rendered
            found.append(f"{name}: labelled team {label!r} in namespace {namespace}, which is team {owner!r}'s")
    if release:
        return found + (
            []
            if renders_charts
            else [
                f"{name}: a Helm release's objects are not rendered by the client's check; run the platform's "
                "`seedance check` (it renders pinned charts), or declare the objects"
            ]
        )
    spec, pod_labels = pod_spec(props), pod_metadata(props).get("labels")
    if spec is None:
        return found
    home = next((c for c in contracts for t in c.tenants if t.name == owner), None)
    if home is not None and owner is not None:
        # What the platform's admission will say of the pods, from the same rules (pod_admission.py).
        refusals = pod_refusals(tenant_pod_rules(home, owner), spec) + cost_label_refusals(owner, pod_labels)
        found += [f"{name}: its pods are refused: {message}" for message in refusals]
        if spec.get("priorityClassName") in PLATFORM_CLASSES:
            found.append(f"{name}: {spec['priorityClassName']} is reserved for the platform's own add-ons")
    reached, asks = pools_reached(spec, [p for c in contracts for p in c.gpu_pools])
    if asks and not reached:
        found.append(f"{name}: its node selection and tolerations match no GPU pool the platform has")
    queued = [c for c in contracts if c.queues]
    return found + (queue_fit(name, kind, props, spec, queued) if owner is not None and queued else [])


def asks_gpus(spec: Mapping[str, Any]) -> bool:
    """Whether a container of the pod, init containers included, names the GPU resource in its requests or
    limits (as the platform's queued-pods guard reads it)."""
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return any(
        GPU_RESOURCE in ((c.get("resources") or {}).get(part) or {})
        for c in containers
        if isinstance(c, Mapping)
        for part in ("requests", "limits")
    )


def queue_fit(
    name: str, kind: str, props: Mapping[str, Any], spec: Mapping[str, Any], contracts: list[PlatformContract]
) -> list[str]:
    """On a platform that queues GPUs, what its queue guards refuse (components/tenancy/queues.py,
    `queue_admission_policies`, tested case for case against these): a Job or CronJob naming none of the
    LocalQueues, a Job owned by anything but a CronJob, and a batch pod asking for GPUs that is not a Job's."""
    queues = sorted({q for c in contracts for q in c.queues.values()})
    if kind in ("Job", "CronJob"):
        job = (props.get("spec") or {}).get("jobTemplate") or {} if kind == "CronJob" else props
        # A Job without labels of its own takes its pod template's (the API server's defaulting, before admission).
        labels = (job.get("metadata") or {}).get("labels") or _template_labels(job)
        queue = labels.get(QUEUE_LABEL)
        found = []
        if queue not in queues:
            found.append(
                f"{name}: a {kind} names its queue, label {QUEUE_LABEL} ({', '.join(queues)})"
                + (" in its jobTemplate" if kind == "CronJob" else "")
                + f", not {queue!r}; the platform refuses it"
            )
        owners = (props.get("metadata") or {}).get("ownerReferences") or []
        if kind == "Job" and any((o.get("apiVersion"), o.get("kind")) != ("batch/v1", "CronJob") for o in owners):
            found.append(
                f"{name}: a Job that belongs to another object but a CronJob is not queued by Kueue (it counts as "
                "part of its owner's workload); the platform refuses it"
            )
        if kind == "Job" and ELASTIC_JOB_ANNOTATION in ((props.get("metadata") or {}).get("annotations") or {}):
            found.append(f"{name}: an elastic Job ({ELASTIC_JOB_ANNOTATION}) is refused: Jobs are queued whole")
        return found + _grace_fit(name, kind, spec, contracts)
    batch = {c.priority_classes.get("batch") for c in contracts} - {None}
    if spec.get("priorityClassName") in batch and asks_gpus(spec):
        return [
            f"{name}: a {kind} whose pods ask for GPUs of class {spec['priorityClassName']} runs outside the queue; "
            "the platform refuses its pods: run batch GPU work as a Job that names its queue"
        ] + _grace_fit(name, kind, spec, contracts)
    return []


def _template_labels(job: Mapping[str, Any]) -> dict[str, Any]:
    return dict((((job.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})


def _grace_fit(name: str, kind: str, spec: Mapping[str, Any], contracts: list[PlatformContract]) -> list[str]:
    batch = {c.priority_classes.get("batch") for c in contracts} - {None}
    grace = spec.get("terminationGracePeriodSeconds")
    if spec.get("priorityClassName") in batch and asks_gpus(spec) and isinstance(grace, int) and grace > MAX_GRACE:
        return [
            f"{name}: a {kind}'s batch GPU pods stop within {MAX_GRACE} s (terminationGracePeriodSeconds {grace}); "
            "the platform refuses them"
        ]
    return []


@dataclass(frozen=True)
class ClaimCost:
    name: str
    storage_class: str | None
    monthly_usd: float | None  # None: not priced (the reason says why)
    reason: str


def claim_cost(name: str, props: Mapping[str, Any], contracts: list[PlatformContract]) -> ClaimCost | None:
    """A PersistentVolumeClaim's monthly cost on its platform's class (None for other objects)."""
    if props.get("kind") != "PersistentVolumeClaim":
        return None
    spec = props.get("spec") or {}
    cls = spec.get("storageClassName")
    if spec.get("volumeName"):
        return ClaimCost(name, cls, 0.0, f"bound to the platform's volume {spec['volumeName']} (the platform pays it)")
    prices = {k: v for c in contracts for k, v in c.storage_classes.claim_prices.items()}
    local = {c.storage_classes.local for c in contracts} - {None}
    if cls in local:
        return ClaimCost(name, cls, 0.0, f"class {cls}: the node's instance store (in the node's price)")
    if cls not in prices:
        return ClaimCost(
            name,
            cls,
            None,
            f"class {cls!r} has no price in the platform's contract (contract 1.3 exports its classes' prices)",
        )
    try:
        size = quantity_gib(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    except ValueError as error:
        return ClaimCost(name, cls, None, f"its size is not known: {error}")
    return ClaimCost(name, cls, prices[cls].monthly_usd(size), f"class {cls}: {size:g} GiB")


# The platform's policy pack names its rules the same: a team's check and the pack's say one thing.
CONTRACT_FIT_RULE = "kubernetes-tenant-require-contract-fit"
COSTLY_CLAIM_RULE = "kubernetes-claim-flag-costly-volume"


@dataclass(frozen=True)
class Finding:
    level: str  # "mandatory" fails the check; "advisory" is shown
    rule: str
    message: str


def team_findings(
    objects: Iterable[tuple[str, str, Mapping[str, Any]]],
    contracts: list[PlatformContract],
    claim_limit_usd: float = COSTLY_CLAIM_USD,
) -> tuple[list[Finding], list[ClaimCost]]:
    """A team's planned objects (type token, name, inputs) against its platforms: what does not fit, the
    claims above the limit, and every claim's cost."""
    findings, costs = [], []
    for token, name, props in objects:
        if not token.startswith("kubernetes:"):
            continue
        findings += [Finding("mandatory", CONTRACT_FIT_RULE, m) for m in contract_fit(token, name, props, contracts)]
        cost = claim_cost(name, props, contracts)
        if cost is None:
            continue
        costs.append(cost)
        if cost.monthly_usd is not None and cost.monthly_usd > claim_limit_usd:
            findings.append(
                Finding(
                    "advisory",
                    COSTLY_CLAIM_RULE,
                    (
                        f"{name}: ${cost.monthly_usd:,.2f}/month ({cost.reason}), above ${claim_limit_usd:,.0f}; "
                        "the volume outlives the job when its class retains it"
                    ),
                )
            )
    return findings, costs
