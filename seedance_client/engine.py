"""Run any Pulumi Python program in-process under Pulumi's mock runtime and capture its plan.

The engine knows nothing about this repository's components: it executes a program directory
the way the Python language host does (`runpy` on the directory, inside `run_in_stack`), with
the stack's config, and records every `RegisterResource` request and the root stack's outputs.
The answers a real cloud would give (invoke results, computed attributes) come from the
`pulumi.runtime.Mocks` passed in.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import runpy
import threading
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import struct_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.config import set_all_config
from pulumi.runtime.stack import run_in_stack

from seedance_client.errors import InputError
from seedance_client.tokens import STACK as STACK_TYPE
from seedance_client.tokens import STACK_REFERENCE


@dataclass(frozen=True)
class Secret:
    """A value the program marked secret; renderers must mask it."""

    value: Any


@dataclass(frozen=True)
class PlannedResource:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    dependencies: tuple[str, ...] = ()  # URNs it waits for (depends_on and the outputs it reads)
    id: str | None = None  # the physical id the mocks answered
    retain_on_delete: bool = False
    delete_before_replace: bool = False
    ignore_changes: tuple[str, ...] = ()
    custom_timeouts: dict[str, str] = field(default_factory=dict)  # create/update/delete, e.g. "20m"


@dataclass
class Plan:
    project: str
    stack: str
    resources: list[PlannedResource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)

    def of_type(self, type_token: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_token]


class ProgramInputError(InputError):
    """The program rejected its input with `pulumi.RunError` (a config error, exit code 2)."""


class ProgramFailed(Exception):
    """The program crashed or asked for something the mocks cannot answer (exit code 1)."""


def unwrap_secrets(value: Any) -> Any:
    """Turn Pulumi's wire-format secret wrappers into `Secret` values, recursively."""
    if rpc.is_rpc_secret(value):
        return Secret(unwrap_secrets(rpc.unwrap_rpc_secret(value)))
    if isinstance(value, dict):
        return {k: unwrap_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap_secrets(v) for v in value]
    return value


def _inputs_with_secrets_in_place(struct: Any) -> dict[str, Any]:
    """A registration's inputs, each secret a `Secret` where the program put it. The SDK's deserializer
    marks a whole mapping or list secret when one value in it is (a release's values for one key in them),
    which would hide from a plan file what is not secret; each property is read on its own, and a mapping
    or list whose parts are serialized is rebuilt from its parts."""
    return {key: _value_with_secrets_in_place(value) for key, value in struct.items()}


def _value_with_secrets_in_place(value: Any) -> Any:
    if isinstance(value, struct_pb2.Struct):
        if rpc._special_sig_key in value:
            return unwrap_secrets(rpc.deserialize_property(value, keep_unknowns=True))
        return {key: _value_with_secrets_in_place(child) for key, child in value.items()}
    if isinstance(value, struct_pb2.ListValue):
        return [_value_with_secrets_in_place(child) for child in value]
    return unwrap_secrets(rpc.deserialize_property(value, keep_unknowns=True))


