"""The Typer application: read options, call one compute function, render, map errors.

Exit codes: 0 success, 1 a check that ran and failed (check, --strict), 2 bad usage or bad
input (``GradcliError``, or an ``EngineError`` of the engine, told apart by its class), 70 an
internal error (a bug in gradcli: please report it), 124 --timeout passed, 130 interrupted.

Annotations are evaluated as the module runs (no ``from __future__ import annotations``):
Typer reads every option's, and text annotations would be compiled at each start. The garbage
collector is paused while the modules a command needs are imported, as in ``gradcli``'s
``__init__`` (see there); ``main`` then freezes what they made (``gc.freeze``: kept out of
every later collection, several ms of each call), the command line's own process only, never
a process that imports gradcli as a library.
"""

import gc

_collecting = gc.isenabled()
gc.disable()

import copy
import difflib
import functools
import inspect
import json
import os
import shutil
import signal
import sys
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import field, replace
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from .. import __version__
from ..base import bounds
from ..base.bounds import Limits
from ..base.notice import say
from ..base.records import record
from ..commands.compute import DTYPES, MODES
from ..render.json_format import NONFINITE, nonfinite_as
from ..results import FORMATS, Graph

# ``gradcli functions --format``'s choices: ``reference.FORMATS``, which the command imports
FUNCTION_FORMATS = ("text", "markdown", "json")

#: Every command, as a Typer application of its own (see ``command``), by name, in the order
#: of ``gradcli --help``.
COMMANDS: dict[str, typer.Typer] = {}


def _format_help(command, base, ctx, formatter) -> None:
    """Typer's help of ``command``, or on a narrow terminal a list (see ``cli_help``)."""
    from . import help_layout as cli_help

    if cli_help.narrow():
        formatter.write(cli_help.listed(command, ctx))
        return
    base.format_help(command, ctx, formatter)


class Command(TyperCommand):
    """A command of gradcli: Typer's, with a --help that reads on a narrow terminal too."""

    def format_help(self, ctx, formatter) -> None:
        _format_help(self, TyperCommand, ctx, formatter)


class Commands(TyperGroup):
    """gradcli's group of commands, each made into a click command only when it is asked for:
    click's lazily loading group (``list_commands`` and ``get_command``), on Typer's group.

    Before it parses anything Typer builds a click command for every command it holds,
    reading each one's signature and type hints: most of a warm call's own time. A call runs
    one command, so this group builds that one (``gradcli --help`` and shell completion ask
    for them all).

    Usage errors (an unknown option, a missing value) are gradcli's own ``error:`` lines on
    stderr, exit 2, and a JSON object under ``--format json``, as every other error is.
    """

    def list_commands(self, ctx) -> list[str]:
        return list(COMMANDS)

    def format_help(self, ctx, formatter) -> None:
        _format_help(self, TyperGroup, ctx, formatter)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(typer.main.get_command(COMMANDS[cmd_name]), cmd_name)
        return super().get_command(ctx, cmd_name)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        words = sys.argv[1:] if args is None else [str(a) for a in args]
        try:
            code = super().main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                **extra,
            )
        except _CLICK_ERROR as exc:
            code = _usage_failure(exc, words)
        except typer.Abort:
            say("aborted")
            code = 1
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


# click's base class of the errors it reports (usage errors among them), reached through the
# one Typer exports, whichever click Typer uses (its own copy, or the package)
_CLICK_ERROR: type[Exception] = next(
    k for k in typer.BadParameter.__mro__ if k.__name__ == "ClickException"
)


def _asks_for_json(words: list[str]) -> bool:
    """Whether the command line asks for --format json (read before click parsed it: a usage
    error stops click's parse)."""
    pairs = zip(words, words[1:])
    return "--format=json" in words or any(a == "--format" and b == "json" for a, b in pairs)


