"""The options the program commands share, the ``RunOptions`` record that carries them to a
command, and the registration of a command (``command``, ``program_command``) for the
application (``app``) to build when the command line names it.

Annotations are evaluated as the module runs (no ``from __future__ import annotations``):
Typer reads every option's.
"""

import copy
import difflib
import functools
import inspect
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import field, replace
from typing import Annotated

import typer
from typer.core import TyperCommand

from ..base import bounds
from ..base.bounds import Limits
from ..base.notice import say
from ..base.records import record
from ..commands.compute import DTYPES
from ..render.json_format import NONFINITE, nonfinite_as
from ..results import FORMATS
from .guard import guard

#: Every command registered so far, as a Typer application of its own (see ``command``), by
#: name (read through ``registered``); ``app.COMMANDS`` says which module registers each.
REGISTERED: dict[str, typer.Typer] = {}

#: The function of every command registered so far, by name: its signature is the
#: declaration Typer reads, and the words are read against (``command_words``).
DECLARED: dict[str, Callable] = {}

#: The declarations of the commands of ``program_command`` not made yet, by name: a call makes
#: only that of the command it runs (``registered``), not every one its module holds.
PENDING: dict[str, Callable[[], None]] = {}

#: The key of ``Context.meta`` under which a command's reading of its words leaves the names
#: of the parameters that the words gave (the others took their defaults).
GIVEN = "gradcli.given"


def format_help(command, base, ctx, formatter) -> None:
    """Typer's help of ``command``, or on a narrow terminal a list (see ``cli_help``)."""
    from . import help_layout as cli_help

    if cli_help.narrow():
        formatter.write(cli_help.listed(command, ctx))
        return
    base.format_help(command, ctx, formatter)


class ProgramCommand(TyperCommand):
    """A command of gradcli: Typer's, with a --help that reads on a narrow terminal too, and
    its words read by gradcli (``command_words``), each wrong one said in gradcli's words.

    Typer builds the command from its declaration; ``parse_args``, click's step from the
    words to the values, is gradcli's: what Typer adds to it (each value through its type,
    from typer 0.29 on a pydantic validator per option) is the one part of a warm call's
    start-up that gradcli does not need (see ``command_words``).
    """

    def format_help(self, ctx, formatter) -> None:
        format_help(self, TyperCommand, ctx, formatter)

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:  # shell completion: Typer's reading, which never fails
            return super().parse_args(ctx, args)
        from .command_words import read_values, read_words

        params = self.get_params(ctx)
        taken = read_words(params, args, ctx.command_path)
        helper = self.get_help_option(ctx)
        if helper is not None and helper.callback is not None and helper.name in taken:
            helper.callback(ctx, helper, True)  # eager, as click's: before any value is read
        values = read_values(params, taken, DECLARED[str(self.name)], ctx.command_path)
        for param in params:
            if param.name in values:
                value = values[param.name]
                if param.callback is not None:
                    value = param.callback(ctx, param, value)
                ctx.params[param.name] = value
        ctx.meta[GIVEN] = set(taken)
        ctx.args = []
        return []


def command(name: str):
    """Register ``function`` as the command ``name``: a Typer application of its one command,
    which ``app.Commands`` makes into a click command when the command line names it."""

    def register(function):
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        single.command(name, cls=ProgramCommand, help=reflowed(function.__doc__))(function)
        REGISTERED[name] = single
        DECLARED[name] = function
        return function

    return register


def registered(name: str) -> typer.Typer:
    """The Typer application of the command ``name`` (its module imported), its declaration
    made first if it is waiting (``PENDING``)."""
    declare = PENDING.pop(name, None)
    if declare is not None:
        declare()
    return REGISTERED[name]


def reflowed(text: str | None) -> str | None:
    """A docstring as help: each paragraph one line, for the terminal to wrap once (a
    docstring's own line breaks would break each line again, mid-sentence)."""
    if text is None:
        return None
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


# -- options shared by the commands ------------------------------------------------------------


# The panels of --help, in the order they are shown (see ``program_command``); a command's
# own options that fit none of them take a panel of their own, after Values.
PROGRAM, VALUES, OUTPUT, LIMITS, BATCH = "Program", "Values", "Output", "Limits", "Batch"
PANELS = (PROGRAM, VALUES, None, OUTPUT, LIMITS, BATCH)


