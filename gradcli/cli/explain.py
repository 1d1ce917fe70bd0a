"""The ``explain`` command (registered as ``app`` imports this module): see
``commands.explain``.

No ``from __future__ import annotations``: Typer reads the annotations in this module's
namespace, so they must be objects, not names."""

from .options import RunOptions, V, program_command


@program_command()
def explain_command(run: RunOptions, v: V = None) -> None:
    """The chain rule with numbers: forward pass, backward pass, local derivatives, J^T v.

    Example: gradcli explain -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1
    """
    from ..commands.explain.chain import explain

    bound = run.bound()
    run.emit(explain(bound, run.of, run.value(v, "v")), bound)
