"""The command line of the commands that run a program at a point and print its result
(``commands.compute``'s: eval, grad, vjp, jacobian, jvp, hessian, hvp, check, graph, plot),
registered with ``program_command`` as this module is imported.

No ``from __future__ import annotations``: Typer reads the annotations, so they must be
objects, not names.
"""

from typing import Annotated

import typer

from ..base.notice import say
from ..commands.compute import MODES
from ..results import Graph
from .options import (
    OUTPUT,
    VALUES,
    Batch,
    Dask,
    Exactly,
    Out,
    RunOptions,
    Shape,
    Symbolic,
    Vectors,
    check_choice,
    choice,
    names,
    program_command,
)


def _run_batch(
    run: RunOptions,
    spec: str,
    out: str | None,
    v=None,
    wrt=None,
    use_wrt: bool = True,
    dask: str | None = None,
    settings=None,
    refused: tuple[tuple[str, object], ...] = (),
) -> None:
    """--batch (see ``batch.main``); Ctrl-C exits 130, methods of check that disagree 1.
    ``refused``: the command's options (flag, value) that --batch does not take. An explicit
    --format table is refused: the points stream as JSON lines (table is only the default)."""
    from ..base.errors import GradcliError
    from ..batch import stream as batch
    from ..commands.outputs import refuse_several

    if run.format == "table" and run.format_given:
        raise GradcliError(
            "--batch writes JSON lines, one a point (or arrays, with --out), not a table",
            hint="leave out --format table, or give one point with --x for a table",
        )

    refuse_several(run.of, "--batch")
    given = [flag for flag, value in refused if value]
    if given:
        raise GradcliError(
            f"--batch does not take {', '.join(given)}: it gives each point's dense result",
            hint=f"leave out {given[0]}, or give the points one at a time",
        )
    bind = lambda d: run.bound(use_wrt, d)  # noqa: E731
    try:
        batch.main(run.format, run.command, spec, out, bind, run.of, v, wrt, dask, settings)
    except batch.Interrupted:
        raise typer.Exit(130) from None
    except batch.Disagreed:
        raise typer.Exit(1) from None


def _no_out(out: str | None, dask: str | None = None) -> None:
    """--out and --dask belong to --batch."""
    from ..base.errors import GradcliError

    if out is not None:
        raise GradcliError("--out writes the results of --batch", hint="add --batch POINTS")
    if dask is not None:
        raise GradcliError("--dask runs the points of --batch", hint="add --batch POINTS")


# -- commands ------------------------------------------------------------------------------------


@program_command()
def eval_command(
    run: RunOptions,
    batch: Batch = None,
    out: Out = None,
    dask: Dask = None,
    exact: Exactly = False,
    shape: Shape = None,
) -> None:
    """The value of every input and every assigned name.

    Example: gradcli eval -e "y = x + 2; z = y*y*3; out = mean(z)" --x "ones(2,2)"

    Example: gradcli eval -e "y = sqrt(x) / 2" --x 2 --exact
    """
    from ..commands.compute import evaluate
    from .exact import answered

    if answered(run, exact, False, shape, batch=batch):
        return
    if batch is not None:
        return _run_batch(run, batch, out, dask=dask)
    _no_out(out, dask)
    bound = run.bound()
    run.emit(evaluate(bound, run.of), bound)


@program_command()
def grad_command(
    run: RunOptions,
    v: Vectors = None,
    show: Annotated[
        str | None,
        typer.Option(
            "--show", metavar="NAMES", help="Also show .grad of these intermediate names."
        ),
    ] = None,
    retain_grad: Annotated[
        str | None,
        typer.Option("--retain-grad", metavar="NAMES", help="Call .retain_grad() on these names."),
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            min=1,
            max=10_000,
            metavar="N",
            help="Call backward N times: .grad accumulates.",
        ),
    ] = 1,
    symbolic: Symbolic = False,
    batch: Batch = None,
    out: Out = None,
    exact: Exactly = False,
    shape: Shape = None,
    dask: Dask = None,
) -> None:
    """out.backward() (or out.backward(v)), then .grad of every input.

    Example: gradcli grad -e "y = x + 2; z = y*y*3; out = mean(z)" --x "ones(2,2)"

    Example: gradcli grad -e "f = x0**2 * log(x1)" --x 1/3,2 --exact

    Example: gradcli grad -e "f = sum(x**3)" --symbolic --shape x=2

    Complex inputs take PyTorch's gradient, dL/dx + i dL/dy (of |z|^2: 2z, here 2+4j):

    Example: gradcli grad -e "y = abs(z)**2" -i "z=1+2j"

    Several outputs at once, as torch.autograd.backward of both (f, g): the gradients add up.

    Example: gradcli grad -e "f = sum(x**2); g = x[0]*x[1]" --x 1,2 --of f,g
    """
    from ..commands.compute import grad
    from ..commands.outputs import plain_vector, read_vectors
    from .exact import answered

    others = [show and "--show", retain_grad and "--retain-grad", repeat > 1 and "--repeat"]
    text = plain_vector(v)
    others.append(v is not None and text is None and "--v NAME=VALUE or several --v")
    if answered(run, exact, symbolic, shape, text, batch, [o for o in others if o]):
        return
    vectors = read_vectors(v, run.seed)
    if batch is not None:
        return _run_batch(run, batch, out, _batch_vector(v, vectors), dask=dask)
    _no_out(out, dask)
    bound = run.bound()
    shown, retained = names(show) or [], names(retain_grad) or []
    run.emit(grad(bound, run.of, vectors, shown, retained, repeat, symbolic), bound)