def choice(choices: tuple[str, ...], help: str, metavar: str, panel: str | None = None) -> dict:
    """The declaration of an option that takes one of ``choices``: --help (in its text, where
    the words wrap, and under the name ``metavar``) and shell completion list them. ``help``
    says where the list goes with ``{choices}``, else it ends the text. The command checks
    the value (``check_choice``), so that a typo is reported like any other bad input, with
    the closest choice."""
    listed = f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]
    text = help.format(choices=listed) if "{choices}" in help else f"{help[:-1]}: {listed}."
    return {
        "autocompletion": lambda: list(choices),
        "metavar": metavar,
        "help": text,
        "rich_help_panel": panel,
    }


def check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    """Refuse a value that is not one of ``choices``, suggesting the closest one."""
    from ..base.errors import GradcliError

    if value in choices:
        return
    close = difflib.get_close_matches(value.lower(), choices, n=1, cutoff=0.5)
    raise GradcliError(
        f"{option}: {value!r} is not one of {', '.join(choices)}",
        hint=f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(choices)}",
    )


ProgramText = Annotated[
    str | None,
    typer.Argument(
        metavar="PROGRAM",
        help="The program, as with --expr (one of PROGRAM, --expr, --file).",
        show_default=False,
    ),
]
Expr = Annotated[
    str | None,
    typer.Option(
        "--expr",
        "-e",
        metavar="TEXT",
        help="The program: statements `name = expression` separated by ; or newlines.",
        rich_help_panel=PROGRAM,
    ),
]
File = Annotated[
    str | None,
    typer.Option(
        "--file",
        "-f",
        metavar="PATH",
        help="Read the program from a file (- for stdin).",
        rich_help_panel=PROGRAM,
    ),
]
X = Annotated[
    str | None,
    typer.Option(
        "--x",
        "-x",
        metavar="VALUE",
        help="The value of the input x, e.g. 1,2 or ones(2,2).",
        rich_help_panel=VALUES,
    ),
]
Inputs = Annotated[
    list[str] | None,
    typer.Option(
        "--input",
        "-i",
        metavar="NAME=VALUE",
        help="The value of any input; repeatable.",
        rich_help_panel=VALUES,
    ),
]
Wrt = Annotated[
    str | None,
    typer.Option(
        "--wrt",
        metavar="NAMES",
        help="Comma-separated inputs that require grad (default: all inputs).",
        rich_help_panel=PROGRAM,
    ),
]
Of = Annotated[
    str | None,
    typer.Option(
        "--of",
        metavar="NAMES",
        help="The output (default: the last assigned name); several, comma-separated (--of "
        "y,z), for grad, vjp, jacobian, jvp, hessian, hvp, check and uncertainty.",
        rich_help_panel=PROGRAM,
    ),
]
Seed = Annotated[
    int,
    typer.Option(
        "--seed", min=0, metavar="N", help="Seed for rand/randn values.", rich_help_panel=VALUES
    ),
]
Dtype = Annotated[
    str,
    typer.Option("--dtype", **choice(tuple(DTYPES), "The floating type.", "TYPE", VALUES)),
]
Precision = Annotated[
    int,
    typer.Option(
        "--precision",
        min=1,
        max=17,
        metavar="DIGITS",
        help="Significant digits in tables, 1 to 17 (JSON and CSV: all).",
        rich_help_panel=OUTPUT,
    ),
]
Nonfinite = Annotated[
    str,
    typer.Option(
        "--nonfinite",
        **choice(
            NONFINITE,
            "How JSON writes a NaN or an infinity: {choices} (null: arithmetic on the numbers, "
            'as jq\'s add, reads it; string: "nan", "inf", "-inf" tell the three apart).',
            "HOW",
            OUTPUT,
        ),
    ),
]
Debug = Annotated[
    bool, typer.Option("--debug", help="Show a traceback on errors.", rich_help_panel=OUTPUT)
]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Parse the program afresh; do not read or write the cache.",
        rich_help_panel=LIMITS,
    ),
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Exit 1 when a NaN or an infinity appears (after printing).",
        rich_help_panel=OUTPUT,
    ),
]
Batch = Annotated[
    str | None,
    typer.Option(
        "--batch",
        metavar="POINTS",
        help="Run at many points: @points.npy/.csv (x per row), @points.npz, @DIR (.npy "
        "parts), @points.zarr, @points.parquet, or - (JSON lines).",
        rich_help_panel=BATCH,
    ),
]
Out = Annotated[
    str | None,
    typer.Option(
        "--out",
        metavar="PATH",
        help="With --batch: write results to .npy, .npz, .zarr, .parquet, or DIR/ (parts).",
        rich_help_panel=BATCH,
    ),
]
Dask = Annotated[
    str | None,
    typer.Option(
        "--dask",
        metavar="ADDRESS",
        help="With --batch: run on a Dask cluster, tcp://HOST:PORT or local:N.",
        rich_help_panel=BATCH,
    ),
]
Symbolic = Annotated[
    bool,
    typer.Option(
        "--symbolic",
        rich_help_panel=OUTPUT,
        help="Add sympy's derivative formulas beside the numbers (grad, jacobian, hessian: "
        "with an input given no value or --shape, the formulas alone, e.g. grad -e "
        '"f = sum(x**3)" --symbolic --shape x=2).',
    ),
]
Exactly = Annotated[
    bool,
    typer.Option(
        "--exact",
        rich_help_panel=OUTPUT,
        help="Exact numbers with sympy (0.1 is read as 1/10), e.g. "
        'grad -e "f = sin(x)**2" --x pi/4 --exact gives 1; falls back to floats, saying why.',
    ),
]
Shape = Annotated[
    list[str] | None,
    typer.Option(
        "--shape",
        metavar="NAME=N,M",
        rich_help_panel=VALUES,
        help="NAME=N or NAME=N,M: an input's shape in formulas (--symbolic without values), "
        "e.g. --shape x=3; repeatable.",
    ),
]
MaxElements = Annotated[
    int,
    typer.Option(
        "--max-elements",
        metavar="N",
        help="The most elements any tensor may have (input or intermediate).",
        rich_help_panel=LIMITS,
    ),
]
MaxLength = Annotated[
    int,
    typer.Option(
        "--max-length",
        metavar="N",
        help="The most characters of program or value text.",
        rich_help_panel=LIMITS,
    ),
]
MaxMemory = Annotated[
    str | None,
    typer.Option(
        "--max-memory",
        metavar="SIZE",
        rich_help_panel=LIMITS,
        help="The most memory the whole command may take, e.g. 2GB, 512MB, 1e9 "
        "(default: half of the memory available).",
        show_default=False,
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        rich_help_panel=LIMITS,
        help="Stop after SECONDS, between statements or chunks, keeping what was written "
        "(exit 124).",
        show_default=False,
    ),
]
MaxDepth = Annotated[
    int,
    typer.Option(
        "--max-depth",
        metavar="N",
        help="How deep operations may nest in one expression (<= 190).",
        rich_help_panel=LIMITS,
    ),
]
V = Annotated[
    str | None,
    typer.Option(
        "--v",
        "-v",
        metavar="VALUE",
        help="The vector v of the vector-Jacobian product, shaped like the output.",
        rich_help_panel=VALUES,
    ),
]

