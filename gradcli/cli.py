"""The Typer application: read options, call one compute function, render, map errors."""

from __future__ import annotations

from typing import Annotated

import typer

from . import __version__

app = typer.Typer(
    name="gradcli",
    help="A command-line gradient calculator with PyTorch's autograd semantics.",
    no_args_is_help=True,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gradcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """A command-line gradient calculator with PyTorch's autograd semantics."""


def main() -> None:
    """Console-script entry point."""
    app()
