"""The Typer application: the group of commands (each command's module imported when the
command line names it), usage errors said as gradcli's own, and the entry point ``main``.

A command reads its options, calls one compute function, renders; ``guard`` maps its errors
to exit codes (0 success, 1 a check that ran and failed, 2 bad usage or bad input, 70 an
internal error, 124 --timeout passed, 130 interrupted).

Annotations are evaluated as the module runs (no ``from __future__ import annotations``):
Typer reads every option's, and text annotations would be compiled at each start. The garbage
collector is paused while the modules a command needs are imported, as in ``gradcli``'s
``__init__`` (``base/collector.py``); ``main`` then freezes what they made (``gc.freeze``:
kept out of every later collection, several ms of each call), the command line's own process
only, never a process that imports gradcli as a library.
"""

from ..base import collector

_collecting = collector.pause()

import difflib
import importlib
import json
import os
import signal
import sys
from typing import Annotated

import typer
from typer.core import TyperGroup

from .. import __version__
from ..base.notice import say
from ..commands.table import COMMANDS as TABLE
from .guard import OUTPUT_FAILED, CheckedStdout, OutputFailure, discard_stdout
from .options import format_help, registered

#: Every command, by name, in the order of ``gradcli --help`` (the command table's, then
#: ``samples``, which lists what comes with gradcli and computes nothing): the module (in
#: ``gradcli.cli``) that registers it (``options.command``), imported when the command line
#: names it. ``compute.py`` registers the commands of ``commands.compute``; each other command
#: is in the module of its name.
COMMANDS: dict[str, str] = {
    **{
        command.name: ".compute"
        if (command.compute or "").startswith("compute:")
        else f".{command.name}"
        for command in TABLE
    },
    "samples": ".samples",
}


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
        format_help(self, TyperGroup, ctx, formatter)

    def get_command(self, ctx, cmd_name: str):
        module = COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            importlib.import_module(module, __package__)  # it registers the command
            self.add_command(typer.main.get_command(registered(cmd_name)), cmd_name)
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        # A command named first: the group's own options (--help, --version, the completion
        # ones) come before a command's name, so none was given and there is nothing of the
        # group's to read; Typer would still run each option's default through its type
        # (from typer 0.29 on, a pydantic validator: its import is half a warm start-up).
        named_first = bool(args) and args[0] in COMMANDS
        ctx.meta[_NAMED_FIRST] = named_first
        try:
            return super().parse_args(ctx, args)
        finally:
            del ctx.meta[_NAMED_FIRST]

    def get_params(self, ctx) -> list:
        return [] if ctx.meta.get(_NAMED_FIRST) else super().get_params(ctx)

    def resolve_command(self, ctx, args: list[str]):
        name = args[0]
        if name[:1] != "-" and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            from .command_words import CommandLineError

            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f"see {ctx.command_path} --help"
            raise CommandLineError(
                f"no such command {name!r}",
                hint=f"did you mean {close[0]!r}? ({hint})" if close else hint,
            )
        return super().resolve_command(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        from .command_words import CommandLineError

        words = sys.argv[1:] if args is None else [str(a) for a in args]
        try:
            code = super().main(
                args=args,
                prog_name=prog_name,
                complete_var=complete_var,
                standalone_mode=False,
                **extra,
            )
        except CommandLineError as exc:  # a command's words (``ProgramCommand.parse_args``) or name
            _say_usage_error(exc, words)
            code = 2
        except _CLICK_ERROR as exc:  # click's, before the command: ``gradcli --bogus``
            code = getattr(exc, "exit_code", 2)
            if type(exc).__name__ != "NoArgsIsHelpError":  # else the help is printed already
                _say_usage_error(_said_as_gradcli(exc), words)
        except typer.Abort:
            say("aborted")
            code = 1
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


# the key of Context.meta that says, while the group reads its words, that they start with a
# command's name (see ``Commands.parse_args``)
_NAMED_FIRST = "gradcli.named_first"

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


def _said_as_gradcli(exc):
    """click's error about the words before the command (the group's own options) as
    gradcli's: from what it holds (the option it names, the ones that exist), else in
    click's words."""
    from .command_words import CommandLineError

    context = getattr(exc, "ctx", None)
    hint = f"see {context.command_path if context is not None else 'gradcli'} --help"
    name = getattr(exc, "option_name", None)
    if name is not None and getattr(exc, "possibilities", None) is not None:  # NoSuchOption
        close = difflib.get_close_matches(name, exc.possibilities, n=1)
        hint = f"did you mean {close[0]}? ({hint})" if close else hint
        return CommandLineError(f"no such option: {name}", hint=hint)
    message = exc.format_message().strip().rstrip(".")
    return CommandLineError(message[:1].lower() + message[1:], hint=hint)


def _say_usage_error(error, words: list[str]) -> None:
    """Say the usage ``error`` about the command line ``words`` as gradcli says its other
    errors (one JSON object under --format json)."""
    if _asks_for_json(words):  # one line, never wrapped: a script reads it
        sys.stderr.write(json.dumps(error.document()) + "\n")
    else:
        say(error.render())


app = typer.Typer(
    name="gradcli",
    help="A command-line gradient calculator with PyTorch's autograd semantics.",
    cls=Commands,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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


def main() -> None:
    """Console-script entry point."""
    collector.keep()  # the imports' objects live as long as the process (see the docstring)
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
        discard_stdout()
        raise SystemExit(OUTPUT_FAILED) from None
    try:
        sys.stdout.flush()  # here, not in Python's shutdown, where a failure is only noise
    except OutputFailure as exc:
        say(f"error: {exc}")
        discard_stdout()
        code = OUTPUT_FAILED
    raise SystemExit(code)


collector.resume(_collecting)
