"""The Typer application: read options, call one compute function, render, map errors.

Exit codes: 0 success, 1 a check that ran and failed, 2 bad usage or bad input.
"""

from __future__ import annotations

import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from . import __version__

app = typer.Typer(
    name="gradcli",
    help="A command-line gradient calculator with PyTorch's autograd semantics.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# -- options shared by the commands ------------------------------------------------------------
Expr = Annotated[
    str | None,
    typer.Option(
        "--expr",
        "-e",
        help="The program: statements `name = expression` separated by ; or newlines.",
    ),
]
File = Annotated[
    str | None, typer.Option("--file", "-f", help="Read the program from a file (- for stdin).")
]
X = Annotated[
    str | None, typer.Option("--x", help="The value of the input x, e.g. 1,2 or ones(2,2).")
]
Inputs = Annotated[
    list[str] | None,
    typer.Option("--input", "-i", help="NAME=VALUE for any input; repeatable."),
]
Wrt = Annotated[
    str | None,
    typer.Option("--wrt", help="Comma-separated inputs that require grad (default: all inputs)."),
]
Of = Annotated[
    str | None, typer.Option("--of", help="The output (default: the last assigned name).")
]
Seed = Annotated[int, typer.Option("--seed", help="Seed for rand/randn values.")]
Dtype = Annotated[str, typer.Option("--dtype", help="float64 or float32.")]
Format = Annotated[str, typer.Option("--format", help="table, json or csv.")]
Precision = Annotated[
    int, typer.Option("--precision", help="Significant digits in tables and CSV.")
]
Debug = Annotated[bool, typer.Option("--debug", help="Show a traceback on errors.")]
NoCache = Annotated[
    bool,
    typer.Option("--no-cache", help="Parse the program afresh; do not read or write the cache."),
]
Strict = Annotated[
    bool,
    typer.Option("--strict", help="Exit 1 when a NaN or an infinity appears (after printing)."),
]
Batch = Annotated[
    str | None,
    typer.Option(
        "--batch",
        help="Run at many points: @points.npy/.csv (x per row), @points.npz, or - (JSON lines).",
    ),
]
Out = Annotated[
    str | None, typer.Option("--out", help="With --batch: write results to .npy or .npz.")
]
Symbolic = Annotated[
    bool, typer.Option("--symbolic", help="Add sympy's derivative formulas beside the numbers.")
]
V = Annotated[
    str | None,
    typer.Option(
        "--v", help="The vector v of the vector-Jacobian product, shaped like the output."
    ),
]


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


@contextmanager
def _guard(debug: bool):
    """User errors: message on stderr, exit 2; no traceback unless --debug."""
    from .errors import GradcliError

    try:
        yield
    except GradcliError as exc:
        if debug:
            traceback.print_exc()
        typer.echo(exc.render(), err=True)
        raise typer.Exit(2) from None
    except typer.Exit:
        raise
    except Exception as exc:  # a bug in gradcli, not the user's input
        if debug:
            raise
        typer.echo(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)",
            err=True,
        )
        raise typer.Exit(1) from None


def _source(expr: str | None, file: str | None) -> str:
    from .errors import GradcliError

    if (expr is None) == (file is None):
        raise GradcliError(
            "give the program with exactly one of --expr and --file",
            hint='e.g. --expr "y = x + 2; out = mean(y)"',
        )
    if expr is not None:
        return expr
    if file == "-":
        return sys.stdin.read()
    path = Path(file)
    if not path.is_file():
        raise GradcliError(f"no such program file: {file}")
    return path.read_text()


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]


def _given(x: str | None, inputs: list[str] | None, seed: int) -> dict:
    from .errors import GradcliError
    from .values import parse_value

    given = {}
    if x is not None:
        given["x"] = parse_value(x, "x", seed)
    for item in inputs or []:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise GradcliError(
                f"cannot read -i {item!r}", hint="write -i NAME=VALUE, e.g. -i W=randn(8,10)"
            )
        if name in given:
            raise GradcliError(f"the input {name!r} is given twice")
        given[name] = parse_value(value, name, seed)
    return given


def _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache=False):
    from .compute import bind
    from .lang import load_program

    program = load_program(_source(expr, file), use_cache=not no_cache)
    return bind(program, _given(x, inputs, seed), _names(wrt), dtype, seed)


