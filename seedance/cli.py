"""`seedance`: offline plans, capacity decisions and price snapshots for Pulumi stacks.

Exit codes: 0 success; 1 a failure (for `check`: a mandatory rule failed); 2 a configuration or input error,
always one line naming the file, key or field.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import yaml
from botocore.exceptions import BotoCoreError, ClientError

from components.cluster.versions import kubernetes_version
from components.common.validation import clipped
from components.compute.capacity_block import block_lines
from components.compute.labels import NODE_GROUP_LABEL, WORKLOAD_CLASS_LABEL, pool_tolerations
from components.cost.estimate import catalog_for, estimate
from components.monitoring.sizing import cost_loop_monthly_usd, history_volume_gib
from components.network.egress import report_lines
from components.pricing.prices import PriceSourceError
from components.serving.capacity import table_lines
from components.stack.capacity import RunMode, reference_previews, table_zones
from components.stack.config import PROJECT
from components.stack.derivation import account_steps, capacity_report, checkpoint_decision, derive
from components.stack.placeholders import placeholders
from components.storage.manifests import fio_checkpoint_test
from seedance import (
    breaker_command,
    budget_tag_command,
    capacity_blocks_command,
    capacity_commands,
    check_command,
    config_reference,
    cost_gate_command,
    images_command,
    model_command,
    preflight,
    quotas_command,
)
from seedance.offline_cloud import OfflineCloud
from seedance.plan_output import plan_to_json, plan_to_text
from seedance.stack_input import load_stack
from seedance.tfplan import terraform_plan
from seedance_client.engine import Plan, ProgramFailed, ProgramInputError, run_program
from seedance_client.errors import EXIT_INTERRUPTED, EXIT_UNEXPECTED, InputError, Interrupted, unexpected
from seedance_client.files import write_text
from seedance_client.project import StackFileError, find_project, load_stack_config

EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2
DEFAULT_OFFLINE_REGION = "us-east-1"
# The seedance program itself, which answers references to seedance stacks offline.
PLATFORM_PROGRAM = Path(__file__).resolve().parents[1] / "infra"


class UsageError(InputError):
    """Bad input from the user: printed as one line, exit code 2."""


def offline_plan(stack: str, program: Path | None, stack_file: Path | None) -> tuple[Plan, str]:
    """Run the stack's program offline; returns the plan and a one-line description of it."""
    try:
        project = find_project(program or Path.cwd())
        program_dir = program.resolve() if program else project.program_dir
        config_file = stack_file or project.stack_file(stack)
        config = load_stack_config(project, config_file)
    except StackFileError as error:
        raise UsageError(str(error)) from None
    region = config.get("aws:region") or DEFAULT_OFFLINE_REGION
    try:
        cloud = OfflineCloud(region, stack_outputs=platform_stack_outputs)
    except ValueError as error:
        raise UsageError(f"invalid config aws:region = {json.dumps(region)}: {error}") from None
    try:
        plan = run_program(
            program_dir,
            project=project.name,
            stack=stack,
            config=config.values,
            secret_keys=config.secret_keys,
            mocks=cloud,
        )
    except ProgramInputError as error:
        raise UsageError(str(error)) from None
    header = (
        f"Offline plan (no cloud calls) of stack '{stack}' of project '{project.name}', "
        f"config {config_file}, program {program_dir}"
    )
    return plan, header


def _derived_sections(args: argparse.Namespace, plan: Plan) -> list[list[str]]:
    """The seedance stack's reports, derived here from its config as the program derives them (the same
    function, the same bundled prices and zones), rendered for people. Other programs have none."""
    if plan.project != PROJECT:  # an application team's program: its stack config is not ours to read
        return [_cost_section(plan)]
    project, config = load_stack(args.program, args.stack, args.stack_file)
    now = datetime.now(UTC)
    derived = derive(config, args.stack, table_zones(config), project.stack_config_dir, now, RunMode.offline_plan())
    version = kubernetes_version(config.cluster.kubernetes_version)
    assert version is not None  # the config takes only the table's versions
    warning = version.warning(now.date())
    storage = derived.checkpoint.lines() if derived.checkpoint else []
    egress = report_lines(derived.egress) if derived.egress else [f"  no egress estimate: {derived.egress_problem}"]
    serving = table_lines(list(derived.serving)) if derived.serving else []
    return [
        ["Checkpoint volume sizing (monthly, per volume):", *[f"  {line}" for line in storage]] if storage else [],
        ["Egress to AWS services, per month (through NAT only vs this stack's endpoints):", *egress],
        capacity_commands.capacity_section(
            {"capacity": capacity_report(derived.capacity, {})}, reference_previews(config, table_zones(config), now)
        ),
        _cost_section(plan),
        [
            "Capacity Blocks, each run by its pool in its own group:",
            *[
                line
                for group in config.gpu_node_groups
                for block in group.capacity_blocks
                for line in block_lines(group.name, block, derived.blocks[block.reservation_id])
            ],
        ]
        if derived.blocks
        else [],
        ["Triton pods the autoscalers may ask for, against each group at its maximum:", *serving] if serving else [],
        [
            "Prometheus series at the groups' maxima (rules, dashboards and OpenCost included):",
            *derived.series.lines(),
            f"  history: {history_volume_gib(config.monitoring, derived.series)} GiB for "
            f"{config.monitoring.retention_hours} h, "
            + (
                "on a gp3 claim (survives a node's replacement)"
                if config.monitoring.persistent
                else "on an emptyDir (restarts with the pod: monitoring.persistent is false)"
            ),
            "The cost loop's in-cluster parts, a month (their requests at OpenCost's rates; the breaker's function and "
            "bucket: a few invocations and kilobytes, under $0.01):",
            *[f"  {part}: ${usd:,.2f}" for part, usd in cost_loop_monthly_usd(derived.series).items()],
        ],
        [f"Warning: {warning}"] if warning else [],
        [
            "Placeholders (an offline plan keeps them; a real `pulumi up` refuses them):",
            *[f"  - {PROJECT}:{key} = {value} ({what})" for key, value, what in found],
        ]
        if (found := placeholders(config))
        else [],
        [
            "GPU node images not pinned (an offline plan reads the recommended one; a real `pulumi up` refuses):",
            *[f"  - {key}: run `seedance images pin --stack {args.stack}`" for key in derived.unpinned_images],
        ]
        if derived.unpinned_images
        else [],
        [
            "Steps outside `pulumi up` (AWS requires them):",
            *[f"  - {step}" for step in account_steps(config, args.stack)],
        ],
    ]