Vectors = Annotated[
    list[str] | None,
    typer.Option(
        "--v",
        "-v",
        metavar="VALUE",
        rich_help_panel=VALUES,
        help="The vector v, shaped like the output; with several outputs (--of y,z) one "
        "each: --v y=VALUE --v z=VALUE, or VALUEs in --of's order.",
    ),
]


def names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]


@record(kw_only=False, frozen=False, eq=True)
class RunOptions:
    """The shared options of a command that runs a program."""

    program: str | None
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
    nonfinite: str
    strict: bool
    no_cache: bool
    debug: bool
    max_elements: int
    max_length: int
    max_depth: int
    max_memory: str | None
    timeout: float | None
    notes: list[str] = field(default_factory=list)  # warnings of the command line's own
    read: dict | None = None  # the values of --x and -i, when read already (--exact)
    format_given: bool = False  # --format on the command line, not its default
    command: str = ""  # the command's name (its entry in ``commands.table``)

    def given(self) -> dict:
        """The values of --x and -i."""
        from ..lang.values import named_values, parse_value

        if self.read is not None:
            return self.read
        x = {} if self.x is None else {"x": parse_value(self.x, "x", self.seed)}
        return named_values(self.inputs, "-i", self.seed, given=x)

    def bound(self, use_wrt: bool = True, defaults=None, tangents=()):
        """The program with its input values (and, unless told not to, --wrt applied).

        ``defaults(program, given)`` gives values for inputs the command sets itself (see
        ``compute.bind``).
        """
        from ..commands.compute import bind
        from ..lang.source import read_source
        from ..script.loading import load_program

        source = read_source(self.program, self.expr, self.file)
        filename = "<stdin>" if self.file in (None, "-") else self.file
        program = load_program(source, not self.no_cache, self.seed, filename)
        wrt = names(self.wrt) if use_wrt else None
        given = self.given()
        extra = {} if defaults is None else defaults(program, given)
        bound = bind(program, given, wrt, self.dtype, self.seed, extra, tangents)
        if self.strict and bound.overflowed:
            from ..base.errors import GradcliError

            raise GradcliError(
                f"{bound.overflowed[0]} (--strict)",
                hint=f"give values within {self.dtype}'s range, or compute in float64 "
                "(leave out --dtype)",
            )
        return bound

    def value(self, text: str | None, name: str):
        from ..lang.values import parse_value

        return None if text is None else parse_value(text, name, self.seed)

    def values(self, items: list[str] | None, option: str) -> dict:
        """``VALUE`` (for x) or ``NAME=VALUE`` items of a repeatable option (--t, --v)."""
        from ..lang.values import named_values

        return named_values(items, option, self.seed, bare="x")

    def emit(self, result, bound, **options) -> None:
        """Warnings to stderr, the result to stdout; with --strict, exit 1 on a NaN or inf.
        ``options`` are the table's (see ``render.Options``)."""
        from ..base.bounds import check_rendering
        from ..render import Options, emit

        check_rendering(result, self.format)
        if self.notes:
            result = replace(result, warnings=(*self.notes, *result.warnings))
        emit(result, self.format, Options(self.precision, **options))
        self.strictly(bound)

    def strictly(self, bound) -> None:
        """With --strict, exit 1 when a NaN or an infinity appeared."""
        if self.strict and bound.nonfinite_inputs:
            inputs = "; ".join(bound.nonfinite_inputs)
            say(f"error: a NaN or an infinity came in with the inputs (--strict): {inputs}")
            raise typer.Exit(1)
        if self.strict and bound.log.nonfinite:
            say("error: a NaN or an infinity appeared (--strict); see the warnings")
            raise typer.Exit(1)


