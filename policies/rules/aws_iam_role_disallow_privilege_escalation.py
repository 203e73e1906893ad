"""No identity the plan makes can raise its own privileges or read data of any name. Each role, user and
group is judged with every policy it holds, however attached (inline, by ARN, by an attachment resource, a
customer policy of the plan, an AWS-managed policy by its document from the pinned copy), together with
what it can become: a role of the plan it may pass to compute it can create is judged as part of it, and a
role of any name, or one the plan does not declare, cannot be judged and fails. Its actions are matched
against Cloudsplaining's privilege-escalation methods (policy versions and attachments, access keys,
PassRole with compute creation, updating code that runs as another role, ...), the platform's own
(run-command or a session on nodes, EKS access entries and access policies, Pod Identity, node groups,
launch template versions) and its data-exfiltration actions on resources of any name. Conditions and
resource scopes are not weighed for escalation, as Cloudsplaining does not: a scoped grant of such an
action is still a way up."""

from components.plan.unknowns import of_types
from policies.framework import Rule
from policies.readers.identity import IDENTITY_TYPES, Roles, escalations, exfiltration, identities, reachable
from policies.rules._helpers import home_accounts


def _judge(identity, roles):
    became = reachable(identity, roles)
    who = f"{identity.kind} {identity.name}"
    if identity.shared_name:
        yield (
            f"{who} shares its name with another {identity.kind} of the plan: AWS refuses one, and the gate "
            "cannot tell which holds what"
        )
    if became.any_role:
        yield f"{who} can pass roles of any name to compute it creates, and so become any of them"
    for pattern in became.outside:
        yield (
            f"{who} can pass {pattern} to compute it creates: a role the plan does not declare, whose "
            "permissions the gate cannot judge"
        )
    # What it can become is judged as part of it; a role of any name is a finding of its own, above.
    held = [identity] if became.any_role else [identity, *became.roles]
    statements = [s for one in held for s in one.statements()]
    as_roles = f" (with {', '.join(r.name for r in held[1:])}, which it can become)" if held[1:] else ""
    # A PassRole method that passes only the plan's roles is judged by what those roles hold, above.
    methods = [(m, a) for m, a in escalations(statements) if became.any_role or "iam:passrole" not in a]
    if methods:
        ways = "; ".join(f"{method} ({', '.join(actions)})" for method, actions in methods)
        actions = dict.fromkeys(a for _, found in methods for a in found)
        sources = dict.fromkeys(
            label if one is identity else f"{label} of {one.name}"
            for one in held
            for action in actions
            for label in one.giving(action)
        )
        yield f"{who} can escalate by {ways}{as_roles}, from {', '.join(sources)}"
    for action, resource in exfiltration(statements):
        yield f"{who} may {action} on {resource}, data of any name{as_roles}"


def check(resources, config):
    if not of_types(resources, *IDENTITY_TYPES):
        return
    found = identities(resources)
    roles = Roles(
        [i for i in found if i.kind == "role" and i.declared], home_accounts(resources, config["home_accounts"])
    )
    for identity in found:
        for message in _judge(identity, roles):
            yield identity.urn, message


RULE = Rule(
    name="aws-iam-role-disallow-privilege-escalation",
    description="No role, user or group can raise its own privileges (Cloudsplaining's methods and the "
    "platform's own) or read data of any name, with what it can become.",
    severity="critical",
    remediation="Grant the actions the workload needs on the resources it needs; pass only the plan's own "
    "roles, by ARN; never grant policy, access-key, trust or code-update actions, run-command, or EKS "
    "access actions to a workload's role.",
    topics=("security", "iam"),
    config={"home_accounts": {"type": "array", "items": {"type": "string", "pattern": r"^\d{12}$"}, "default": []}},
    check_stack=check,
    standards=(
        "Cloudsplaining: privilege escalation and data exfiltration (salesforce/cloudsplaining, BSD-3-Clause)",
        "CIS EKS 5.2.1 (dedicated, scoped identities)",
        "EKS BPG: IAM - least-privileged access",
    ),
)