def _stack_config(args: argparse.Namespace):
    return load_stack(args.program, args.stack, args.stack_file)[1]


def _fio_job_command(args: argparse.Namespace) -> int:
    """Print the fio checkpoint-write Job for a stack's checkpoint class, to run after `pulumi up`."""
    config = _stack_config(args)
    checkpoints = config.storage.checkpoints
    if checkpoints is None:
        raise UsageError(f"stack {args.stack} has no {PROJECT}:storage.checkpoints")
    group = next(g for g in config.gpu_node_groups if g.name == checkpoints.node_group)
    decision = checkpoint_decision(config)
    assert decision is not None  # sized: the stack has checkpoints
    manifests = fio_checkpoint_test(
        checkpoints.storage_class_name,
        decision.chosen.size_gib,
        checkpoints.namespace,
        {WORKLOAD_CLASS_LABEL: group.workload_class, NODE_GROUP_LABEL: group.name},
        pool_tolerations(group.name),
    )
    print(yaml.safe_dump_all(manifests, sort_keys=False), end="")
    return EXIT_OK


def _export_tfplan_command(args: argparse.Namespace) -> int:
    plan, _header = offline_plan(args.stack, args.program, args.stack_file)
    document = terraform_plan(check_command.plan_resources(plan))
    write_text(args.output, json.dumps(document, indent=2) + "\n", "Terraform plan")
    print(f"{args.output}: {len(document['resource_changes'])} AWS resources as a Terraform plan")
    return EXIT_OK


def _cost_section(plan: Plan) -> list[str]:
    """The monthly estimate of what the plan creates (prices of the plan's region, bundled snapshot)."""
    region = plan.outputs.get("region")
    if not isinstance(region, str):
        return []
    try:
        cost = estimate(check_command.plan_resources(plan), catalog_for(region))
    except PriceSourceError:
        return []
    expected = (
        f"; ${cost.expected_monthly_usd:,.2f} expected with spot at the plans' prices"
        if cost.expected_monthly_usd != cost.monthly_usd
        else ""
    )
    lines = [
        f"Estimated cost: ${cost.monthly_usd:,.2f}/month worst case, spot at on-demand{expected} "
        "(730 h; `seedance check` lists every resource)"
    ]
    for line in sorted(cost.lines, key=lambda cost_line: -(cost_line.monthly_usd or 0))[:6]:
        shown = "unknown" if line.monthly_usd is None else f"${line.monthly_usd:,.2f}"
        lines.append(
            f"  {shown:>12}  {line.urn.rsplit('::', 1)[-1]}"
            + (f"  (expected ${line.expected_usd:,.2f})" if line.expected_usd is not None else "")
        )
    return lines


@functools.cache
def platform_stack_outputs(reference: str) -> dict | None:
    """Offline answer to a StackReference `org/seedance-gpu/<stack>`: the outputs of that stack's own
    offline plan (secrets masked). Planned in a separate process: the Pulumi runtime of the program
    asking is mid-registration and cannot host a second program."""
    parts = reference.split("/")
    if len(parts) != 3 or parts[1] != PROJECT:
        return None
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "platform.json"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "seedance.cli",
                "plan",
                "--stack",
                parts[2],
                "--program",
                str(PLATFORM_PROGRAM),
                "--json",
                str(out),
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise ProgramFailed(f"offline plan of the referenced stack {reference} failed: {result.stderr.strip()}")
        return json.loads(out.read_text())["outputs"]


