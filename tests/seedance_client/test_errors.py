"""Refused input ends a command with exit 2 and one line, in both CLIs, whatever module refused it: one
base class (seedance_client.errors.InputError), not a list of exception types each CLI keeps."""

import argparse

import pytest

import seedance.cli
import seedance_client.cli
from components.cost.gate import GateInputError
from seedance.breaker_command import BreakerRefused
from seedance.capacity_commands import CommandError
from seedance.charts import ChartFetchError
from seedance.check_command import CheckInputError
from seedance.images_command import ImagesError
from seedance.stack_input import StackInputError
from seedance_client.engine import ProgramInputError
from seedance_client.errors import InputError
from seedance_client.files import InputFileError, OutputFileError
from seedance_client.offline import OfflineInputError
from seedance_client.publishing import PublishError


class NewlyRefused(InputError):
    """A refusal a future command adds: no CLI lists it."""


@pytest.fixture
def command_raising(monkeypatch):
    def install(error: Exception) -> None:
        def run(_args):
            raise error

        monkeypatch.setattr(argparse.ArgumentParser, "parse_args", lambda self, argv=None: argparse.Namespace(run=run))

    return install


@pytest.mark.parametrize("main", [seedance.cli.main, seedance_client.cli.main], ids=["platform", "client"])
def test_any_refused_input_exits_2_with_one_line(main, command_raising, capsys):
    command_raising(NewlyRefused("the value x is not allowed"))
    assert main(["plan"]) == 2
    err = capsys.readouterr().err
    assert err == "seedance: error: the value x is not allowed\n"


@pytest.mark.parametrize("main", [seedance.cli.main, seedance_client.cli.main], ids=["platform", "client"])
def test_a_bug_is_not_reported_as_refused_input_but_in_one_line(main, command_raising, capsys):
    command_raising(KeyError("x"))
    assert main(["plan"]) == 1  # not 2: nothing the user gave was refused
    assert capsys.readouterr().err == (
        "seedance: error: unexpected KeyError in `seedance ?`: 'x' (--debug shows the traceback)\n"
    )


@pytest.mark.parametrize("main", [seedance.cli.main, seedance_client.cli.main], ids=["platform", "client"])
def test_debug_shows_a_bugs_traceback(main, monkeypatch):
    def run(_args):
        raise KeyError("x")

    debugging = argparse.Namespace(run=run, debug=True, command="plan")
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", lambda self, argv=None: debugging)
    with pytest.raises(KeyError):
        main(["--debug", "plan"])


@pytest.mark.parametrize(
    "refusal",
    [
        GateInputError,
        BreakerRefused,
        CommandError,
        ChartFetchError,
        CheckInputError,
        ImagesError,
        StackInputError,
        ProgramInputError,
        InputFileError,
        OutputFileError,
        OfflineInputError,
        PublishError,
        seedance.cli.UsageError,
    ],
)
def test_the_commands_refusals_are_input_errors(refusal):
    assert issubclass(refusal, InputError)


@pytest.mark.parametrize("main", [seedance.cli.main, seedance_client.cli.main], ids=["platform", "client"])
def test_an_interruption_exits_130_with_what_to_run_next(main, command_raising, capsys):
    from seedance_client.errors import Interrupted

    command_raising(Interrupted("interrupted: run it again with --resume"))
    assert main(["plan"]) == 130
    assert capsys.readouterr().err == "seedance: interrupted: run it again with --resume\n"