def _usage_failure(exc, words: list[str]) -> int:
    """Say click's error about the command line ``words`` as gradcli says its own; its exit
    code (2 for a usage error)."""
    from ..base.errors import GradcliError

    code = getattr(exc, "exit_code", 2)
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help is printed already
        return code
    context = getattr(exc, "ctx", None)
    if context is not None:
        path = context.command_path
    else:  # click's parser does not always say which command it was reading
        path = " ".join(["gradcli", *[word for word in words if word in COMMANDS][:1]])
    message = exc.format_message().strip()
    message = message[:1].lower() + message[1:]
    hint = f"see {path} --help"
    possible = getattr(exc, "possibilities", None)
    if hasattr(exc, "option_name") and possible is not None:  # click's NoSuchOption
        message = f"no such option: {exc.option_name}"
        close = difflib.get_close_matches(exc.option_name, possible, n=1)
        hint = f"did you mean {close[0]}? ({hint})" if close else hint
    typo = message.removeprefix("no such command ").strip("'.")
    if typo != message.strip("'."):  # a misspelt command: the closest one
        close = difflib.get_close_matches(typo, list(COMMANDS), n=1)
        hint = f"did you mean {close[0]!r}? (see {path} --help)" if close else hint
    error = GradcliError(message.rstrip("."), hint=hint)
    if _asks_for_json(words):  # one line, never wrapped: a script reads it
        sys.stderr.write(json.dumps(error.document()) + "\n")
    else:
        say(error.render())
    return code


