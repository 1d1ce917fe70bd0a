"""The ``derivative`` command (registered as ``app`` imports this module): see ``derivative``."""

from __future__ import annotations

from typing import Annotated

import typer

from .options import RunOptions, names, program_command


@program_command()
def derivative_command(
    run: RunOptions,
    order: Annotated[
        int | None,
        typer.Option(
            "--order",
            min=1,
            help="The order k: d^k f/dx^k with --wrt x, or as many inputs in turn as --wrt "
            "names (--order 3 --wrt x,x,z is d3f/dx2dz); default: the number --wrt names.",
        ),
    ] = None,
    taylor: Annotated[
        bool,
        typer.Option(
            "--taylor",
            help="The Taylor coefficients f^(k)(x)/k! for k = 0 to --order (at most 10), "
            "along one input, e.g. --order 6 --taylor --wrt x.",
        ),
    ] = False,
) -> None:
    """Derivatives of any order of a scalar output, by differentiating the engine's gradient
    again and again; --wrt names the input (or element, x[1]) of each differentiation.

    Example: gradcli derivative -e "f = sin(x) * exp(x)" --x 1 --order 5

    Example: gradcli derivative -e "f = x**3 * z**2" --x 2 -i z=3 --order 3 --wrt x,x,z

    Example: gradcli derivative -e "f = exp(x)" --x 0 --order 10 --taylor
    """
    from ..commands.derivative import derivative

    bound = run.bound(use_wrt=False)  # --wrt names elements here (x[1])
    run.emit(derivative(bound, run.of, names(run.wrt), order, taylor), bound)
