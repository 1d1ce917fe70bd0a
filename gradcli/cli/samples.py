"""The ``samples`` command (registered as ``app`` imports this module; left out of --help).

No ``from __future__ import annotations``: Typer reads the annotations in this module's
namespace, so they must be objects, not names."""

import sys
from typing import Annotated

import typer

from .guard import guard
from .options import command


@command("samples")
def samples_command(
    name: Annotated[
        str | None,
        typer.Argument(help="The sample to print (default: list them all).", show_default=False),
    ] = None,
) -> None:
    """List the samples that come with gradcli, or print one.

    Any command reads a sample by its name where it reads a file: -f sample:NAME,
    gradcli run sample:NAME (a PyTorch script), --batch @sample:points.csv.

    Example: gradcli samples vjp_example2
    """
    from ..base import samples as bundled

    with guard(debug=False):
        if name is None:
            sys.stdout.write(bundled.listing())
        else:
            sys.stdout.write(bundled.path(name).read_text(encoding="utf-8"))
