"""The one kind of error a command ends with exit code 2: input it refused (a file, an argument, a config,
a contract, an answer it cannot use), with a message that says in one line what and why. Pure."""


class InputError(Exception):
    """Refused input: both CLIs print the message in one line and exit 2."""
