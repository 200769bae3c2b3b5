"""Subcommands of the ``ludoteca`` command line, one module each."""


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 2."""
