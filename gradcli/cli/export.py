"""The ``export`` command (registered as ``app`` imports this module).

No ``from __future__ import annotations``: Typer reads the annotations in this module's
namespace, so they must be objects, not names."""

from typing import Annotated

import typer

from ..ops.exporting import TARGETS
from .options import RunOptions, check_choice, choice, names, program_command


@program_command(formats=())
def export_command(
    run: RunOptions,
    to: Annotated[
        str, typer.Option("--to", **choice(TARGETS, "What to write.", "TARGET"))
    ] = "torch",
    out: Annotated[
        str | None,
        typer.Option("--out", metavar="PATH", help="Write to this file instead of stdout."),
    ] = None,
) -> None:
    """The program as a runnable PyTorch, NumPy, JAX or sympy script, or as LaTeX formulas.

    A script computes the output and its Jacobian with respect to the inputs that require
    grad (--wrt) at the given point, and prints them as JSON. torch writes the statements
    with torch's functions; numpy, jax and sympy the formulas of sympy (an operation
    without a symbolic form is refused); latex the formulas and Jᵀ, as the seed post writes.

    Example: gradcli export --to torch -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2

    Example: gradcli export --to latex -f sample:vjp_example2

    Example: gradcli export --to numpy -e "y = sin(x) * x" --x 0.5 --out y.py && python y.py
    """
    from ..base.notice import say
    from ..commands.export import export

    check_choice("--to", to, TARGETS)
    bound = run.bound(use_wrt=False)
    text = export(bound, run.of, names(run.wrt), to)
    if out is None:
        typer.echo(text, nl=False)
        return
    from ..base.files import atomic_output

    # a temporary file renamed onto --out: a full disk leaves no empty script behind
    with atomic_output(out) as temporary, open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
    say(f"wrote {out}")
