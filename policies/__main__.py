"""Entry point Pulumi runs for the pack. Constructing `PolicyPack` starts its gRPC server and blocks,
so it happens only here; the rules themselves are importable from `policies.rules`."""

from pulumi_policy import EnforcementLevel, PolicyPack

from policies.framework import to_crossguard
from policies.rules import ALL_RULES

PolicyPack(
    name="seedance-cost-policies",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[to_crossguard(rule) for rule in ALL_RULES],
)