SHARED = (
    ("program", ProgramText, None),
    ("expr", Expr, None),
    ("file", File, None),
    ("x", X, None),
    ("inputs", Inputs, None),
    ("wrt", Wrt, None),
    ("of", Of, None),
    ("seed", Seed, 0),
    ("dtype", Dtype, "float64"),
    ("format", str, "table"),  # its choices are the command's: see program_command
    ("precision", Precision, 4),
    ("nonfinite", Nonfinite, "null"),
    ("strict", Strict, False),
    ("no_cache", NoCache, False),
    ("debug", Debug, False),
    ("max_elements", MaxElements, Limits.max_elements),
    ("max_length", MaxLength, Limits.max_length),
    ("max_depth", MaxDepth, Limits.max_depth),
    ("max_memory", MaxMemory, None),
    ("timeout", Timeout, None),
)


def _in_panel(parameter: inspect.Parameter, panel: str) -> inspect.Parameter:
    """``parameter`` shown in ``panel`` of --help, unless its declaration names a panel."""
    base, info = parameter.annotation.__origin__, parameter.annotation.__metadata__[0]
    if info.rich_help_panel is not None:
        return parameter
    info = copy.copy(info)
    info.rich_help_panel = panel
    return parameter.replace(annotation=Annotated[base, info])


