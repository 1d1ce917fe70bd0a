"""``gradcli run``: a PyTorch script, statement by statement (see ``script.run``).

No ``from __future__ import annotations``: Typer reads the annotations, so they must be
objects, not names.
"""

import os
from typing import Annotated

import typer

from ..base import bounds
from ..base.bounds import Limits
from .guard import guard
from .options import (
    Debug,
    MaxDepth,
    MaxElements,
    MaxLength,
    MaxMemory,
    NoCache,
    Seed,
    Timeout,
    budget,
    check_encoding,
    command,
)


@command("run")
def run_command(
    script: Annotated[
        str,
        typer.Argument(
            metavar="SCRIPT", help="The PyTorch script to run (- for stdin).", show_default=False
        ),
    ],
    seed: Seed = 0,
    debug: Debug = False,
    no_cache: NoCache = False,
    max_elements: MaxElements = Limits.max_elements,
    max_length: MaxLength = Limits.max_length,
    max_depth: MaxDepth = Limits.max_depth,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    max_steps: Annotated[
        int,
        typer.Option(
            "--max-steps",
            min=1,
            help="The statements and loop iterations a script may run (a loop that does not "
            "end stops here, exit 2).",
        ),
    ] = 20_000_000,
) -> None:
    """Run a PyTorch script as Python's interactive interpreter would, printing what torch
    prints: print() output, the value of each bare expression, torch's warnings and errors
    (exit 1 after an error, as Python's).

    Example: gradcli run sample:seed_first_example
    """
    from ..lang.values import existing_file
    from ..script.run import read_script, run_script

    with guard(debug):
        check_encoding({"script": script})
        in_force = Limits(max_elements, max_length, max_depth)
        with bounds.using(in_force), budget("run", max_memory, timeout):
            source = read_script(script)
            # Python names a script by its absolute path, in warnings and tracebacks
            name = "<stdin>" if script == "-" else os.path.abspath(existing_file(script, "run"))
            status = run_script(source, name, seed, max_steps=max_steps)
    if status:
        raise typer.Exit(status)
