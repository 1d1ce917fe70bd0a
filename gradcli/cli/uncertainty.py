"""The ``uncertainty`` command (registered as ``app`` imports this module).

No ``from __future__ import annotations``: Typer reads the annotations in this module's
namespace, so they must be objects, not names."""

import dataclasses
from typing import Annotated

import typer

from .options import RunOptions, names, program_command


@program_command()
def uncertainty_command(
    run: RunOptions,
    cov: Annotated[
        str | None,
        typer.Option(
            "--cov",
            help="The covariance of the inputs (of --wrt's, or of all, flattened in order), "
            "e.g. @Sigma.npy or [[0.01,0.005],[0.005,0.04]].",
        ),
    ] = None,
    second_order: Annotated[
        bool,
        typer.Option(
            "--second-order", help="Also the mean corrected by 1/2 tr(H Σ), from each Hessian."
        ),
    ] = False,
) -> None:
    """Propagate input uncertainties to every output: value, standard deviation, correlations.

    Give an input's standard deviation beside its value, VALUE±SD or VALUE+-SD (one SD, or
    one per element), or the inputs' covariance with --cov. First order: the outputs'
    covariance is J Σ Jᵀ. --of y,z chooses the outputs (default: every assigned name).

    Example: gradcli uncertainty -e "y = x0 * x1; z = x0 + x1" --x "1,2±0.1,0.2"

    Example: gradcli uncertainty -e "f = sin(a) * b" -i "a=0.5+-0.01" -i "b=2+-0.1" --second-order

    Example: gradcli uncertainty -e "y = x0 * x1" --x 1,2 --cov "[[0.01,0.005],[0.005,0.04]]"
    """
    from ..commands.uncertainty import propagate, spreads

    taken = spreads(run.x, run.inputs)
    plain = dataclasses.replace(run, x=taken.x, inputs=taken.inputs)
    bound = plain.bound(use_wrt=False)  # --wrt orders --cov here
    deviations = taken.deviations(bound.arrays, run.seed)
    matrix = run.value(cov, "--cov")
    result = propagate(bound, names(run.of), deviations, matrix, names(run.wrt), second_order)
    run.emit(result, bound)