def _batch_vector(items: list[str] | None, vectors):
    """--batch's one vector: a plain --v VALUE."""
    from ..base.errors import GradcliError
    from ..commands.outputs import plain_vector

    if items is not None and plain_vector(items) is None:
        raise GradcliError(
            "--batch takes one vector, --v VALUE, for its one output",
            hint="give one --v VALUE shaped like the output",
        )
    return vectors


@program_command()
def vjp_command(
    run: RunOptions,
    v: Vectors = None,
    symbolic: Symbolic = False,
    batch: Batch = None,
    out: Out = None,
    dask: Dask = None,
) -> None:
    """torch.autograd.grad(out, wrt, grad_outputs=v): J^T v for each --wrt name.

    Example: gradcli vjp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1

    Several outputs, one vector each: torch.autograd.grad of the outputs (y, z) with
    grad_outputs (vy, vz), the sum of their J^T v.

    Example: gradcli vjp -e "y = x**2; z = sum(x)" --x 1,2 --of y,z --v y=1,1 --v z=2
    """
    from ..commands.compute import vjp
    from ..commands.outputs import read_vectors

    vectors = read_vectors(v, run.seed)
    if batch is not None:
        vector = _batch_vector(v, vectors)
        return _run_batch(run, batch, out, vector, names(run.wrt), False, dask)
    _no_out(out, dask)
    bound = run.bound(use_wrt=False)  # --wrt may name intermediate nodes here
    run.emit(vjp(bound, run.of, vectors, names(run.wrt), symbolic), bound)


@program_command()
def jacobian_command(
    run: RunOptions,
    transpose: Annotated[
        bool, typer.Option("--transpose", help="Print J^T, as the seed post does.")
    ] = False,
    heatmap: Annotated[
        bool, typer.Option("--heatmap", help="Shade cells by sign and magnitude; zeros blank.")
    ] = False,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            **choice(
                MODES,
                "How to compute it: {choices} (auto: by its sparsity pattern where that takes "
                "fewer passes, else as dense: fewer inputs -> forward).",
                "MODE",
            ),
        ),
    ] = "auto",
    symbolic: Symbolic = False,
    exact: Exactly = False,
    shape: Shape = None,
    sparse: Annotated[
        bool,
        typer.Option(
            "--sparse", help="Only the non-zeros, as coordinates (automatic when J is large)."
        ),
    ] = False,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            metavar="PATH",
            rich_help_panel=OUTPUT,
            help="Write J to .npy (one --wrt input) or .npz (COO when sparse); with --batch, "
            "every point's J stacked (.npy, .npz, DIR/).",
        ),
    ] = None,
    batch: Batch = None,
    dask: Dask = None,
) -> None:
    """The Jacobian of the output for each --wrt input (layout output.shape + input.shape).

    Example: gradcli jacobian -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2

    Example: gradcli jacobian -e "y = exp(x) / sum(exp(x))" --x "0,log(2)" --exact

    Example: gradcli jacobian -e "y = x * x[0]" --symbolic --shape x=2

    Example: gradcli jacobian -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --batch @sample:points.csv

    Several outputs: a Jacobian each (a section each; JSON keyed by output), as torch.func.jacrev
    of a function returning the tuple.

    Example: gradcli jacobian -e "y = x**2; z = sum(x)" --x 1,2 --of y,z
    """
    from ..base.errors import GradcliError
    from ..batch.passes import Settings
    from ..commands.compute import jacobian
    from ..results import Several
    from .exact import answered
    from .jacobian_out import check_jacobian_out, write_jacobian

    others = [
        name
        for name, given in (("--transpose", transpose), ("--sparse", sparse), ("--out", out))
        if given and batch is None
    ]
    if answered(run, exact, symbolic, shape, batch=batch, others=others):
        return
    check_choice("--mode", mode, MODES)
    if batch is not None:
        flags = {"--transpose": transpose, "--heatmap": heatmap, "--sparse": sparse}
        options = tuple({**flags, "--symbolic": symbolic}.items())
        settings = Settings(mode=mode)
        return _run_batch(run, batch, out, dask=dask, settings=settings, refused=options)
    _no_out(None, dask)
    check_jacobian_out(out, run.format)
    if sparse and heatmap:
        raise GradcliError(
            "--heatmap shades the cells of a dense Jacobian; --sparse lists its non-zeros",
            hint="leave out one of them",
        )
    bound = run.bound()
    # CSV holds every value, one a row, and a heatmap shades every cell: a Jacobian goes
    # sparse there only when asked
    automatic = None if run.format != "csv" and not heatmap else False
    result = jacobian(bound, run.of, names(run.wrt), transpose, mode, symbolic, sparse or automatic)
    if out is not None:
        write_jacobian(result, out)
        run.strictly(bound)
        return
    parts = result.parts if isinstance(result, Several) else (result,)
    if any(getattr(part, "sparse", None) for part in parts) and run.format == "csv":
        raise GradcliError(
            "a sparse Jacobian is printed as a table or JSON of its non-zeros",
            hint="use --format json, or --out J.npz",
        )
    run.emit(result, bound, heatmap=heatmap)


