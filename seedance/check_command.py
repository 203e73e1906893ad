"""`seedance check`: every policy over an offline plan (or a plan file), with the cost table.

Exit 1 when a mandatory rule fails, 0 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import gc
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import pulumi

from components.capacity.mix import HOLDINGS_TAG, holdings_from_tag
from components.cluster.config import ClusterConfig
from components.cost.estimate import CostEstimate, catalog_for, estimate, estimate_of_plan
from components.plan.diff import Change, masked_note, plan_diff, render_diff, replaced_nodes
from components.plan.document import PlanDocumentError, plan_document_resources
from components.plan.resources import (
    EKS_CLUSTER,
    HELM_RELEASE,
    K8S_ROLES,
    K8S_SERVICE_ACCOUNT,
    PlanResource,
    is_unknown,
    tags_of,
)
from components.plan.unknowns import UnknownValueError, read_plan
from components.pricing.prices import PriceSourceError
from components.stack.config import ENVIRONMENTS, PROJECT, StackConfig
from policies.expectations import stack_policy_config, team_policy_config
from policies.framework import CONFIG_DIR, PolicyConfigError, Violation, fails_closed, load_enforcement, run_rules
from policies.readers.rbac import chart_name, role_key
from policies.rules import ALL_RULES
from policies.rules.kubernetes_workload_restrict_service_account import account_key
from seedance.charts import ChartMissingError, chart_cache, pinned_sources, pull, rendered_resources, unpinned
from seedance.deadline import timeout_seconds
from seedance.plan_output import MASK, asset_json
from seedance.stack_input import load_stack
from seedance_client.contract import ContractVersionError, read_contract
from seedance_client.engine import STACK_REFERENCE, Plan, Secret
from seedance_client.errors import InputError
from seedance_client.files import MAX_PLAN_BYTES, InputFileError, load_json
from seedance_client.project import StackFileError, find_project


class CheckInputError(InputError):
    """A plan file or stack that cannot be read: exit code 2."""


def plan_resources(plan: Plan) -> list[PlanResource]:
    return [
        PlanResource(r.urn, r.type, r.name, revealed(r.inputs), r.parent, r.dependencies, r.id) for r in plan.resources
    ]


def revealed(value: Any) -> Any:
    """An in-process plan's values with the engine's `Secret` markers replaced by what they hold."""
    if isinstance(value, Secret):
        return revealed(value.value)
    if isinstance(value, (pulumi.Asset, pulumi.Archive)):
        return asset_json(value)  # a function's code: named by its files, as a plan file names it
    if isinstance(value, dict):
        return {k: revealed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [revealed(v) for v in value]
    return value


def resources_from_file(path: Path) -> tuple[list[PlanResource], str | None]:
    """A `seedance plan --json` document (or any with the same resource fields), and its stack when it is
    a plan of this package's program (another project's stack names no config of ours)."""
    try:
        document = load_json(path, "plan JSON", MAX_PLAN_BYTES)
        resources = plan_document_resources(document)
        for resource in resources:
            # The RI record a group carries is priced as is: a negative or non-finite rate would lower the total.
            tag = (tags_of(resource) or {}).get(HOLDINGS_TAG)
            if tag is not None and not is_unknown(tag):
                try:
                    holdings_from_tag(tag)
                except ValueError as error:
                    raise PlanDocumentError(f"resource {resource.urn}: tags: {error}") from None
    except (InputFileError, PlanDocumentError) as error:
        raise CheckInputError(f"{path}: {error}".replace(f"{path}: {path}: ", f"{path}: ")) from None
    stack = document.get("stack")
    ours = document.get("project") in (None, PROJECT)
    return resources, stack if isinstance(stack, str) and ours else None


def _stack_settings(args: argparse.Namespace, stack: str | None) -> StackConfig | None:
    """The seedance stack config the plan is judged against, when the plan is of a seedance project's
    program: --stack-file, else the project's file of the stack (the plan's stack for a plan file)."""
    try:
        project = find_project(args.program or Path.cwd())
    except StackFileError:
        return None
    if project.name != PROJECT or stack is None:
        return None
    try:
        stack_file = project.stack_file(stack)
    except StackFileError:  # a plan file names its stack: untrusted, and never a path
        raise CheckInputError(
            f"the plan's stack {stack!r} is not a stack name (letters, digits, '-', '_' and '.')"
        ) from None
    if args.plan and args.stack_file is None and not stack_file.exists():
        return None
    return load_stack(args.program, stack, args.stack_file)[1]


# The rules that price the plan themselves: they take the storage classes a team's plan does not declare.
BUDGET_RULES = tuple(rule.name for rule in ALL_RULES if "storage_classes" in rule.config)


def referenced_contracts(resources: list[PlanResource], stack_outputs) -> list[dict[str, Any]]:
    """The contracts (stack outputs) of the platform stacks a team's plan reads. `stack_outputs(reference)`
    answers a StackReference offline."""
    contracts = []
    for reference in (str(r.props.get("name")) for r in resources if r.type == STACK_REFERENCE):
        outputs = stack_outputs(reference)
        if outputs is None:
            continue  # another project's stack: no platform contract to fit
        try:
            read_contract(outputs, reference)
        except ContractVersionError as error:
            raise CheckInputError(f"the plan reads {error}") from None
        contracts.append(outputs)
    return contracts


def referenced_storage_classes(contracts: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The EBS classes of those platforms (their contract's `volumes`), so a team's claims are priced at what
    they get."""
    classes: dict[str, dict[str, str]] = {}
    for contract in contracts:
        classes.update((contract.get("storage_classes") or {}).get("volumes") or {})
    return classes