def _panel_order(parameter: inspect.Parameter) -> int:
    """Where ``parameter``'s panel comes in --help (Typer shows them in the order met)."""
    panel = parameter.annotation.__metadata__[0].rich_help_panel
    return PANELS.index(panel) if panel in PANELS else PANELS.index(None)


def program_command(formats: tuple[str, ...] = FORMATS):
    """Register ``function(run, **own_options)`` as the command its name names
    (``NAME_command``: the command table's entry ``NAME``).

    The command's signature, which Typer reads, is the function's own options and the shared
    ones, ordered by their panels in --help (``PANELS``; the command's own options that name
    no panel are in one of their own); the shared ones reach the function as one ``RunOptions``.
    ``formats`` are the choices of its --format; with none (a command that prints no
    result) there is neither --format nor --precision. Errors are reported by ``guard``.
    The declaration is made when the command is first asked for (``registered``): a module
    declares several commands, and a call runs one.
    """
    kinds = {
        "format": Annotated[
            str,
            typer.Option(
                "--format",
                **choice(formats or ("table",), "How to print the result.", "FORMAT", OUTPUT),
            ),
        ]
    }
    # the shared options the command does not take, with the values its RunOptions holds
    fixed = {} if formats else {"format": "table", "precision": 4, "nonfinite": "null"}

    def register(function):
        name = function.__name__.removesuffix("_command")

        def declare():  # untyped: mypy refuses the __signature__ set on the wrapper below
            own = list(inspect.signature(function, eval_str=True).parameters.values())[1:]
            own = [_in_panel(p, f"{name.capitalize()} options") for p in own]
            shared = [
                inspect.Parameter(
                    option,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=default,
                    annotation=kinds.get(option, kind),
                )
                for option, kind, default in SHARED
                if option not in fixed
            ]
            # in a panel, the shared options first (--x before --v, --format before --exact)
            ordered = sorted(
                shared + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own],
                key=_panel_order,
            )

            @functools.wraps(function)
            def invoked(**options):
                from ..base.files import reading_inputs
                from ..commands.outputs import one_output
                from ..commands.table import entry

                context = options.pop("context")
                given = {
                    option: options.pop(option) for option, _, _ in SHARED if option not in fixed
                }
                run = RunOptions(**given, **fixed, command=name)
                run.format_given = "format" in context.meta.get(GIVEN, ())
                with guard(run.debug, as_json=run.format == "json"), reading_inputs():
                    check_encoding({**vars(run), **options})
                    check_choice("--format", run.format, formats or ("table",))
                    check_choice("--dtype", run.dtype, tuple(DTYPES))
                    check_choice("--nonfinite", run.nonfinite, NONFINITE)
                    if not entry(name).several:
                        one_output(run.of, name)
                    in_force = Limits(run.max_elements, run.max_length, run.max_depth)
                    with (
                        bounds.using(in_force),
                        budget(name, run.max_memory, run.timeout),
                        nonfinite_as(run.nonfinite),
                    ):
                        function(run, **options)

            # Typer passes the parameter annotated typer.Context: what the command line gave
            context = inspect.Parameter(
                "context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
            )
            invoked.__signature__ = inspect.Signature([*ordered, context])
            del invoked.__wrapped__  # Typer must read the signature above, not the function's
            command(name)(invoked)

        PENDING[name] = declare
        return function

    return register


@contextmanager
def budget(command: str, max_memory: str | None, timeout: float | None):
    """The memory budget and the deadline of --max-memory and --timeout, in force."""
    from ..base.bounds import Budget, doing, parse_bytes, using

    if max_memory is None:
        in_force = Budget(timeout=timeout)
    else:
        in_force = Budget(parse_bytes(max_memory), timeout)
    with using(in_force), doing(f"running gradcli {command}"):
        yield


def check_encoding(options: dict) -> None:
    """Refuse option text that is not valid UTF-8 (Python keeps such bytes as surrogates,
    which nothing can print or encode)."""
    from ..base.errors import GradcliError

    for option, value in options.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and any("\ud800" <= c <= "\udfff" for c in text):
                flag = "--" + option.replace("_", "-")
                raise GradcliError(
                    f"{flag}: the text is not valid UTF-8",
                    hint="give the text in UTF-8 (or plain ASCII)",
                )
