"""``gradcli functions``: the functions a program may call (see ``lang.reference``).

No ``from __future__ import annotations``: Typer reads the annotations, so they must be
objects, not names.
"""

import shutil
import sys
from typing import Annotated

import typer

from .guard import guard
from .options import check_choice, choice, command

# ``gradcli functions --format``'s choices: ``reference.FORMATS``, which the command imports
FUNCTION_FORMATS = ("text", "markdown", "json")


@command("functions")
def functions_command(
    format: Annotated[
        str,
        typer.Option("--format", **choice(FUNCTION_FORMATS, "How to print the list.", "FORMAT")),
    ] = "text",
) -> None:
    """List the functions a program may call, by name, with PyTorch's convention at kinks.

    --format markdown prints the README's function reference; json one record a function.
    """
    from ..lang import reference

    with guard(debug=False, as_json=format == "json"):
        check_choice("--format", format, FUNCTION_FORMATS)
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        sys.stdout.write(reference.render(format, width))