def _emit(
    result, fmt: str, precision: int, heatmap: bool = False, strict: bool = False, bound=None
) -> None:
    from .errors import GradcliError
    from .render import FORMATS, render

    if fmt not in FORMATS:
        raise GradcliError(f"unknown format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    if precision < 1:
        raise GradcliError("--precision must be at least 1")
    for message in result.warnings:
        typer.echo(f"warning: {message}", err=True)
    render(result, fmt, precision, heatmap=heatmap)
    if strict and bound is not None and bound.log.nonfinite:
        typer.echo("error: a NaN or an infinity appeared (--strict); see the warnings", err=True)
        raise typer.Exit(1)


def _run_batch(bound, command: str, spec: str, of, v, wrt, out: str | None) -> None:
    """--batch: stream JSON lines to stdout, or gather everything into --out."""
    from . import batch
    from .errors import GradcliError

    points = batch.read_points(spec, bound)
    total = len(next(iter(points.values())))
    chunks = batch.run(bound, command, points, of, v, wrt)
    progress = None
    if sys.stderr.isatty() and total > batch.CHUNK:
        from rich.progress import Progress

        progress = Progress(transient=True, console=None)
        task = progress.add_task("points", total=total)
        progress.start()
    gathered, done = [], 0
    try:
        for chunk in chunks:
            if out is None:
                sys.stdout.write(batch.json_lines(chunk, done))
            else:
                gathered.append(chunk)
            done += len(next(iter(chunk.values.values())))
            if progress is not None:
                progress.update(task, completed=done)
    finally:
        if progress is not None:
            progress.stop()
    for message in bound.messages():
        typer.echo(f"warning: {message}", err=True)
    if out is not None:
        arrays = {
            f"values.{k}": np.concatenate([c.values[k] for c in gathered])
            for k in gathered[0].values
        }
        arrays.update(
            {
                f"grads.{k}": np.concatenate([c.grads[k] for c in gathered])
                for k in gathered[0].grads
            }
        )
        if out.endswith(".npz"):
            np.savez(out, **arrays)
        elif out.endswith(".npy"):
            main = [k for k in arrays if k.startswith("grads.")] or list(arrays)
            if len(main) != 1:
                raise GradcliError(
                    f"--out {out}: there are {len(main)} results ({', '.join(main)})",
                    hint="write them all with --out results.npz",
                )
            np.save(out, arrays[main[0]])
        else:
            raise GradcliError(f"--out {out}: unknown file type", hint="use .npy or .npz")
        typer.echo(f"wrote {done} points to {out}", err=True)


def _symbolic(result, bound, vector, wanted: bool):
    """The result with sympy's formulas when --symbolic asked for them."""
    if not wanted:
        return result
    from .compute import with_formulas

    return with_formulas(result, bound, vector)


def _vector(v: str | None, seed: int):
    from .values import parse_value

    return None if v is None else parse_value(v, "v", seed)


# -- commands ------------------------------------------------------------------------------------


@app.command("eval")
def eval_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    batch: Batch = None,
    out: Out = None,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """The value of every input and every assigned name.

    Example: gradcli eval -e "y = x + 2; z = y*y*3; out = mean(z)" --x "ones(2,2)"
    """
    with _guard(debug):
        from .compute import evaluate

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        if batch is not None:
            _run_batch(bound, "eval", batch, None, None, None, out)
            return
        _emit(evaluate(bound), format, precision, strict=strict, bound=bound)


@app.command("grad")
def grad_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    v: V = None,
    show: Annotated[
        str | None, typer.Option("--show", help="Also show .grad of these intermediate names.")
    ] = None,
    retain_grad: Annotated[
        str | None, typer.Option("--retain-grad", help="Call .retain_grad() on these names.")
    ] = None,
    repeat: Annotated[
        int, typer.Option("--repeat", help="Call backward N times: .grad accumulates.")
    ] = 1,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    batch: Batch = None,
    out: Out = None,
    no_cache: NoCache = False,
    strict: Strict = False,
    symbolic: Symbolic = False,
) -> None:
    """out.backward() (or out.backward(v)), then .grad of every input.

    Example: gradcli grad -e "y = x + 2; z = y*y*3; out = mean(z)" --x "ones(2,2)"
    """
    with _guard(debug):
        from .compute import grad

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        vector = _vector(v, seed)
        if batch is not None:
            _run_batch(bound, "grad", batch, of, vector, None, out)
            return
        result = grad(bound, of, vector, _names(show) or [], _names(retain_grad) or [], repeat)
        _emit(
            _symbolic(result, bound, vector, symbolic),
            format,
            precision,
            strict=strict,
            bound=bound,
        )


