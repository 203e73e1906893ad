"""A claim that costs more than a threshold a month is named with its cost before it is made: a 64 GiB claim
on prod's checkpoint class is io2 at 64,000 IOPS, about $3,500 a month, kept after the job by its
volume's Retain policy."""

from components.cost.estimate import estimate_of_plan
from components.plan.resources import K8S_CLAIM
from components.plan.unknowns import of_types, read_plan
from policies.framework import Rule
from seedance_client.team_rules import COSTLY_CLAIM_RULE, COSTLY_CLAIM_USD


def check(resources, config):
    if not of_types(resources, K8S_CLAIM):
        return
    # The plan's estimate (shared with the budget rules): a claim is priced at the class the plan declares,
    # or at the platform's, which a team's plan uses without declaring.
    cost = estimate_of_plan(read_plan(resources), config["region"], config["storage_classes"])
    for line in cost.lines:
        if line.type == K8S_CLAIM and line.monthly_usd is not None and line.monthly_usd > config["monthly_usd_limit"]:
            yield (
                line.urn,
                (
                    f"{line.urn.rsplit('::', 1)[-1]}: ${line.monthly_usd:,.2f}/month ({line.basis}), above "
                    f"${config['monthly_usd_limit']:,.0f}; the volume outlives the job when its class "
                    "retains it"
                ),
            )


RULE = Rule(
    name=COSTLY_CLAIM_RULE,
    description="Claims costing more than the threshold a month are named with their cost.",
    severity="medium",
    remediation="Ask for the size and class the job needs (the contract's storage_classes.volumes says what each "
    "class gets), or confirm the cost with the platform team.",
    topics=("cost", "storage"),
    config={
        "region": {"type": "string", "default": "us-east-1"},
        "storage_classes": {"type": "object", "default": {}},
        "monthly_usd_limit": {"type": "number", "minimum": 0, "default": COSTLY_CLAIM_USD},
    },
    check_stack=check,
)