def _plan_command(args: argparse.Namespace) -> int:
    plan, header = offline_plan(args.stack, args.program, args.stack_file)
    # Written before the long printout, so that a reader who stops it (| head) still gets the file.
    if args.json:
        write_text(
            args.json, json.dumps(plan_to_json(plan, args.show_secrets), indent=2, sort_keys=True) + "\n", "plan JSON"
        )
    sections = _derived_sections(args, plan)
    print(plan_to_text(plan, header, omit_outputs=("reports",) if "reports" in plan.outputs else ()))
    for lines in sections:
        if lines:
            print("\n" + "\n".join(lines))
    if args.json:
        print(f"\nPlan JSON written to {args.json}")
    return EXIT_OK


def _version() -> str:
    try:
        return metadata.version("seedance-infra")
    except metadata.PackageNotFoundError:
        return "(not installed)"


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other error (`--help` shows the usage)."""

    def error(self, message: str):
        self.exit(EXIT_CONFIG, f"seedance: error: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="seedance", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"seedance {_version()}")
    parser.add_argument("--debug", action="store_true", help="on an unexpected error, show its traceback")
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="offline plan of a stack: resource tree, counts, outputs")
    _stack_arguments(plan)
    plan.add_argument("--json", type=Path, metavar="FILE", help="also write the plan as JSON to FILE")
    plan.add_argument(
        "--show-secrets",
        action="store_true",
        help="write secret inputs into the JSON instead of [secret] (offline they are stand-ins), so "
        "`seedance check --plan` can render Helm releases whose values hold one",
    )
    plan.set_defaults(run=_plan_command)
    fio = commands.add_parser("fio-job", help="print the fio checkpoint-write Job for the stack's checkpoint class")
    _stack_arguments(fio)
    fio.set_defaults(run=_fio_job_command)
    capacity_commands.register(commands, _stack_arguments)
    capacity_blocks_command.register(commands, _stack_arguments)
    preflight.register(commands, _stack_arguments)
    model_command.register(commands)
    check_command.register(
        commands,
        lambda args: check_command.run(args, offline_plan, platform_stack_outputs),
        lambda args: check_command.diff(args, offline_plan),
    )
    config = commands.add_parser("config", help="the configuration reference, from the pydantic models")
    config_verbs = config.add_subparsers(dest="verb", required=True)
    config_verbs.add_parser("schema", help="print the JSON Schema of a stack's config").set_defaults(
        run=lambda args: print(config_reference.json_schema()) or EXIT_OK
    )
    config_verbs.add_parser("docs", help="print the markdown reference (docs/configuration.md)").set_defaults(
        run=lambda args: print(config_reference.markdown_reference(), end="") or EXIT_OK
    )
    breaker_command.register(commands, _stack_arguments, _stack_config)
    budget_tag_command.register(commands, _stack_arguments, _stack_config)
    images_command.register(commands, _stack_arguments)
    cost_gate_command.register(commands, _stack_arguments)
    quotas_command.register(commands, _stack_arguments)
    export = commands.add_parser("export", help="export a stack's offline plan for other tools")
    formats = export.add_subparsers(dest="format", required=True)
    tfplan = formats.add_parser("tfplan", help="Terraform plan JSON of the AWS resources (for checkov, conftest)")
    _stack_arguments(tfplan)
    tfplan.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    tfplan.set_defaults(run=_export_tfplan_command)
    return parser


def _stack_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--stack", required=True, help="stack name, e.g. dev (reads <stackConfigDir>/Pulumi.<stack>.yaml)"
    )
    command.add_argument("--program", type=Path, help="Pulumi Python program directory (default: the project's main)")
    command.add_argument("--stack-file", type=Path, help="use this stack config file instead of the project's")


ERROR_LINE_LIMIT = 1_000


def _say(line: str) -> None:
    """One bounded line on stderr: an error that quotes its input must not print the input back whole."""
    print(clipped(line, ERROR_LINE_LIMIT), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    # A terminal or pipe that cannot encode the tree's box characters gets escapes, not a traceback.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)
    # The mock engine logs every resource at INFO; only warnings matter to a reader.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    try:
        code = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return code
    except BrokenPipeError:
        # The reader stopped reading (`| head`): what it read is what it wanted.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except InputError as error:
        _say(f"seedance: error: {error}")
        return EXIT_CONFIG
    except Interrupted as error:
        _say(f"seedance: {error}")
        return EXIT_INTERRUPTED
    except ProgramFailed as error:
        print(f"seedance: {error}", file=sys.stderr)
        return EXIT_FAILED
    except (BotoCoreError, ClientError) as error:
        # Commands that call AWS: missing credentials, a denied call, an unreachable endpoint.
        _say(f"seedance: error: AWS: {error}")
        return EXIT_CONFIG
    except OSError as error:  # a file or stream it reads or writes failed: a full disk, a closed stdout
        where = f" ({error.filename})" if error.filename else " (the output)"
        _say(f"seedance: error: {error.strerror or error}{where}")
        return EXIT_CONFIG
    except Exception as error:
        if getattr(args, "debug", False):
            raise
        _say(unexpected(error, args))
        return EXIT_UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
