"""What a stack's config says its plan must hold, as the rules' config: the one map from a `StackConfig` to
the values the rules judge against (its budget and region, who is home, each namespace's Pod Security
level, ...). The gate computes it with its own code from the stack file, so a plan cannot relax it."""

from __future__ import annotations

from typing import Any

from components.cluster.config import PRINCIPAL_LISTS
from components.stack.config import StackConfig


def named_principals(config: StackConfig) -> list[str]:
    """Every IAM principal the stack config names: administrators, tenants' people and CI, publishers."""
    named = [arn for field in PRINCIPAL_LISTS for arn in getattr(config.cluster, field)]
    named += [config.cluster.deployer_role_arn] if config.cluster.deployer_role_arn else []
    named += [arn for tenant in config.tenants for arn in [*tenant.principal_arns, *tenant.publisher_principal_arns]]
    named += [arn for serving in config.serving for arn in config.publishers_of(serving)]
    return list(dict.fromkeys(named))


def stack_policy_config(config: StackConfig) -> dict[str, dict[str, Any]]:
    regional = {"region": config.region}
    budget = {"monthly_budget_usd": config.budget.monthly_usd, "basis": config.budget.basis, **regional}
    return {
        "budget-monthly-cost-limit": budget, "budget-monthly-cost-warn-near-budget": budget,
        "aws-ebs-volume-disallow-gp2-io1": regional, "aws-ebs-volume-flag-overprovisioned-io2": regional,
        # The roles it names are trusted by their exact ARN; their accounts are not home as a whole.
        "aws-iam-policy-disallow-public-principal": {"home_principals": named_principals(config)},
    }