@app.command("vjp")
def vjp_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    v: V = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    batch: Batch = None,
    out: Out = None,
    no_cache: NoCache = False,
    strict: Strict = False,
    symbolic: Symbolic = False,
) -> None:
    """torch.autograd.grad(out, wrt, grad_outputs=v): J^T v for each --wrt name.

    Example: gradcli vjp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1
    """
    with _guard(debug):
        from .compute import vjp

        wanted = _names(wrt)
        bound = _bind(expr, file, x, inputs, None, seed, dtype, no_cache)
        vector = _vector(v, seed)
        if batch is not None:
            _run_batch(bound, "vjp", batch, of, vector, wanted, out)
            return
        result = vjp(bound, of, vector, wanted)
        _emit(
            _symbolic(result, bound, vector, symbolic),
            format,
            precision,
            strict=strict,
            bound=bound,
        )


@app.command("jacobian")
def jacobian_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    transpose: Annotated[
        bool, typer.Option("--transpose", help="Print J^T, as the seed post does.")
    ] = False,
    heatmap: Annotated[
        bool, typer.Option("--heatmap", help="Shade cells by sign and magnitude; zeros blank.")
    ] = False,
    mode: Annotated[
        str,
        typer.Option("--mode", help="auto, forward or reverse (auto: fewer inputs -> forward)."),
    ] = "auto",
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
    symbolic: Symbolic = False,
) -> None:
    """The Jacobian of the output for each --wrt input (layout output.shape + input.shape).

    Example: gradcli jacobian -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2
    """
    with _guard(debug):
        from .compute import jacobian

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        result = jacobian(bound, of, _names(wrt), transpose, mode)
        _emit(
            _symbolic(result, bound, None, symbolic),
            format,
            precision,
            heatmap,
            strict=strict,
            bound=bound,
        )


def _named_values(items: list[str] | None, seed: int, option: str) -> dict:
    """``VALUE`` (for x) or ``NAME=VALUE`` items of a repeatable option."""
    from .errors import GradcliError
    from .values import parse_value

    values = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep:
            name, value = "x", item
        name = name.strip()
        if not name.isidentifier():
            raise GradcliError(
                f"cannot read {option} {item!r}",
                hint=f"write {option} VALUE or {option} NAME=VALUE",
            )
        if name in values:
            raise GradcliError(f"{option} gives {name!r} twice")
        values[name] = parse_value(value, f"{option} {name}", seed)
    return values


@app.command("jvp")
def jvp_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    of: Of = None,
    t: Annotated[
        list[str] | None,
        typer.Option("--t", help="Tangent: VALUE (for x) or NAME=VALUE; repeatable; others are 0."),
    ] = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """Forward mode: J t, the directional derivative along the tangents.

    Example: gradcli jvp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --t 1,0
    """
    with _guard(debug):
        from .compute import jvp

        bound = _bind(expr, file, x, inputs, None, seed, dtype, no_cache)
        _emit(
            jvp(bound, of, _named_values(t, seed, "--t")),
            format,
            precision,
            strict=strict,
            bound=bound,
        )


@app.command("hessian")
def hessian_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """Second derivatives of a scalar output, by differentiating the engine's own gradient.

    Example: gradcli hessian -e "f = (1 - x0)**2 + 100*(x1 - x0**2)**2" --x -1.2,1
    """
    with _guard(debug):
        from .compute import hessian

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        _emit(hessian(bound, of, _names(wrt)), format, precision, strict=strict, bound=bound)


@app.command("hvp")
def hvp_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    v: Annotated[
        list[str] | None,
        typer.Option("--v", help="The vector: VALUE (for x) or NAME=VALUE; repeatable."),
    ] = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """Hessian-vector product H v of a scalar output, without forming H.

    Example: gradcli hvp -e "f = (1 - x0)**2 + 100*(x1 - x0**2)**2" --x -1.2,1 --v 1,0
    """
    with _guard(debug):
        from .compute import hvp

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        result = hvp(bound, of, _named_values(v, seed, "--v"), _names(wrt))
        _emit(result, format, precision, strict=strict, bound=bound)


