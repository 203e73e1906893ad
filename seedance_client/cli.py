"""The client's `seedance` command, what a team's own virtualenv has: `model` (publish, promote, roll back),
`plan` (its program offline, against a platform contract file) and `check` (that plan held to the contract:
the namespaces, team label, priority classes and pools it may use, and what its claims cost). The
platform's package has the same verbs and more (`decide`, `preflight`, the whole policy pack)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from seedance_client import models
from seedance_client.engine import ProgramFailed
from seedance_client.errors import EXIT_INTERRUPTED, EXIT_UNEXPECTED, InputError, Interrupted, unexpected
from seedance_client.offline import plan_team_program
from seedance_client.team_rules import COSTLY_CLAIM_USD, team_findings

# The platform's verbs this package does not have: one line says where they are.
PLATFORM_COMMANDS = ("diff", "decide", "preflight", "cost-gate", "export", "config", "capacity-blocks", "breaker")


def _planned(args: argparse.Namespace):
    plan, contract, header = plan_team_program(args.program, args.stack, args.contract, args.stack_file)
    return plan, contract, header, [(r.type, r.name, r.inputs) for r in plan.resources]


def plan_command(args: argparse.Namespace) -> int:
    plan, _contract, header, _objects = _planned(args)
    print(header)
    print(f"{len(plan.resources)} resources:")
    for resource in plan.resources:
        print(f"  + {resource.type}  {resource.name}")
    if plan.outputs:
        print("Outputs: " + ", ".join(sorted(plan.outputs)))
    return 0


def check_command(args: argparse.Namespace) -> int:
    _plan, contract, header, objects = _planned(args)
    findings, costs = team_findings(objects, [contract], args.claim_limit)
    print(header)
    for finding in findings:
        print(f"[{finding.level}] {finding.rule}: {finding.message}")
    fails = any(f.level == "mandatory" for f in findings)
    if not fails:
        print("The plan fits the platform's contract.")
    for cost in costs:
        shown = "not priced" if cost.monthly_usd is None else f"${cost.monthly_usd:,.2f}/month"
        print(f"claim {cost.name}: {shown} ({cost.reason})")
    return 1 if fails else 0


def _register_team_verbs(commands: argparse._SubParsersAction) -> None:
    for verb, run, summary in (
        ("plan", plan_command, "plan the team's program offline against a platform contract"),
        ("check", check_command, "hold the team's offline plan to the platform's contract"),
    ):
        parser = commands.add_parser(verb, help=summary)
        parser.add_argument("--stack", required=True, help="the team's stack (its Pulumi.<stack>.yaml)")
        parser.add_argument(
            "--contract",
            type=Path,
            required=True,
            metavar="FILE",
            help="the platform stack's outputs: `pulumi stack output --json -s <org>/seedance-gpu/<env>` "
            "(or the platform's `seedance plan --json`); it answers every StackReference",
        )
        parser.add_argument(
            "--program", type=Path, default=Path.cwd(), help="the team's Pulumi project directory (default: here)"
        )
        parser.add_argument("--stack-file", type=Path, help="use this stack config file instead of the project's")
        if verb == "check":
            parser.add_argument(
                "--claim-limit",
                type=float,
                default=COSTLY_CLAIM_USD,
                metavar="USD",
                help=f"name claims above this a month (default {COSTLY_CLAIM_USD:,.0f})",
            )
        parser.set_defaults(run=run)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in PLATFORM_COMMANDS:
        # The same `seedance` name as the platform's command: say which package has the rest.
        print(
            f"seedance: error: `seedance {argv[0]}` comes with the platform's package (pip install "
            f'"seedance-infra @ git+https://<platform repo>@<commit>", docs/onboarding.md); this environment has '
            "the client only: seedance model | plan | check",
            file=sys.stderr,
        )
        return 2
    parser = argparse.ArgumentParser(prog="seedance", description="A team's side of a seedance platform")
    parser.add_argument("--debug", action="store_true", help="on an unexpected error, show its traceback")
    commands = parser.add_subparsers(dest="command", required=True)
    models.register(commands)
    _register_team_verbs(commands)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except InputError as error:
        print(f"seedance: error: {error}", file=sys.stderr)
        return 2
    except Interrupted as error:
        print(f"seedance: {error}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ProgramFailed as error:
        print(f"seedance: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        if type(error).__module__.startswith("botocore"):  # the AWS SDK's: a denied call, an unreachable endpoint
            print(f"seedance: error: AWS: {error}", file=sys.stderr)
            return 2
        if getattr(args, "debug", False):
            raise
        print(unexpected(error, args), file=sys.stderr)
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