@program_command()
def jvp_command(
    run: RunOptions,
    t: Annotated[
        list[str] | None,
        typer.Option(
            "--t",
            "-t",
            metavar="VALUE",
            help="Tangent: VALUE (for x) or NAME=VALUE; repeatable; others are 0.",
            rich_help_panel=VALUES,
        ),
    ] = None,
    batch: Batch = None,
    out: Out = None,
    dask: Dask = None,
) -> None:
    """Forward mode: J t, the directional derivative along the tangents.

    Example: gradcli jvp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --t 1,0

    Example: gradcli jvp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --t 1,0 --batch @sample:points.csv

    Example: gradcli jvp -e "y = x**2; z = sum(x)" --x 1,2 --t 1,0 --of y,z
    """
    from ..batch.passes import Settings
    from ..commands.compute import jvp

    tangents = run.values(t, "--t")
    if batch is not None:
        settings = Settings(tangents=tangents)
        return _run_batch(run, batch, out, use_wrt=False, dask=dask, settings=settings)
    _no_out(out, dask)
    bound = run.bound(use_wrt=False, tangents=list(tangents))
    run.emit(jvp(bound, run.of, tangents), bound)


@program_command()
def hessian_command(
    run: RunOptions,
    symbolic: Symbolic = False,
    exact: Exactly = False,
    shape: Shape = None,
    batch: Batch = None,
    out: Out = None,
    dask: Dask = None,
) -> None:
    """Second derivatives of a scalar output, by differentiating the engine's own gradient.

    Example: gradcli hessian -e "f = (1 - x0)**2 + 100*(x1 - x0**2)**2" --x -1.2,1

    Example: gradcli hessian -e "f = x0**3 * x1" --x 1/2,3 --exact

    Example: gradcli hessian -e "f = sum(x**4)" --symbolic --shape x=2

    Example: gradcli hessian -e "f = x0**3 * x1" --batch @sample:points.csv --out hessians.npy
    """
    from ..base.errors import GradcliError
    from ..commands.compute import hessian
    from .exact import answered

    if answered(run, exact, symbolic, shape, batch=batch):
        return
    if symbolic and not exact and batch is None:  # no formulas: every input has a value
        raise GradcliError(
            "hessian --symbolic gives the Hessian as formulas of the inputs left without "
            "a value, and every input has one",
            hint="leave out the values of the inputs to have in the formulas, or use "
            "--exact for exact numbers",
        )
    if batch is not None:
        refused = (("--symbolic", symbolic),)
        return _run_batch(run, batch, out, wrt=names(run.wrt), dask=dask, refused=refused)
    _no_out(out, dask)
    bound = run.bound()
    run.emit(hessian(bound, run.of, names(run.wrt)), bound)


