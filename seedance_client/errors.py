"""The one kind of error a command ends with exit code 2: input it refused (a file, an argument, a config,
a contract, an answer it cannot use), with a message that says in one line what and why; and the one line
any other error ends a command with (exit 1, the traceback behind `--debug`). Pure."""

from typing import Any


class InputError(Exception):
    """Refused input: both CLIs print the message in one line and exit 2."""


class Interrupted(Exception):
    """The user stopped a command (Ctrl-C): both CLIs print the message (what to run next) and exit 130, the
    shell's code for SIGINT."""


EXIT_INTERRUPTED = 130
# The exit code of a command that ended on an error it did not expect (a bug, or input no reader knew).
EXIT_UNEXPECTED = 1


def unexpected(error: Exception, args: Any) -> str:
    """The one line a command ends an unexpected error with: what it was doing (its verbs from the parsed
    `args`, no values), the error's first line, and how to see the traceback (`--debug`)."""
    said = (str(error).splitlines() or [""])[0]
    doing = " ".join(str(p) for p in (getattr(args, "command", None), getattr(args, "verb", None)) if p) or "?"
    return (
        f"seedance: error: unexpected {type(error).__name__} in `seedance {doing}`: {said} "
        "(--debug shows the traceback)"
    )
