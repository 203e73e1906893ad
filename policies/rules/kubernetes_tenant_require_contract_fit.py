"""A team's program fits the platform it reads (its StackReference's contract): every object sits in a
namespace a team owns and carries that team's `team` label, its pods name a priority class the platform
has and may land only on pools whose workload class the team has GPUs for. The judgement is the client's
(`seedance_client.team_rules.contract_fit`), so a team's own `seedance check` and this pack agree.
`seedance check` fills the config with the contract of each platform stack the plan references; a
platform's own plan references none."""

from policies.framework import Rule
from seedance_client.contract import read_contract
from seedance_client.team_rules import CONTRACT_FIT_RULE, contract_fit


def check(resource, config):
    if not config["contracts"]:
        return  # a platform's own plan
    contracts = [read_contract(outputs, "the referenced platform stack") for outputs in config["contracts"]]
    # The gate renders Helm releases from pinned charts and judges their objects as the plan's own.
    yield from contract_fit(resource.type, resource.name, resource.props, contracts, renders_charts=True)


RULE = Rule(
    name=CONTRACT_FIT_RULE,
    description="A team's objects live in its own namespaces with its team label, name the platform's priority "
    "classes and run on pools the team has GPUs in.",
    severity="high",
    remediation="Take namespace, labels, priority class and node selector from the contract (PlatformReference): "
    "the team's namespaces (contract tenants), cost_label_keys, priority_classes, pool(...).",
    topics=("tenancy", "kubernetes"),
    config={"contracts": {"type": "array", "items": {"type": "object"}, "default": []}},
    check_resource=check,
    type_prefix="kubernetes:",
)
