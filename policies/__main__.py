"""Entry point Pulumi runs for the pack. Constructing `PolicyPack` starts its gRPC server and blocks,
so it happens only here; the rules themselves are importable from `policies.rules`.

The pack enforces on its own: each policy's enforcement level and config defaults come from
policies/config/<stack>.json for the stack being previewed (the engine sets PULUMI_STACK), so a plain
`pulumi preview --policy-pack policies` blocks what the environment forbids. `--policy-pack-config`
still overrides them. What the rules judge against beyond that file (the principals, namespaces, groups
and budget the stack config names) comes from the stack's own config, which the language host hands a
policy pack (PULUMI_CONFIG), as `seedance check` takes it from the stack file: both judge alike.
"""

import os

from pulumi_policy import PolicyPack

from policies.expectations import stack_config_expectations
from policies.framework import PACK_NAME, pack_enforcement, to_crossguard
from policies.rules import ALL_RULES

enforcement = pack_enforcement(os.environ.get("PULUMI_STACK", ""))
expectations = stack_config_expectations(os.environ.get("PULUMI_CONFIG"))
PolicyPack(
    name=PACK_NAME,
    policies=[to_crossguard(rule, enforcement, expectations.get(rule.name)) for rule in ALL_RULES],
)
