"""Priority classes are the platform's, as it builds them (components/compute/priority.py): who yields to whom
is a cost and availability decision. Batch raised above serving, or allowed to preempt, evicts online pods
for training; a class above the platform's own add-ons lets its pods preempt them; a global default puts
every pod that names none into it. So each PriorityClass the plan declares, or a release renders, is one of
the platform's by name, with its value, preemption policy and default exactly as built."""

from components.compute.priority import priority_classes
from components.plan.resources import K8S_PRIORITY_CLASS as PRIORITY_CLASS_TYPE
from policies.framework import Rule

FIELDS = ("value", "preemptionPolicy", "globalDefault")


def check(resource, config):
    if resource.type != PRIORITY_CLASS_TYPE:
        return
    platform = {c["metadata"]["name"]: c for c in priority_classes()}
    metadata = resource.props.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    built = platform.get(str(name))
    if built is None:
        yield f"{resource.name}: priority class {name} is not one of the platform's ({', '.join(sorted(platform))})"
        return
    # The API server's defaults, as a live class reads back (preemptionPolicy, globalDefault).
    found = {"preemptionPolicy": "PreemptLowerPriority", "globalDefault": False, **resource.props}
    changed = [f"{field} {found.get(field)!r}" for field in FIELDS if found.get(field) != built[field]]
    if changed:
        yield f"{resource.name}: priority class {name} with {', '.join(changed)}; the platform's is " + ", ".join(
            f"{field} {built[field]!r}" for field in FIELDS
        )


RULE = Rule(
    name="kubernetes-priorityclass-restrict-to-platform",
    description="Every PriorityClass is one of the platform's, with its value, preemption policy and default as built.",
    severity="critical",
    remediation="Use the platform's classes (components/compute/priority.py); change who yields to whom there.",
    topics=("cost", "security", "kubernetes"),
    check_resource=check,
    resource_types=frozenset({PRIORITY_CLASS_TYPE}),
    standards=("Kubernetes: Pod priority and preemption - limit use of high-priority classes",),
)
