"""The command line (Typer): options, errors to exit codes, the REPL. Nothing imports it."""

from .app import main

__all__ = ["main"]
