"""A team's program planned without the platform's package or a cloud: the program runs under Pulumi's mock
runtime (`seedance_client.engine`), each StackReference is answered with a platform's contract read from a
file (`pulumi stack output --json` of the platform stack, or its `seedance plan --json`), and the few
invokes a team's program asks of where it runs are answered from that contract's region."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from seedance_client.contract import SECRET_FIELDS, ContractVersionError, PlatformContract, read_contract
from seedance_client.engine import Plan, run_program
from seedance_client.errors import InputError
from seedance_client.files import MAX_PLAN_BYTES, InputFileError, load_json
from seedance_client.project import StackFileError, find_project, load_stack_config
from seedance_client.tokens import GET_CALLER_IDENTITY, GET_PARTITION, GET_REGION, STACK_REFERENCE

# What the offline answers name as the account: AWS's documentation account, never a real one (the
# platform's offline cloud answers with the same).
OFFLINE_ACCOUNT_ID = "123456789012"


class OfflineInputError(InputError):
    """A contract file, project or stack file that cannot be used: one line, exit code 2."""


def load_contract(path: Path) -> tuple[dict[str, Any], PlatformContract]:
    """The platform's outputs from a file (bounded: it is a file a user can edit) and the contract they are."""
    try:
        document = load_json(path, "contract file", MAX_PLAN_BYTES)
    except InputFileError as error:
        raise OfflineInputError(str(error)) from None
    if not isinstance(document, dict):
        raise OfflineInputError(f"{path}: a contract file is the platform stack's outputs, a JSON object")
    # `seedance plan --json` of the platform holds the outputs under "outputs"; `pulumi stack output --json` is them.
    outputs = document["outputs"] if isinstance(document.get("outputs"), dict) else document
    try:
        return outputs, read_contract(outputs, str(path))
    except ContractVersionError as error:
        raise OfflineInputError(str(error)) from None


class ContractCloud(pulumi.runtime.Mocks):
    """A resource gets its inputs back and an id; a StackReference gets the contract's outputs."""

    def __init__(self, outputs: dict[str, Any], region: str):
        self.outputs, self.region = outputs, region
        self.references: list[str] = []  # the stack names the program read, in order
        self._invokes = {
            GET_REGION: {"id": region, "name": region, "region": region, "endpoint": f"ec2.{region}.amazonaws.com"},
            GET_PARTITION: {"id": "aws", "partition": "aws", "dnsSuffix": "amazonaws.com"},
            GET_CALLER_IDENTITY: {
                "id": OFFLINE_ACCOUNT_ID,
                "accountId": OFFLINE_ACCOUNT_ID,
                "userId": "offline",
                "arn": f"arn:aws:sts::{OFFLINE_ACCOUNT_ID}:assumed-role/team-ci/offline-plan",
            },
        }

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        if args.typ == STACK_REFERENCE:
            self.references.append(str(args.inputs.get("name") or args.name))
            return args.name, {"name": args.name, "outputs": self.outputs, "secretOutputNames": list(SECRET_FIELDS)}
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        answer = self._invokes.get(args.token)
        if answer is None:
            raise NotImplementedError(
                f"the client's offline plan has no answer for invoke {args.token}; it answers "
                f"{', '.join(sorted(self._invokes))} (the platform's `seedance plan` answers more)"
            )
        return answer


def referenced_stack(reference: str, project: str) -> str:
    """<project>/<stack> of a StackReference name, as Pulumi reads it: `stack` and `org/stack` name a stack of
    the program's own project, `org/project/stack` one of any."""
    parts = reference.split("/")
    return f"{parts[-2] if len(parts) == 3 else project}/{parts[-1]}"


def _check_identity(reference: str, project: str, contract: PlatformContract, contract_file: Path) -> None:
    """A contract file answers every StackReference: it must be the outputs of the stack the program names,
    else the check would judge (and price) the plan against another platform's contract."""
    named = referenced_stack(reference, project)
    if named != contract.stack:
        holds = f"the outputs of {contract.stack}" if contract.stack else "outputs that do not name their stack"
        raise OfflineInputError(
            f"{contract_file} holds {holds}, but the program reads stack {reference!r} ({named}): pass that "
            f"stack's outputs (`pulumi stack output --json -s {reference}`)"
        )


def plan_team_program(
    program: Path, stack: str, contract_file: Path, stack_file: Path | None = None
) -> tuple[Plan, PlatformContract, str]:
    """The team's program at `program` for `stack` (its config from the project's stack file, or
    `stack_file`), every StackReference answered by `contract_file`: the plan, the contract, and a line
    saying what was planned."""
    outputs, contract = load_contract(contract_file)
    try:
        project = find_project(program)
        config = load_stack_config(project, stack_file or project.stack_file(stack))
    except StackFileError as error:
        raise OfflineInputError(str(error)) from None
    region = config.get("aws:region") or contract.region
    if region != contract.region:
        raise OfflineInputError(
            f"{contract_file} is the contract of a platform in {contract.region}; stack '{stack}' is in {region} "
            "(its aws:region): check it against the contract of its own region's platform"
        )
    cloud = ContractCloud(outputs, region)
    plan = run_program(
        project.program_dir if program.resolve() == project.root else program,
        project=project.name,
        stack=stack,
        config=config.values,
        secret_keys=config.secret_keys,
        mocks=cloud,
    )
    for reference in cloud.references:
        _check_identity(reference, project.name, contract, contract_file)
    return (
        plan,
        contract,
        (
            f"Offline plan (no cloud calls) of stack '{stack}' of project '{project.name}' against "
            f"the platform contract {contract.contract_version} in {contract_file}"
        ),
    )