class _CapturingMonitor(pulumi_mocks.MockMonitor):
    """The SDK's mock monitor, also keeping each registration's parent, inputs and the stack outputs."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self._lock = threading.Lock()
        self.registered: list[PlannedResource] = []
        self.stack_urn: str | None = None
        self.stack_outputs: dict[str, Any] = {}

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type == STACK_TYPE:
            self.stack_urn = response.urn
            return response
        inputs = _inputs_with_secrets_in_place(request.object)
        resource = PlannedResource(
            urn=response.urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            custom=bool(request.custom),
            inputs=inputs,
            dependencies=tuple(sorted(set(request.dependencies))),
            id=response.id or None,
            retain_on_delete=bool(request.retainOnDelete),
            delete_before_replace=bool(request.deleteBeforeReplace),
            ignore_changes=tuple(request.ignoreChanges),
            custom_timeouts={
                k: v for k in ("create", "update", "delete") if (v := getattr(request.customTimeouts, k, ""))
            },
        )
        with self._lock:
            self.registered.append(resource)
        return response

    def ReadResource(self, request):
        """A read resource (a StackReference): kept in the plan, so readers know which stacks it reads."""
        response = super().ReadResource(request)
        if request.type == STACK_REFERENCE:
            with self._lock:
                self.registered.append(
                    PlannedResource(
                        urn=response.urn,
                        type=request.type,
                        name=request.name,
                        parent=request.parent or None,
                        custom=True,
                        inputs={"name": request.id},
                        id=request.id,
                    )
                )
        return response

    def RegisterResourceOutputs(self, request):
        if request.urn == self.stack_urn:
            outputs = rpc.deserialize_properties(request.outputs, keep_unknowns=True)
            self.stack_outputs = unwrap_secrets(outputs)
        return super().RegisterResourceOutputs(request)


def _quiet_about_reported_errors(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """A program that stops with `pulumi.RunError` inside an `apply` leaves every Output that depended on
    it holding that error, unretrieved, and registrations still in flight fail resolving them again
    ("invalid state", raised while handling the RunError). asyncio would log each one ("Future exception
    was never retrieved", hundreds of lines under the one-line error the run already reported), whenever
    the collector finds them: in another test, or inside an `ast.parse`, whose depth count CPython 3.11's
    traceback formatting then corrupts (it parses source lines to place its carets)."""
    if _follows_a_run_error(context.get("exception")):
        return
    loop.default_exception_handler(context)


def _follows_a_run_error(error: BaseException | None) -> bool:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, pulumi.RunError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


class _LoopTracker(asyncio.DefaultEventLoopPolicy):
    """Records every event loop made during a run (the SDK makes some of its own and leaves them
    open), so the run can close them all; left to the garbage collector, they fail noisily when
    their sockets are finalised first."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[asyncio.AbstractEventLoop] = []

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        loop.set_exception_handler(_quiet_about_reported_errors)
        self.created.append(loop)
        return loop

    def close_all(self) -> None:
        for loop in self.created:
            if not loop.is_closed() and not loop.is_running():
                loop.close()


@contextlib.contextmanager
def _working_directory(path: Path):
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def run_program(
    program_dir: Path,
    *,
    project: str,
    stack: str,
    config: dict[str, str],
    mocks: pulumi.runtime.Mocks,
    secret_keys: Iterable[str] = (),
    preview: bool = False,
) -> Plan:
    """Execute the program in `program_dir` under `mocks` and return what it declared."""
    program_dir = Path(program_dir).resolve()
    if not (program_dir / "__main__.py").is_file():
        raise ProgramInputError(f"{program_dir} has no __main__.py: not a Pulumi Python program directory")
    monitor = _CapturingMonitor(mocks)

    def program() -> None:
        runpy.run_path(str(program_dir), run_name="__main__")

    def execute() -> None:
        # The loop must exist before set_mocks: the root stack it creates queues work on it.
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=preview, monitor=monitor)
        # set_mocks installs a root stack of its own; `run_in_stack` must create the program's
        # root, as under `pulumi up`, so that `pulumi.export` values reach the monitor.
        settings.ROOT.set(None)
        # set_mocks leaves the set of pending outputs as it was: by default one set shared by every
        # run of the process, where a run that failed midway leaves its tasks for the next to await.
        settings.SETTINGS.outputs = set()
        settings.SETTINGS.lock = threading.Lock()
        set_all_config(dict(config), list(secret_keys))
        try:
            with _working_directory(program_dir):
                loop.run_until_complete(run_in_stack(program))
        finally:
            for task in asyncio.all_tasks(loop):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    loop.run_until_complete(task)
            loop.close()
            asyncio.set_event_loop(None)

    loops = _LoopTracker()
    previous_policy = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(loops)
    try:
        # A fresh context per run: the SDK keeps its settings in context variables.
        contextvars.copy_context().run(execute)
    except pulumi.RunError as error:
        raise ProgramInputError(str(error)) from None
    except ModuleNotFoundError as error:  # a client-only environment planning a program that needs more
        raise ProgramInputError(
            f"the program imports {error.name}, which this environment does not have: install the program's "
            f"requirements here (pip install -r {program_dir / 'requirements.txt'})"
        ) from None
    except Exception as error:
        detail = "".join(traceback.format_exception(error))
        raise ProgramFailed(f"the program failed: {error}\n{detail}") from None
    finally:
        asyncio.set_event_loop_policy(previous_policy)
        loops.close_all()

    resources = sorted(monitor.registered, key=lambda r: r.urn)
    return Plan(project=project, stack=stack, resources=resources, outputs=monitor.stack_outputs)