@program_command()
def hvp_command(
    run: RunOptions,
    v: Annotated[
        list[str] | None,
        typer.Option(
            "--v",
            "-v",
            metavar="VALUE",
            help="The vector: VALUE (for x) or NAME=VALUE; repeatable.",
            rich_help_panel=VALUES,
        ),
    ] = None,
    batch: Batch = None,
    out: Out = None,
    dask: Dask = None,
) -> None:
    """Hessian-vector product H v of a scalar output, without forming H.

    Example: gradcli hvp -e "f = (1 - x0)**2 + 100*(x1 - x0**2)**2" --x -1.2,1 --v 1,0

    Example: gradcli hvp -e "f = x0**3 * x1" --v 1,0 --batch @sample:points.csv
    """
    from ..batch.passes import Settings
    from ..commands.compute import hvp

    if batch is not None:
        settings = Settings(vectors=run.values(v, "--v"))
        return _run_batch(run, batch, out, wrt=names(run.wrt), dask=dask, settings=settings)
    _no_out(out, dask)
    bound = run.bound()
    run.emit(hvp(bound, run.of, run.values(v, "--v"), names(run.wrt)), bound)


@program_command()
def check_command(
    run: RunOptions,
    atol: Annotated[
        float, typer.Option("--atol", min=0, metavar="TOL", help="Absolute tolerance.")
    ] = 1e-5,
    rtol: Annotated[
        float, typer.Option("--rtol", min=0, metavar="TOL", help="Relative tolerance.")
    ] = 1e-3,
    batch: Batch = None,
    out: Out = None,
    dask: Dask = None,
) -> None:
    """The Jacobian four ways: reverse, forward, finite differences, sympy; exit 1 if they differ.

    With --batch, at each point the first three (agree, max_error), exit 1 naming the points
    where they differ.

    Example: gradcli check -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2

    Example: gradcli check -e "y = abs(x)" --batch @sample:points.csv

    Example: gradcli check -e "y = x**2; z = sum(x)" --x 1,2 --of y,z
    """
    from ..batch.passes import Settings
    from ..commands.compute import check

    if batch is not None:
        settings = Settings(atol=atol, rtol=rtol)
        return _run_batch(run, batch, out, wrt=names(run.wrt), dask=dask, settings=settings)
    _no_out(out, dask)
    bound = run.bound()
    result = check(bound, run.of, names(run.wrt), atol, rtol)
    run.emit(result, bound)
    if not result.agree:
        raise typer.Exit(1)


@program_command(formats=Graph.formats)
def graph_command(run: RunOptions) -> None:
    """The computational graph: each node's name, operation, shape, leaf/requires_grad, grad_fn.

    --format table draws a tree, dot writes Graphviz text, json a node list.

    Example: gradcli graph -f sample:neural_network --format dot
    """
    from ..commands.compute import graph

    bound = run.bound()
    run.emit(graph(bound, run.of), bound)


@program_command()
def plot_command(
    run: RunOptions,
    x_range: Annotated[
        str,
        typer.Option(
            "--x-range", metavar="LOW:HIGH", help="LOW:HIGH, the range of the input (or of s)."
        ),
    ] = "-3:3",
    direction: Annotated[
        str | None,
        typer.Option(
            "--direction",
            metavar="VALUE",
            help="Vary a non-scalar input along a line: input + s * direction.",
        ),
    ] = None,
    points: Annotated[
        int | None,
        typer.Option(
            "--points",
            metavar="N",
            min=2,
            max=10_000,
            help="Number of points (default: one a column of the chart, or 101 off a terminal).",
        ),
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            metavar="PATH",
            help="Write an image (.png or .svg) with matplotlib.",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
    width: Annotated[
        int | None,
        typer.Option(
            "--width", min=24, max=1000, metavar="N", help="Chart width (default: the terminal's)."
        ),
    ] = None,
    height: Annotated[
        int | None,
        typer.Option(
            "--height", min=8, max=1000, metavar="N", help="Chart height in lines (default: fits)."
        ),
    ] = None,
) -> None:
    """The output and its derivative over a range of one input, drawn in the terminal.

    The input that varies needs no value (s sets it); with --direction it starts at 0
    unless given.

    Example: gradcli plot -e "y = tanh(x)" --x-range -3:3
    """
    from ..commands.compute import parse_range, plot, plot_defaults
    from ..render.chart import default_points

    line = run.value(direction, "--direction")
    varied = names(run.wrt)
    bound = run.bound(defaults=plot_defaults(varied, line))
    if points is None:
        points = default_points(run.format if out is None else None, width, height)
    result = plot(bound, run.of, parse_range(x_range), varied, line, points)
    if out is None:
        run.emit(result, bound, width=width, height=height)
        return
    from ..render import warn
    from ..render.image import save_plot

    warn(result)
    save_plot(result, out)
    say(f"wrote {out}")
    run.strictly(bound)