def rule_config(config: StackConfig | None, contracts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """What the rules judge against: the stack config's expectations, and each referenced platform's."""
    extra = stack_policy_config(config) if config else {}
    for contract in contracts:
        for rule, values in team_policy_config(contract).items():
            merged = extra.setdefault(rule, {})
            for key, value in values.items():  # lists (the contracts) gather; a value of one platform replaces
                merged[key] = merged.get(key, []) + value if isinstance(value, list) else value
    return extra


CHART_RULE = "kubernetes-helm-release-require-chart-source"
# Told which objects the gate rendered from a release: only those get a privileged namespace's level.
POD_SECURITY_RULE = "kubernetes-pod-enforce-pod-security-standards"
# Release inputs that change what Helm installs past what the gate renders (values given inline only).
UNREAD_RELEASE_INPUTS = {
    "valueYamlFiles": "its values come from files the plan does not hold (valueYamlFiles)",
    "postrender": "a post-renderer rewrites what Helm renders (postrender)",
}


def rendered_releases(
    resources: list[PlanResource], kubernetes_version: str
) -> tuple[list[PlanResource], list[dict[str, str]]]:
    """The objects the plan's Helm releases install, and the releases that could not be rendered."""
    rendered, unrendered = [], []
    pinned = pinned_sources()
    for release in (r for r in resources if r.type == HELM_RELEASE):
        refused = unpinned(release.props, pinned)
        if refused:
            unrendered.append({"urn": release.urn, "reason": refused})
            continue
        beyond = [field for field in UNREAD_RELEASE_INPUTS if release.props.get(field)]
        if beyond:
            unrendered.append({"urn": release.urn, "reason": " and ".join(UNREAD_RELEASE_INPUTS[f] for f in beyond)})
            continue
        if release.props.get("values") == MASK:
            unrendered.append(
                {
                    "urn": release.urn,
                    "reason": "its values are [secret] in the plan file (write it with "
                    "`seedance plan --json FILE --show-secrets`)",
                }
            )
            continue
        try:
            rendered += rendered_resources(release, kubernetes_version)
        except UnknownValueError as error:
            unrendered.append({"urn": release.urn, "reason": f"{error.message} (values unknown until apply)"})
        except ChartMissingError as error:
            unrendered.append({"urn": release.urn, "reason": str(error)})
        except (RuntimeError, ValueError, KeyError, TypeError) as error:  # the engine's template errors
            unrendered.append({"urn": release.urn, "reason": f"Helm could not render it: {error}"})
    return rendered, unrendered


# The rules that let a pinned chart's own objects hold what its controller needs.
CHART_AWARE_RULES = tuple(rule.name for rule in ALL_RULES if "release_charts" in rule.config)


# The rules that judge a binding by the role it names: they take every role the plan declares or renders.
ROLE_AWARE_RULES = tuple(rule.name for rule in ALL_RULES if "known_roles" in rule.config)


def known_roles(resources: list[PlanResource], rendered: list[PlanResource]) -> dict[str, str]:
    """Every role the plan declares ("") or a release renders (the release's URN), by `role_key`."""
    found = {}
    for role, origin in [*((r, "") for r in resources), *((r, str(r.parent)) for r in rendered)]:
        if role.type in K8S_ROLES:
            metadata = role.props.get("metadata") or {}
            kind = "ClusterRole" if role.type == K8S_ROLES[0] else "Role"
            found[role_key(kind, metadata.get("name"), metadata.get("namespace"))] = origin
    return found


ACCOUNT_AWARE_RULES = tuple(rule.name for rule in ALL_RULES if "service_accounts" in rule.config)


def service_accounts(resources: list[PlanResource], rendered: list[PlanResource]) -> dict[str, str]:
    """Every service account the plan declares ("") or a release renders (the release's URN), by namespace/name."""
    found = {}
    for account, origin in [*((r, "") for r in resources), *((r, str(r.parent)) for r in rendered)]:
        if account.type == K8S_SERVICE_ACCOUNT:
            metadata = account.props.get("metadata")
            metadata = metadata if isinstance(metadata, dict) else {}
            found[account_key(metadata.get("namespace"), metadata.get("name"))] = origin
    return found


def release_charts(resources: list[PlanResource]) -> dict[str, str]:
    """Each release's pinned chart by the release's URN (the parent of the objects it renders)."""
    return {r.urn: chart_name(r.props.get("chart")) for r in resources if r.type == HELM_RELEASE}


# What judges the objects a chart renders: the security rules that read one resource at a time (a chart's
# cost and labels are the program's values, judged on the release).
RENDERED_RULES = [rule for rule in ALL_RULES if "security" in rule.topics and rule.check_resource is not None]


def cluster_version(resources: list[PlanResource], config: StackConfig | None) -> str:
    """The Kubernetes version charts render for: the plan's cluster's, else the stack's, else the default."""
    for resource in resources:
        if (
            resource.type == EKS_CLUSTER
            and isinstance(resource.props.get("version"), str)
            and not is_unknown(resource.props["version"])
        ):
            return resource.props["version"]
    return (config.cluster if config else ClusterConfig()).kubernetes_version


def _with_setting(
    extra: dict[str, dict[str, Any]] | None, rules: tuple[str, ...], key: str, value: Any
) -> dict[str, dict[str, Any]]:
    """The rules' extra config with one more setting for each of `rules` (a copy: the caller's is kept)."""
    return {**(extra or {}), **{rule: {**(extra or {}).get(rule, {}), key: value} for rule in rules}}


@contextmanager
def _collector_paused():
    """The cyclic garbage collector paused for one check: reading a plan with unknown values makes many
    container objects that live as long as the check, and at 10,000 resources they set off about 30
    collections in each check (measured with gc.callbacks: 26 ms of a 110 ms check). What the check leaves
    in cycles is collected once it ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check(
    resources: list[PlanResource],
    env: str,
    region: str,
    extra: dict[str, dict[str, Any]] | None = None,
    storage_classes: dict[str, dict[str, str]] | None = None,
    kubernetes_version: str | None = None,
) -> tuple[list[Violation], CostEstimate]:
    """Every rule over the plan and what its Helm releases render (when `kubernetes_version` is given), and
    the cost of the plan."""
    rendered: list[PlanResource] = []
    if kubernetes_version is not None:
        rendered, unrendered = rendered_releases(resources, kubernetes_version)
        extra = {**(extra or {}), CHART_RULE: {"unrendered": unrendered}}
    if storage_classes:  # the budget rules price a team's claims at its platform's classes too
        extra = _with_setting(extra, BUDGET_RULES, "storage_classes", storage_classes)
    with _collector_paused():  # its read form of the plan is freed before the collector is back
        return _judged(resources, rendered, env, region, extra, storage_classes)


def _judged(
    resources: list[PlanResource],
    rendered: list[PlanResource],
    env: str,
    region: str,
    extra: dict[str, dict[str, Any]] | None,
    storage_classes: dict[str, dict[str, str]] | None,
) -> tuple[list[Violation], CostEstimate]:
    unknowns: Literal["advisory", "fail"] = "fail" if fails_closed(env) else "advisory"
    read = read_plan(resources)  # scanned for unknowns once: the rules and the estimate read the same list
    try:
        cost = estimate_of_plan(read, region, storage_classes)
    except PriceSourceError as error:
        raise CheckInputError(f"no prices for {region}: {error}") from None
    roles = known_roles(resources, rendered)
    extra = _with_setting(extra, ROLE_AWARE_RULES, "known_roles", roles)
    extra = _with_setting(extra, ACCOUNT_AWARE_RULES, "service_accounts", service_accounts(resources, rendered))
    violations = run_rules(ALL_RULES, read, load_enforcement(env), extra, unknowns=unknowns)
    charts = _with_setting(extra, (POD_SECURITY_RULE,), "rendered", True)
    # Only a rendered object's parent is a release: a chart's allowances never reach what the program declares.
    charts = _with_setting(charts, CHART_AWARE_RULES, "release_charts", release_charts(resources))
    violations += run_rules(RENDERED_RULES, rendered, load_enforcement(env), charts, unknowns=unknowns)
    return violations, cost


def _signed_usd(amount: float) -> str:
    return f"{'-' if amount < 0 else '+'}${abs(amount):,.2f}"


def _short(urn: str | None) -> str:
    return urn.rsplit("::", 1)[-1] if urn else "(stack)"


def render_text(
    violations: list[Violation],
    cost: CostEstimate,
    delta: float | None,
    changes: list[Change] | None = None,
    diff_note: list[str] | None = None,
) -> str:
    lines = [f"Policy violations ({len(violations)}):" if violations else "Policy violations: none"]
    for v in violations:
        lines.append(f"  [{v.level}] {v.policy}: {_short(v.urn)}: {v.message}")
        lines.append(f"      fix: {v.remediation}")
    lines += ["", f"Estimated cost: ${cost.monthly_usd:,.2f}/month"]
    for line in sorted(cost.lines, key=lambda cost_line: -(cost_line.monthly_usd or 0)):
        shown = "unknown" if line.monthly_usd is None else f"${line.monthly_usd:,.2f}"
        lines.append(f"  {shown:>12}  {_short(line.urn)}  ({line.basis})")
    if delta is not None:
        lines.append(f"  change against the base plan: {_signed_usd(delta)}/month")
    if changes is not None:
        lines += ["", *render_diff(changes), *(diff_note or [])]
    return "\n".join(lines)


def render_markdown(
    violations: list[Violation],
    cost: CostEstimate,
    delta: float | None,
    title: str,
    changes: list[Change] | None = None,
    diff_note: list[str] | None = None,
) -> str:
    mandatory = [v for v in violations if v.level == "mandatory"]
    verdict = "fails" if mandatory else "passes"
    lines = [
        f"### seedance check: {title} {verdict}",
        "",
        f"**Estimated cost:** ${cost.monthly_usd:,.2f}/month"
        + (f" ({_signed_usd(delta)} against the base plan)" if delta is not None else ""),
        "",
    ]
    if violations:
        lines += ["| level | policy | resource | message | fix |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| {v.level} | `{v.policy}` | `{_short(v.urn)}` | {v.message.replace('|', '/')} | {v.remediation} |"
            for v in violations
        ]
    else:
        lines.append("No policy violations.")
    if changes is not None:
        rolled = replaced_nodes(changes)
        lines += [
            "",
            "**Nodes replaced:** "
            + ("; ".join(f"`{group}`: {effect.summary()}" for group, effect in rolled) if rolled else "none"),
            "",
            "<details><summary>Changes to the running system</summary>",
            "",
            "```",
            *render_diff(changes),
            *(diff_note or []),
            "```",
            "",
            "</details>",
        ]
    lines += [
        "",
        "<details><summary>Cost by resource</summary>",
        "",
        "| resource | monthly | basis |",
        "| --- | ---: | --- |",
    ]
    for line in sorted(cost.lines, key=lambda cost_line: -(cost_line.monthly_usd or 0)):
        shown = "unknown" if line.monthly_usd is None else f"${line.monthly_usd:,.2f}"
        lines.append(f"| `{_short(line.urn)}` | {shown} | {line.basis} |")
    lines += ["", "</details>"]
    return "\n".join(lines)


def run(args: argparse.Namespace, offline_plan, stack_outputs) -> int:
    """`offline_plan(stack, program, stack_file)` and `stack_outputs(reference)` come from the CLI (they run
    the engine)."""
    config, contracts = None, []
    if args.plan:
        if args.stack:
            raise CheckInputError("give --stack (plan a stack and check it) or --plan (check a plan file), not both")
        resources, plan_stack = resources_from_file(args.plan)
        env = args.env or (plan_stack if plan_stack in ENVIRONMENTS else None)
        config = _stack_settings(args, plan_stack or env) if plan_stack or args.stack_file else None
        if env is None:
            raise CheckInputError(
                f"{args.plan}: the plan's stack {plan_stack!r} is not an environment; give --env "
                f"({', '.join(ENVIRONMENTS)}) to choose whose rules apply"
            )
        if config is None and fails_closed(env):
            # A plan file names its own stack and project: renamed, it would be judged with no intent at all.
            contracts = referenced_contracts(resources, stack_outputs)
            if not contracts:
                raise CheckInputError(
                    f"{args.plan}: nothing to judge it against in {env}: no stack config for its stack "
                    f"{plan_stack!r} here, and it reads no platform's contract; run the check in the project "
                    "the plan was made from, or pass --stack-file with the config it was made from"
                )
        title = f"plan {args.plan.name}"
    else:
        if not args.stack:
            raise CheckInputError("give --stack or --plan")
        plan, _header = offline_plan(args.stack, args.program, args.stack_file)
        resources = plan_resources(plan)
        contracts = referenced_contracts(resources, stack_outputs)
        config = _stack_settings(args, args.stack)
        env = args.env or (config.env if config else args.stack if args.stack in ENVIRONMENTS else None)
        if env is None:
            raise CheckInputError(
                f"stack {args.stack!r} is not an environment; give --env ({', '.join(ENVIRONMENTS)}) "
                "to choose whose rules apply"
            )
        title = f"stack {args.stack}"
    if not (CONFIG_DIR / f"{env}.json").exists():
        raise CheckInputError(f"no policy config for environment {env!r}; known: {', '.join(ENVIRONMENTS)}")
    region = (
        config.region
        if config
        else load_enforcement(env).get("budget-monthly-cost-limit", {}).get("region", "us-east-1")
    )
    try:
        violations, cost = check(
            resources,
            env,
            region,
            rule_config(config, contracts),
            referenced_storage_classes(contracts),
            cluster_version(resources, config),
        )
    except PolicyConfigError as error:
        raise CheckInputError(f"policy config for {env}: {error}") from None
    delta, changes, diff_note = None, None, None
    if args.compare:
        base_resources, _ = resources_from_file(args.compare)
        delta = round(cost.monthly_usd - estimate(base_resources, catalog_for(region)).monthly_usd, 2)
        changes = plan_diff(base_resources, resources)
        diff_note = masked_note(base_resources, resources)
    if args.format == "json":
        document = {"violations": [v.to_json() for v in violations], "cost": cost.to_json()}
        if delta is not None and changes is not None:  # both, with --compare
            document["compare"] = {
                "base": str(args.compare),
                "monthly_delta_usd": delta,
                "changes": render_diff(changes) + (diff_note or []),
            }
        print(json.dumps(document, indent=2))
    elif args.format == "markdown":
        print(render_markdown(violations, cost, delta, title, changes, diff_note))
    else:
        print(render_text(violations, cost, delta, changes, diff_note))
    return 1 if any(v.level == "mandatory" for v in violations) else 0


def diff(args: argparse.Namespace, offline_plan) -> int:
    """`seedance diff BASE.json [HEAD.json | --stack S]`: what the change does to the running system."""
    base, base_stack = resources_from_file(args.base)
    if (args.head is None) == (args.stack is None):
        raise CheckInputError("give the head as a plan file or as --stack (plan it offline), one of the two")
    if args.head is not None:
        head, head_stack = resources_from_file(args.head)
    else:
        head, head_stack = plan_resources(offline_plan(args.stack, args.program, args.stack_file)[0]), args.stack
    # Two stacks' plans share no resource: every one would read as deleted and created.
    if base_stack and head_stack and base_stack != head_stack and not args.across_stacks:
        raise CheckInputError(
            f"the base is a plan of stack {base_stack!r} and the head of {head_stack!r}: a diff is "
            "of one stack; pass --across-stacks to compare them anyway"
        )
    print("\n".join(render_diff(plan_diff(base, head)) + masked_note(base, head)))
    return 0


def pull_charts(args: argparse.Namespace) -> int:
    """`seedance charts pull --plan FILE`: the charts the gate renders, fetched and checked by digest."""
    resources, _ = resources_from_file(args.plan)
    for folder in pull(resources, args.timeout):
        print(f"pulled {folder}")
    print(f"charts of {args.plan.name} are in {chart_cache()}")
    return 0


def register(commands: argparse._SubParsersAction, run_check, run_diff) -> None:
    charts = commands.add_parser("charts", help="the Helm charts the gate renders")
    charts_verbs = charts.add_subparsers(dest="verb", required=True)
    pull_command = charts_verbs.add_parser(
        "pull",
        help="fetch every chart a plan's releases pin into the chart cache "
        "($SEEDANCE_CHART_CACHE), checked against its digest",
    )
    pull_command.add_argument("--plan", type=Path, required=True, metavar="FILE", help="a `seedance plan --json` file")
    pull_command.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=300.0,
        metavar="SECONDS",
        help="one deadline for every download (default 300)",
    )
    pull_command.set_defaults(run=pull_charts)
    changes = commands.add_parser(
        "diff",
        help="what a change does to the running system: created, updated, "
        "replaced resources, and the GPU nodes an instance refresh replaces",
    )
    changes.add_argument("base", type=Path, metavar="BASE.json", help="the plan before (`seedance plan --json`)")
    changes.add_argument("head", type=Path, nargs="?", metavar="HEAD.json", help="the plan after")
    changes.add_argument("--stack", help="plan this stack offline as the head")
    changes.add_argument("--program", type=Path, help="Pulumi Python program directory (default: the project's main)")
    changes.add_argument("--stack-file", type=Path, help="use this stack config file instead of the project's")
    changes.add_argument("--across-stacks", action="store_true", help="compare plans of two different stacks")
    changes.set_defaults(run=run_diff)
    check = commands.add_parser("check", help="run the policy pack and the cost estimate over a plan")
    check.add_argument("--stack", help="plan this stack offline and check it")
    check.add_argument("--program", type=Path, help="Pulumi Python program directory (default: the project's main)")
    check.add_argument(
        "--stack-file",
        type=Path,
        help="use this stack config file instead of the project's (with "
        "--plan: the config the plan is judged against; default: the project's file of its stack)",
    )
    check.add_argument("--plan", type=Path, metavar="FILE", help="check a plan JSON instead of running a program")
    check.add_argument("--env", choices=ENVIRONMENTS, help="enforcement levels to use (default: the stack's name)")
    check.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    check.add_argument(
        "--compare",
        type=Path,
        metavar="BASE.json",
        help="report the cost change and what changes in the running system against a base plan",
    )
    check.set_defaults(run=run_check)
