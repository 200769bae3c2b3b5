"""Subcommands of the ``ludoteca`` command line, one module each."""
