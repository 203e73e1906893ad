"""`seedance budget-tag --stack <env> [--activate]`: is the budget's cost-allocation tag active?

An AWS Budget filtered on `user:<tag>$<value>` counts nothing until that tag key is activated as a
cost-allocation tag. Activation cannot be part of `pulumi up`: Cost Explorer lists a tag key only
after resources carrying it show up in billing data (up to 24 hours after the first one), and only
the organization's management (payer) account may activate it. So this command reports the
state, and with `--activate` (run with the payer account's credentials) activates it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from components.pricing.live import boto3_clients

# Cost Explorer's API lives in us-east-1 whatever the stack's region.
COST_EXPLORER_REGION = "us-east-1"
EXIT_ACTIVE, EXIT_NOT_ACTIVE = 0, 1

# Tests replace this to answer with recorded API responses.
clients: Callable[[str, str], Any] = boto3_clients


def tag_state(cost_explorer: Any, key: str) -> str | None:
    """Active, Inactive, or None when billing data has not seen the key yet."""
    found = cost_explorer.list_cost_allocation_tags(TagKeys=[key], Type="UserDefined")["CostAllocationTags"]
    return found[0]["Status"] if found else None


def activate(cost_explorer: Any, key: str) -> str | None:
    """Activate the key; returns the error Cost Explorer reports for it, if any."""
    errors = cost_explorer.update_cost_allocation_tags_status(
        CostAllocationTagsStatus=[{"TagKey": key, "Status": "Active"}]
    ).get("Errors", [])
    return next((f"{e.get('Code')}: {e.get('Message')}" for e in errors if e.get("TagKey") == key), None)


def run(args: argparse.Namespace, stack_config: Callable[[argparse.Namespace], Any]) -> int:
    config = stack_config(args)
    key = config.budget.filter_tag
    cost_explorer = clients("ce", COST_EXPLORER_REGION)
    state = tag_state(cost_explorer, key)
    if state is None:
        print(
            f"cost-allocation tag {key!r} is not in billing data yet: Cost Explorer lists a key up to 24 hours "
            "after a resource first carries it. The budget counts nothing until it is active; run this again "
            "after the first `pulumi up` has had a day."
        )
        return EXIT_NOT_ACTIVE
    if state == "Active":
        print(
            f"cost-allocation tag {key!r} is active: budget {config.cluster_name} counts "
            f"user:{key}={config.resource_tags[key]}"
        )
        return EXIT_ACTIVE
    if not args.activate:
        print(
            f"cost-allocation tag {key!r} is inactive: the budget counts nothing. Activate it with "
            f"`seedance budget-tag --stack {args.stack} --activate` using the organization's management account"
        )
        return EXIT_NOT_ACTIVE
    error = activate(cost_explorer, key)
    if error:
        print(f"cost-allocation tag {key!r} was not activated: {error}")
        return EXIT_NOT_ACTIVE
    print(f"cost-allocation tag {key!r} activated; Cost Explorer applies it to new billing data within 24 hours")
    return EXIT_ACTIVE


def register(commands: Any, stack_arguments: Callable, stack_config: Callable) -> None:
    command = commands.add_parser("budget-tag", help="is the budget's cost-allocation tag active? (--activate it)")
    stack_arguments(command)
    command.add_argument(
        "--activate", action="store_true", help="activate the tag (needs the organization's management account)"
    )
    command.set_defaults(run=lambda args: run(args, stack_config))