@app.command("check")
def check_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    atol: Annotated[float, typer.Option("--atol", help="Absolute tolerance.")] = 1e-5,
    rtol: Annotated[float, typer.Option("--rtol", help="Relative tolerance.")] = 1e-3,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """The Jacobian four ways: reverse, forward, finite differences, sympy; exit 1 if they differ.

    Example: gradcli check -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2
    """
    with _guard(debug):
        from .compute import check

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        result = check(bound, of, _names(wrt), atol, rtol)
        _emit(result, format, precision, strict=strict, bound=bound)
    if not result.agree:
        raise typer.Exit(1)


@app.command("graph")
def graph_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Annotated[str, typer.Option("--format", help="table (a tree), dot or json.")] = "table",
    debug: Debug = False,
    no_cache: NoCache = False,
) -> None:
    """The computational graph: each node's name, operation, shape, leaf/requires_grad, grad_fn.

    Example: gradcli graph -f samples/neural_network.gc --format dot
    """
    with _guard(debug):
        from .compute import graph
        from .errors import GradcliError

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        result = graph(bound, of)
        for message in result.warnings:
            typer.echo(f"warning: {message}", err=True)
        if format == "table":
            from .render.graph import print_tree

            print_tree(result)
        elif format == "dot":
            from .render.graph import to_dot

            typer.echo(to_dot(result))
        elif format == "json":
            from .render.json_format import to_json

            typer.echo(to_json(result))
        else:
            raise GradcliError(f"unknown format {format!r}", hint="use table, dot or json")


@app.command("plot")
def plot_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    x_range: Annotated[
        str, typer.Option("--x-range", help="LOW:HIGH, the range of the input (or of s).")
    ] = "-3:3",
    direction: Annotated[
        str | None,
        typer.Option(
            "--direction", help="Vary a non-scalar input along a line: input + s * direction."
        ),
    ] = None,
    points: Annotated[int, typer.Option("--points", help="Number of points.")] = 101,
    out: Annotated[
        str | None, typer.Option("--out", help="Write an image (.png or .svg) with matplotlib.")
    ] = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """The output and its derivative over a range of one input, drawn in the terminal.

    Example: gradcli plot -e "y = tanh(x)" --x 0 --x-range -3:3
    """
    with _guard(debug):
        from .compute import parse_range, plot

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        line = None if direction is None else _vector(direction, seed)
        result = plot(bound, of, parse_range(x_range), _names(wrt), line, points)
        if out is not None:
            from .render.image import save_plot

            save_plot(result, out)
            typer.echo(f"wrote {out}", err=True)
        else:
            _emit(result, format, precision, strict=strict, bound=bound)


@app.command("explain")
def explain_command(
    expr: Expr = None,
    file: File = None,
    x: X = None,
    inputs: Inputs = None,
    wrt: Wrt = None,
    of: Of = None,
    v: V = None,
    seed: Seed = 0,
    dtype: Dtype = "float64",
    format: Format = "table",
    precision: Precision = 4,
    debug: Debug = False,
    no_cache: NoCache = False,
    strict: Strict = False,
) -> None:
    """The chain rule with numbers: forward pass, backward pass, local derivatives, J^T v.

    Example: gradcli explain -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1
    """
    with _guard(debug):
        from .explain import explain

        bound = _bind(expr, file, x, inputs, wrt, seed, dtype, no_cache)
        _emit(explain(bound, of, _vector(v, seed)), format, precision, strict=strict, bound=bound)


@app.command("functions")
def functions_command() -> None:
    """List the functions a program may call."""
    from .lang.functions import ALIASES, FUNCTIONS

    for function in FUNCTIONS.values():
        typer.echo(f"{function.signature():<60} {function.summary}")
    typer.echo("aliases: " + ", ".join(f"{a} = {n}" for a, n in ALIASES.items()))
    typer.echo(
        "constants: e, pi\n"
        "inputs with defaults: ones, zeros, full, eye, arange, linspace, rand, randn, tensor"
    )


def main() -> None:
    """Console-script entry point."""
    app()
