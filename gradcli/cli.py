"""The Typer application: read options, call one compute function, render, map errors.

Exit codes: 0 success, 1 a check that ran and failed (check, --strict), 2 bad usage or bad
input, 3 an internal error (a bug in gradcli: please report it).
"""

from __future__ import annotations

import functools
import inspect
import sys
import traceback
import unicodedata
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated

import typer

from . import __version__, limits
from .limits import Limits

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
Seed = Annotated[int, typer.Option("--seed", min=0, help="Seed for rand/randn values.")]
Dtype = Annotated[str, typer.Option("--dtype", help="float64 or float32.")]
Format = Annotated[
    str, typer.Option("--format", help="table, json or csv (graph: table, dot or json).")
]
Precision = Annotated[
    int,
    typer.Option("--precision", min=1, max=17, help="Significant digits in tables and CSV."),
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
MaxElements = Annotated[
    int,
    typer.Option(
        "--max-elements", help="The most elements any tensor may have (input or intermediate)."
    ),
]
MaxLength = Annotated[
    int, typer.Option("--max-length", help="The most characters of program or value text.")
]
MaxDepth = Annotated[
    int,
    typer.Option("--max-depth", help="How deep operations may nest in one expression (<= 190)."),
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
        with warnings.catch_warnings():
            # gradcli reports non-finite values itself, with the statement that made them;
            # numpy's RuntimeWarnings (its file and line) would only be noise beside them
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    except GradcliError as exc:
        if debug:
            traceback.print_exc()
        typer.echo(exc.render(), err=True)
        raise typer.Exit(2) from None
    except typer.Exit:
        raise
    except MemoryError:
        typer.echo(
            "error: out of memory: the values or the work are too large\n"
            "hint: make the values smaller, or lower --max-elements so that gradcli refuses "
            "such sizes before it starts",
            err=True,
        )
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None
    except Exception as exc:  # a bug in gradcli, not the user's input
        if debug:
            raise
        typer.echo(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)",
            err=True,
        )
        raise typer.Exit(3) from None


def _source(expr: str | None, file: str | None) -> str:
    from .errors import GradcliError
    from .values import existing_file, why_unreadable

    if (expr is None) == (file is None):
        raise GradcliError(
            "give the program with exactly one of --expr and --file",
            hint='e.g. --expr "y = x + 2; out = mean(y)"',
        )
    if expr is not None:
        return expr
    # never read more than the limit allows: a stream may be endless, a file huge
    most = limits.current().max_length
    if file == "-":
        text = sys.stdin.read(most + 1)
        limits.check_length(text, "the program on stdin", at_least=True)
        return text
    path = existing_file(file, "--file", "check the path, or give the program with --expr")
    try:
        size = path.stat().st_size
        if size > 4 * most:  # UTF-8 takes at most 4 bytes a character
            limits.check_length(size // 4, f"the program file {file}", at_least=True)
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GradcliError(f"cannot read the program file {file}: {why_unreadable(exc)}") from None


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
        name = unicodedata.normalize("NFKC", name.strip())  # as Python reads program names
        if not sep or not name.isidentifier():
            raise GradcliError(
                f"cannot read -i {item!r}", hint="write -i NAME=VALUE, e.g. -i W=randn(8,10)"
            )
        if name in given:
            raise GradcliError(f"the input {name!r} is given twice")
        given[name] = parse_value(value, name, seed)
    return given


# -- the options every program command shares ----------------------------------------------------


@dataclass
class Run:
    """The shared options of a command that runs a program."""

    expr: str | None
    file: str | None
    x: str | None
    inputs: list[str] | None
    wrt: str | None
    of: str | None
    seed: int
    dtype: str
    format: str
    precision: int
    strict: bool
    no_cache: bool
    debug: bool
    max_elements: int
    max_length: int
    max_depth: int

    def bound(self, use_wrt: bool = True):
        """The program with its input values (and, unless told not to, --wrt applied)."""
        from .compute import bind
        from .lang import load_program

        program = load_program(_source(self.expr, self.file), use_cache=not self.no_cache)
        wrt = _names(self.wrt) if use_wrt else None
        return bind(program, _given(self.x, self.inputs, self.seed), wrt, self.dtype, self.seed)

    def value(self, text: str | None, name: str):
        from .values import parse_value

        return None if text is None else parse_value(text, name, self.seed)

    def emit(self, result, bound, heatmap: bool = False) -> None:
        """Warnings to stderr, the result to stdout; with --strict, exit 1 on a NaN or inf."""
        from .errors import GradcliError
        from .render import FORMATS, render

        if self.format not in FORMATS:
            raise GradcliError(
                f"unknown format {self.format!r}", hint=f"use one of {', '.join(FORMATS)}"
            )
        for message in result.warnings:
            typer.echo(f"warning: {message}", err=True)
        render(result, self.format, self.precision, heatmap=heatmap)
        if self.strict and bound.log.nonfinite:
            typer.echo(
                "error: a NaN or an infinity appeared (--strict); see the warnings", err=True
            )
            raise typer.Exit(1)


_SHARED = (
    ("expr", Expr, None),
    ("file", File, None),
    ("x", X, None),
    ("inputs", Inputs, None),
    ("wrt", Wrt, None),
    ("of", Of, None),
    ("seed", Seed, 0),
    ("dtype", Dtype, "float64"),
    ("format", Format, "table"),
    ("precision", Precision, 4),
    ("strict", Strict, False),
    ("no_cache", NoCache, False),
    ("debug", Debug, False),
    ("max_elements", MaxElements, Limits.max_elements),
    ("max_length", MaxLength, Limits.max_length),
    ("max_depth", MaxDepth, Limits.max_depth),
)


def program_command(name: str):
    """Register ``function(run, **own_options)`` as the command ``name``.

    The command's signature, which Typer reads, is the function's own options followed by
    the shared ones; the shared ones reach the function as one ``Run``. Errors are reported
    by ``_guard``.
    """

    def register(function):
        own = list(inspect.signature(function, eval_str=True).parameters.values())[1:]
        shared = [
            inspect.Parameter(
                option, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind
            )
            for option, kind, default in _SHARED
        ]

        @functools.wraps(function)
        def command(**options):
            run = Run(**{option: options.pop(option) for option, _, _ in _SHARED})
            with _guard(run.debug):
                _check_encoding({**vars(run), **options})
                in_force = Limits(run.max_elements, run.max_length, run.max_depth)
                with limits.using(in_force):
                    function(run, **options)

        command.__signature__ = inspect.Signature(
            [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + shared
        )
        del command.__wrapped__  # Typer must read the signature above, not the function's
        app.command(name)(command)
        return function

    return register


def _check_encoding(options: dict) -> None:
    """Refuse option text that is not valid UTF-8 (Python keeps such bytes as surrogates,
    which nothing can print or encode)."""
    from .errors import GradcliError

    for option, value in options.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and any("\ud800" <= c <= "\udfff" for c in text):
                flag = "--" + option.replace("_", "-")
                raise GradcliError(
                    f"{flag}: the text is not valid UTF-8",
                    hint="give the text in UTF-8 (or plain ASCII)",
                )


def _run_batch(run: Run, bound, command: str, spec: str | None, v, wrt, out: str | None) -> bool:
    """--batch: stream JSON lines to stdout, or gather everything into --out.

    Returns False (and does nothing) without --batch; --out belongs to --batch.
    """
    from . import batch
    from .errors import GradcliError

    if spec is None:
        if out is not None:
            raise GradcliError("--out writes the results of --batch", hint="add --batch POINTS")
        return False
    if run.format not in ("table", "json"):
        raise GradcliError(
            f"--batch writes JSON lines (or --out arrays), not {run.format}",
            hint="leave out --format, or use --out results.npz",
        )
    if out is not None:
        batch.check_out_path(out)

    points = batch.read_points(spec, bound)
    total = batch.count(points)
    progress = None
    if sys.stderr.isatty() and total > batch.CHUNK:
        from rich.console import Console
        from rich.progress import Progress

        progress = Progress(transient=True, console=Console(stderr=True))  # stdout is results
        task = progress.add_task("points", total=total)
        progress.start()
    gathered, done = [], 0
    try:
        for chunk in batch.run(bound, command, points, run.of, v, wrt):
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
        batch.save(gathered, out)
        typer.echo(f"wrote {done} points to {out}", err=True)
    return True


def _symbolic(result, bound, vector, wanted: bool):
    """The result with sympy's formulas when --symbolic asked for them."""
    if not wanted:
        return result
    from .compute import with_formulas

    return with_formulas(result, bound, vector)


def _named_values(run: Run, items: list[str] | None, option: str) -> dict:
    """``VALUE`` (for x) or ``NAME=VALUE`` items of a repeatable option."""
    from .errors import GradcliError

    values = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep:
            name, value = "x", item
        name = unicodedata.normalize("NFKC", name.strip())
        if not name.isidentifier():
            raise GradcliError(
                f"cannot read {option} {item!r}",
                hint=f"write {option} VALUE or {option} NAME=VALUE",
            )
        if name in values:
            raise GradcliError(f"{option} gives {name!r} twice")
        values[name] = run.value(value, f"{option} {name}")
    return values


# -- commands ------------------------------------------------------------------------------------


@program_command("eval")
def eval_command(run: Run, batch: Batch = None, out: Out = None) -> None:
    """The value of every input and every assigned name.

    Example: gradcli eval -e "y = x + 2; z = y*y*3; out = mean(z)" --x "ones(2,2)"
    """
    from .compute import evaluate

    bound = run.bound()
    if not _run_batch(run, bound, "eval", batch, None, None, out):
        run.emit(evaluate(bound, run.of), bound)


@program_command("grad")
def grad_command(
    run: Run,
    v: V = None,
    show: Annotated[
        str | None, typer.Option("--show", help="Also show .grad of these intermediate names.")
    ] = None,
    retain_grad: Annotated[
        str | None, typer.Option("--retain-grad", help="Call .retain_grad() on these names.")
    ] = None,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat", min=1, max=10_000, help="Call backward N times: .grad accumulates."
        ),
    ] = 1,
    symbolic: Symbolic = False,
    batch: Batch = None,
    out: Out = None,
) -> None:
    """out.backward() (or out.backward(v)), then .grad of every input.

    Example: gradcli grad -e "y = x + 2; z = y*y*3; out = mean(z)" --x "ones(2,2)"
    """
    from .compute import grad

    bound = run.bound()
    vector = run.value(v, "v")
    if _run_batch(run, bound, "grad", batch, vector, None, out):
        return
    result = grad(bound, run.of, vector, _names(show) or [], _names(retain_grad) or [], repeat)
    run.emit(_symbolic(result, bound, vector, symbolic), bound)


@program_command("vjp")
def vjp_command(
    run: Run, v: V = None, symbolic: Symbolic = False, batch: Batch = None, out: Out = None
) -> None:
    """torch.autograd.grad(out, wrt, grad_outputs=v): J^T v for each --wrt name.

    Example: gradcli vjp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1
    """
    from .compute import vjp

    bound = run.bound(use_wrt=False)  # --wrt may name intermediate nodes here
    vector = run.value(v, "v")
    if _run_batch(run, bound, "vjp", batch, vector, _names(run.wrt), out):
        return
    result = vjp(bound, run.of, vector, _names(run.wrt))
    run.emit(_symbolic(result, bound, vector, symbolic), bound)


@program_command("jacobian")
def jacobian_command(
    run: Run,
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
    symbolic: Symbolic = False,
) -> None:
    """The Jacobian of the output for each --wrt input (layout output.shape + input.shape).

    Example: gradcli jacobian -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2
    """
    from .compute import jacobian

    bound = run.bound()
    result = jacobian(bound, run.of, _names(run.wrt), transpose, mode)
    run.emit(_symbolic(result, bound, None, symbolic), bound, heatmap)


@program_command("jvp")
def jvp_command(
    run: Run,
    t: Annotated[
        list[str] | None,
        typer.Option("--t", help="Tangent: VALUE (for x) or NAME=VALUE; repeatable; others are 0."),
    ] = None,
) -> None:
    """Forward mode: J t, the directional derivative along the tangents.

    Example: gradcli jvp -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --t 1,0
    """
    from .compute import jvp

    bound = run.bound(use_wrt=False)
    run.emit(jvp(bound, run.of, _named_values(run, t, "--t")), bound)


@program_command("hessian")
def hessian_command(run: Run) -> None:
    """Second derivatives of a scalar output, by differentiating the engine's own gradient.

    Example: gradcli hessian -e "f = (1 - x0)**2 + 100*(x1 - x0**2)**2" --x -1.2,1
    """
    from .compute import hessian

    bound = run.bound()
    run.emit(hessian(bound, run.of, _names(run.wrt)), bound)


@program_command("hvp")
def hvp_command(
    run: Run,
    v: Annotated[
        list[str] | None,
        typer.Option("--v", help="The vector: VALUE (for x) or NAME=VALUE; repeatable."),
    ] = None,
) -> None:
    """Hessian-vector product H v of a scalar output, without forming H.

    Example: gradcli hvp -e "f = (1 - x0)**2 + 100*(x1 - x0**2)**2" --x -1.2,1 --v 1,0
    """
    from .compute import hvp

    bound = run.bound()
    run.emit(hvp(bound, run.of, _named_values(run, v, "--v"), _names(run.wrt)), bound)


@program_command("check")
def check_command(
    run: Run,
    atol: Annotated[float, typer.Option("--atol", min=0, help="Absolute tolerance.")] = 1e-5,
    rtol: Annotated[float, typer.Option("--rtol", min=0, help="Relative tolerance.")] = 1e-3,
) -> None:
    """The Jacobian four ways: reverse, forward, finite differences, sympy; exit 1 if they differ.

    Example: gradcli check -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2
    """
    from .compute import check

    bound = run.bound()
    result = check(bound, run.of, _names(run.wrt), atol, rtol)
    run.emit(result, bound)
    if not result.agree:
        raise typer.Exit(1)


@program_command("graph")
def graph_command(run: Run) -> None:
    """The computational graph: each node's name, operation, shape, leaf/requires_grad, grad_fn.

    --format table draws a tree, dot writes Graphviz text, json a node list.

    Example: gradcli graph -f samples/neural_network.gc --format dot
    """
    from .compute import graph
    from .errors import GradcliError

    bound = run.bound()
    result = graph(bound, run.of)
    for message in result.warnings:
        typer.echo(f"warning: {message}", err=True)
    if run.format == "table":
        from .render.graph import print_tree

        print_tree(result)
    elif run.format == "dot":
        from .render.graph import to_dot

        typer.echo(to_dot(result))
    elif run.format == "json":
        from .render.json_format import to_json

        typer.echo(to_json(result))
    else:
        raise GradcliError(f"unknown format {run.format!r}", hint="use table, dot or json")


@program_command("plot")
def plot_command(
    run: Run,
    x_range: Annotated[
        str, typer.Option("--x-range", help="LOW:HIGH, the range of the input (or of s).")
    ] = "-3:3",
    direction: Annotated[
        str | None,
        typer.Option(
            "--direction", help="Vary a non-scalar input along a line: input + s * direction."
        ),
    ] = None,
    points: Annotated[
        int, typer.Option("--points", min=2, max=10_000, help="Number of points.")
    ] = 101,
    out: Annotated[
        str | None, typer.Option("--out", help="Write an image (.png or .svg) with matplotlib.")
    ] = None,
) -> None:
    """The output and its derivative over a range of one input, drawn in the terminal.

    Example: gradcli plot -e "y = tanh(x)" --x 0 --x-range -3:3
    """
    from .compute import parse_range, plot

    bound = run.bound()
    line = run.value(direction, "--direction")
    result = plot(bound, run.of, parse_range(x_range), _names(run.wrt), line, points)
    if out is None:
        run.emit(result, bound)
        return
    from .render.image import save_plot

    save_plot(result, out)
    typer.echo(f"wrote {out}", err=True)


@program_command("explain")
def explain_command(run: Run, v: V = None) -> None:
    """The chain rule with numbers: forward pass, backward pass, local derivatives, J^T v.

    Example: gradcli explain -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1
    """
    from .explain import explain

    bound = run.bound()
    run.emit(explain(bound, run.of, run.value(v, "v")), bound)


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