app = typer.Typer(
    name="gradcli",
    help="A command-line gradient calculator with PyTorch's autograd semantics.",
    cls=Commands,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def command(name: str):
    """Register ``function`` as the command ``name``: a Typer application of its one command,
    which ``Commands`` makes into a click command when the command line names it."""

    def register(function):
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        single.command(name, cls=Command, help=reflowed(function.__doc__))(function)
        COMMANDS[name] = single
        return function

    return register


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


def _choice(choices: tuple[str, ...], help: str, metavar: str, panel: str | None = None) -> dict:
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


Program = Annotated[
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
    typer.Option("--dtype", **_choice(tuple(DTYPES), "The floating type.", "TYPE", VALUES)),
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
        **_choice(
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


INTERNAL = 70  # sysexits' EX_SOFTWARE: an internal software error
OUTPUT_FAILED = 74  # sysexits' EX_IOERR: the output could not be written


class OutputFailure(Exception):
    """stdout did not take the output: a full disk, a closed or failing descriptor, an encoding
    that cannot show a character. Said in one plain line, exit ``OUTPUT_FAILED``."""


def _output_failure(exc: OSError | UnicodeError) -> OutputFailure:
    if isinstance(exc, UnicodeEncodeError):
        character = exc.object[exc.start]
        import unicodedata

        name = unicodedata.name(character, "")
        what = f"U+{ord(character):04X}" + (f" {name}" if name else "")
        return OutputFailure(
            f"cannot write the output: stdout's encoding ({exc.encoding}) cannot show "
            f"{character!r} ({what}); use a UTF-8 locale or set PYTHONIOENCODING=utf-8"
        )
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return OutputFailure(f"cannot write the output: {why}")


class CheckedStdout:
    """stdout whose failures (other than a closed pipe, which SIGPIPE ends quietly) are
    ``OutputFailure``s rather than whatever Python's stream raises."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as exc:
            raise _output_failure(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, UnicodeEncodeError) as exc:
            raise _output_failure(exc) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _discard_stdout() -> None:
    """Send what stdout still holds (and Python's final flush) to /dev/null: after a failed
    write there is nothing more to say there, and a second failure at exit would be noise."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def _complex_warning() -> type[Warning]:
    """numpy's warning that it dropped the imaginary part of a complex value."""
    import numpy as np

    return np.exceptions.ComplexWarning


def complex_refusal(exc: Warning) -> str:
    """The message for a complex value that reached something that takes real numbers."""
    return (
        "a complex value reached an operation or an output that takes real numbers, which "
        "would drop its imaginary part; take .real, .imag, .abs() or .angle() of it first "
        f"(numpy: {exc})"
    )


@contextmanager
def _guard(debug: bool, as_json: bool = False):
    """Errors on stderr with their exit code, no traceback unless --debug: 2 for bad usage or
    input, 130 for Ctrl-C, 70 for a bug in gradcli. With ``as_json`` (--format json) an error
    is one JSON object, for the script that asked for JSON.

    Bad input is a ``GradcliError``, or an ``EngineError`` (the engine refused the values or
    shapes it was given), which gets the hint of its kind; any other exception is a bug.
    """
    from ..base.bounds import TIMED_OUT, TimedOut
    from ..base.errors import GradcliError, from_engine
    from ..engine import EngineError

    def fail(error: GradcliError, code: int) -> typer.Exit:
        if debug:
            traceback.print_exc()
        if as_json:  # one line, never wrapped: a script reads it
            sys.stderr.write(json.dumps(error.document()) + "\n")
        else:
            say(error.render())
        return typer.Exit(code)

    try:
        with warnings.catch_warnings():
            # gradcli reports non-finite values itself, with the statement that made them;
            # numpy's RuntimeWarnings (its file and line) would only be noise beside them
            warnings.simplefilter("ignore", RuntimeWarning)
            # a complex value is never cut to its real part without a word (numpy would warn
            # and drop the imaginary part): it is an error with a message
            warnings.simplefilter("error", _complex_warning())
            yield
    except TimedOut as exc:  # what was written stays; the exit code is timeout(1)'s
        raise fail(exc, TIMED_OUT) from None
    except GradcliError as exc:
        raise fail(exc, 2) from None
    except EngineError as exc:
        raise fail(from_engine(exc), 2) from None
    except _complex_warning() as exc:
        raise fail(GradcliError(complex_refusal(exc)), 2) from None
    except typer.Exit:
        raise
    except BrokenPipeError:
        # where SIGPIPE cannot end the process (see main): stop quietly, and keep Python's
        # final flush of stdout from failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(141) from None
    except OutputFailure as exc:
        _discard_stdout()
        raise fail(GradcliError(str(exc)), OUTPUT_FAILED) from None
    except MemoryError:
        message = "out of memory: the values or the work are too large"
        hint = (
            "make the values smaller, or lower --max-elements so that gradcli refuses such "
            "sizes before it starts"
        )
        raise fail(GradcliError(message, hint=hint), 2) from None
    except KeyboardInterrupt:
        if as_json:
            raise fail(GradcliError("interrupted"), 130) from None
        say("interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:  # a bug in gradcli, not the user's input
        how = "with the traceback above" if debug else "rerun with --debug for the traceback"
        message = f"{type(exc).__name__}: {exc} (a bug in gradcli: please report it, {how})"
        error = GradcliError(message, where="internal error")
        if as_json:
            raise fail(error, INTERNAL) from None
        if debug:
            traceback.print_exc()
        say(f"internal error: {message}")
        raise typer.Exit(INTERNAL) from None


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]


# -- the options every program command shares ----------------------------------------------------


@record(kw_only=False, frozen=False, eq=True)
class Run:
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
        from ..lang import load_program
        from ..lang.source import read_source

        source = read_source(self.program, self.expr, self.file)
        program = load_program(source, use_cache=not self.no_cache)
        wrt = _names(self.wrt) if use_wrt else None
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


_SHARED = (
    ("program", Program, None),
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


def program_command(name: str, formats: tuple[str, ...] = FORMATS):
    """Register ``function(run, **own_options)`` as the command ``name``.

    The command's signature, which Typer reads, is the function's own options and the shared
    ones, ordered by their panels in --help (``PANELS``; the command's own options that name
    no panel are in one of their own); the shared ones reach the function as one ``Run``.
    ``formats`` are the choices of its --format; with none (a command that prints no
    result) there is neither --format nor --precision. Errors are reported by ``_guard``.
    """
    kinds = {
        "format": Annotated[
            str,
            typer.Option(
                "--format",
                **_choice(formats or ("table",), "How to print the result.", "FORMAT", OUTPUT),
            ),
        ]
    }
    # the shared options the command does not take, with the values its Run holds
    fixed = {} if formats else {"format": "table", "precision": 4, "nonfinite": "null"}

    def register(function):
        own = list(inspect.signature(function, eval_str=True).parameters.values())[1:]
        own = [_in_panel(p, f"{name.capitalize()} options") for p in own]
        shared = [
            inspect.Parameter(
                option,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=kinds.get(option, kind),
            )
            for option, kind, default in _SHARED
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
            from ..commands.outputs import SEVERAL_COMMANDS, one_output

            context = options.pop("context")
            given = {option: options.pop(option) for option, _, _ in _SHARED if option not in fixed}
            run = Run(**given, **fixed)
            source = context.get_parameter_source("format")
            run.format_given = source is not None and source.name != "DEFAULT"
            with _guard(run.debug, as_json=run.format == "json"), reading_inputs():
                _check_encoding({**vars(run), **options})
                check_choice("--format", run.format, formats or ("table",))
                check_choice("--dtype", run.dtype, tuple(DTYPES))
                check_choice("--nonfinite", run.nonfinite, NONFINITE)
                if name not in SEVERAL_COMMANDS:
                    one_output(run.of, name)
                in_force = Limits(run.max_elements, run.max_length, run.max_depth)
                with (
                    bounds.using(in_force),
                    _budget(name, run.max_memory, run.timeout),
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
        return function

    return register


@contextmanager
def _budget(command: str, max_memory: str | None, timeout: float | None):
    """The memory budget and the deadline of --max-memory and --timeout, in force."""
    from ..base.bounds import Budget, doing, parse_bytes, using

    if max_memory is None:
        in_force = Budget(timeout=timeout)
    else:
        in_force = Budget(parse_bytes(max_memory), timeout)
    with using(in_force), doing(f"running gradcli {command}"):
        yield


def _check_encoding(options: dict) -> None:
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


def _run_batch(
    run: Run,
    command: str,
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
        batch.main(run.format, command, spec, out, bind, run.of, v, wrt, dask, settings)
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


@program_command("eval")
def eval_command(
    run: Run,
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

    if answered(run, "eval", exact, False, shape, batch=batch):
        return
    if batch is not None:
        return _run_batch(run, "eval", batch, out, dask=dask)
    _no_out(out, dask)
    bound = run.bound()
    run.emit(evaluate(bound, run.of), bound)


@program_command("grad")
def grad_command(
    run: Run,
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
    if answered(run, "grad", exact, symbolic, shape, text, batch, [o for o in others if o]):
        return
    vectors = read_vectors(v, run.seed)
    if batch is not None:
        return _run_batch(run, "grad", batch, out, _batch_vector(v, vectors), dask=dask)
    _no_out(out, dask)
    bound = run.bound()
    shown, retained = _names(show) or [], _names(retain_grad) or []
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


@program_command("vjp")
def vjp_command(
    run: Run,
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
        return _run_batch(run, "vjp", batch, out, vector, _names(run.wrt), False, dask)
    _no_out(out, dask)
    bound = run.bound(use_wrt=False)  # --wrt may name intermediate nodes here
    run.emit(vjp(bound, run.of, vectors, _names(run.wrt), symbolic), bound)


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
        typer.Option(
            "--mode",
            **_choice(
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
    if answered(run, "jacobian", exact, symbolic, shape, batch=batch, others=others):
        return
    check_choice("--mode", mode, MODES)
    if batch is not None:
        flags = {"--transpose": transpose, "--heatmap": heatmap, "--sparse": sparse}
        options = tuple({**flags, "--symbolic": symbolic}.items())
        settings = Settings(mode=mode)
        return _run_batch(
            run, "jacobian", batch, out, dask=dask, settings=settings, refused=options
        )
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
    result = jacobian(
        bound, run.of, _names(run.wrt), transpose, mode, symbolic, sparse or automatic
    )
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


@program_command("jvp")
def jvp_command(
    run: Run,
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
        return _run_batch(run, "jvp", batch, out, use_wrt=False, dask=dask, settings=settings)
    _no_out(out, dask)
    bound = run.bound(use_wrt=False, tangents=list(tangents))
    run.emit(jvp(bound, run.of, tangents), bound)


@program_command("hessian")
def hessian_command(
    run: Run,
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
    from ..commands.compute import hessian
    from .exact import answered

    if answered(run, "hessian", exact, symbolic, shape, batch=batch):
        return
    if batch is not None:
        refused = (("--symbolic", symbolic),)
        return _run_batch(
            run, "hessian", batch, out, wrt=_names(run.wrt), dask=dask, refused=refused
        )
    _no_out(out, dask)
    bound = run.bound()
    run.emit(hessian(bound, run.of, _names(run.wrt)), bound)


@program_command("hvp")
def hvp_command(
    run: Run,
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
        return _run_batch(run, "hvp", batch, out, wrt=_names(run.wrt), dask=dask, settings=settings)
    _no_out(out, dask)
    bound = run.bound()
    run.emit(hvp(bound, run.of, run.values(v, "--v"), _names(run.wrt)), bound)


@program_command("check")
def check_command(
    run: Run,
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
        return _run_batch(
            run, "check", batch, out, wrt=_names(run.wrt), dask=dask, settings=settings
        )
    _no_out(out, dask)
    bound = run.bound()
    result = check(bound, run.of, _names(run.wrt), atol, rtol)
    run.emit(result, bound)
    if not result.agree:
        raise typer.Exit(1)


@program_command("graph", formats=Graph.formats)
def graph_command(run: Run) -> None:
    """The computational graph: each node's name, operation, shape, leaf/requires_grad, grad_fn.

    --format table draws a tree, dot writes Graphviz text, json a node list.

    Example: gradcli graph -f sample:neural_network --format dot
    """
    from ..commands.compute import graph

    bound = run.bound()
    run.emit(graph(bound, run.of), bound)


@program_command("plot")
def plot_command(
    run: Run,
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
    varied = _names(run.wrt)
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


@program_command("explain")
def explain_command(run: Run, v: V = None) -> None:
    """The chain rule with numbers: forward pass, backward pass, local derivatives, J^T v.

    Example: gradcli explain -e "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2 --v 1,1,1
    """
    from ..commands.explain.chain import explain

    bound = run.bound()
    run.emit(explain(bound, run.of, run.value(v, "v")), bound)


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
) -> None:
    """Run a PyTorch script as Python's interactive interpreter would, printing what torch
    prints: print() output, the value of each bare expression, torch's warnings and errors
    (exit 1 after an error, as Python's).

    Example: gradcli run sample:seed_first_example
    """
    from ..lang.values import existing_file
    from ..script.run import read_script, run_script

    with _guard(debug):
        _check_encoding({"script": script})
        in_force = Limits(max_elements, max_length, max_depth)
        with bounds.using(in_force), _budget("run", max_memory, timeout):
            source = read_script(script)
            # Python names a script by its absolute path, in warnings and tracebacks
            name = "<stdin>" if script == "-" else os.path.abspath(existing_file(script, "run"))
            status = run_script(source, name, seed, use_cache=not no_cache)
    if status:
        raise typer.Exit(status)


@command("functions")
def functions_command(
    format: Annotated[
        str,
        typer.Option("--format", **_choice(FUNCTION_FORMATS, "How to print the list.", "FORMAT")),
    ] = "text",
) -> None:
    """List the functions a program may call, by name, with PyTorch's convention at kinks.

    --format markdown prints the README's function reference; json one record a function.
    """
    from ..lang import reference

    with _guard(debug=False, as_json=format == "json"):
        check_choice("--format", format, FUNCTION_FORMATS)
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        sys.stdout.write(reference.render(format, width))


@command("repl")
def repl_command(seed: Seed = 0, dtype: Dtype = "float64", debug: Debug = False) -> None:
    """An interactive session: statements persist, and :grad, :vjp, :jacobian... act on them.

    Plain `gradcli` in a terminal starts it too. :set NAME VALUE gives an input a value,
    :format json, :help lists the commands; Ctrl-C cancels a line, Ctrl-D ends.

    Example: gradcli repl, then: y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1  :set x 1,2  :vjp y 1,1,1
    """
    from .repl import main as repl

    with _guard(debug):
        check_choice("--dtype", dtype, tuple(DTYPES))
    raise typer.Exit(repl(dtype, seed, debug))


def main() -> None:
    """Console-script entry point."""
    gc.freeze()  # the imports' objects live as long as the process (see the docstring)
    if hasattr(signal, "SIGPIPE"):
        # a reader that closed the pipe (``gradcli ... | head -1``) ends gradcli quietly, as
        # it ends ``seq``: Python would otherwise raise BrokenPipeError on the next write
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if sys.stderr is None:  # stderr closed: errors go nowhere, but the exit code still tells
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stdout is None:  # stdout closed (``>&-``): Python gives no stream at all
        say("error: cannot write the output: stdout is closed")
        raise SystemExit(OUTPUT_FAILED)
    sys.stdout = CheckedStdout(sys.stdout)
    if len(sys.argv) == 1 and sys.stdin.isatty() and sys.stdout.isatty():
        sys.argv.append("repl")  # plain `gradcli` in a terminal: the REPL
    try:
        app()
        code: object = 0
    except SystemExit as done:
        code = done.code
    except OutputFailure as exc:  # outside a command (--help, a usage error)
        say(f"error: {exc}")
        _discard_stdout()
        raise SystemExit(OUTPUT_FAILED) from None
    try:
        sys.stdout.flush()  # here, not in Python's shutdown, where a failure is only noise
    except OutputFailure as exc:
        say(f"error: {exc}")
        _discard_stdout()
        code = OUTPUT_FAILED
    raise SystemExit(code)


# commands in modules of their own, which register themselves with program_command
from . import derivative as derivative_cli  # noqa: E402, F401
from . import export as cli_export  # noqa: E402, F401
from . import samples as cli_samples  # noqa: E402, F401
from . import uncertainty as cli_uncertainty  # noqa: E402, F401

if _collecting:
    gc.enable()
