"""``gradcli run``: a PyTorch script, statement by statement (see ``script.run``).

No ``from __future__ import annotations``: Typer reads the annotations, so they must be
objects, not names.
"""

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Annotated

import typer

from ..base import bounds
from ..base.bounds import Limits
from .guard import guard
from .options import (
    Debug,
    MaxDepth,
    MaxElements,
    MaxLength,
    MaxMemory,
    NoCache,
    Seed,
    Timeout,
    budget,
    check_encoding,
    command,
)


@command("run")
def run_command(
    script: Annotated[
        str | None,
        typer.Argument(
            metavar="[SCRIPT]",
            help="The PyTorch script to run (- for stdin). Without one: a console on a "
            "terminal, else the script on stdin.",
            show_default=False,
        ),
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option(
            "--interactive",
            "-i",
            help="A console with Python's >>> prompt after the script (or without one), "
            "as python -i.",
        ),
    ] = False,
    seed: Seed = 0,
    debug: Debug = False,
    no_cache: NoCache = False,
    max_elements: MaxElements = Limits.max_elements,
    max_length: MaxLength = Limits.max_length,
    max_depth: MaxDepth = Limits.max_depth,
    max_memory: MaxMemory = None,
    timeout: Timeout = None,
    max_steps: Annotated[
        int,
        typer.Option(
            "--max-steps",
            min=1,
            help="The statements and loop iterations a script may run (a loop that does not "
            "end stops here, exit 2).",
        ),
    ] = 20_000_000,
) -> None:
    """Run a PyTorch script as Python's interactive interpreter would, printing what torch
    prints: print() output, the value of each bare expression, torch's warnings and errors
    (exit 1 after an error, as Python's).

    Example: gradcli run sample:seed_first_example
    """
    from ..lang.values import existing_file
    from ..script.run import read_script, run_script

    if script is None and not interactive:
        interactive = sys.stdin.isatty()
        script = None if interactive else "-"
    with guard(debug):
        check_encoding({"script": script or ""})
        in_force = Limits(max_elements, max_length, max_depth)
        with bounds.using(in_force), budget("run", max_memory, timeout):
            source = name = None
            if script is not None:
                source = read_script(script)
                # Python names a script by its absolute path, in warnings and tracebacks
                name = "<stdin>" if script == "-" else os.path.abspath(existing_file(script, "run"))
            if interactive:
                status = _console(source, name, seed, max_steps)
            else:
                assert source is not None and name is not None
                status = run_script(source, name, seed, max_steps=max_steps)
    if status:
        raise typer.Exit(status)


def _console(source: str | None, name: str | None, seed: int, max_steps: int) -> int:
    """The console (``script/console.py``) on stdin, after the script if one is given; 0 at
    the end of the input (Ctrl-D), as Python's."""
    from ..base.errors import GradcliError, from_engine
    from ..base.notice import say
    from ..ops.library import EngineError
    from ..script.console import PS1, PS2, Console, needs_more

    terminal = sys.stdin.isatty()
    console = Console(seed, max_steps)
    with console.open(), _history(terminal):
        if source is not None and name is not None:
            console.script(source, name)
        if terminal:
            sys.stderr.write(BANNER + "\n")
        lines: list[str] = []
        while True:
            try:
                lines.append(_read(PS2 if lines else PS1, terminal))
                if needs_more(lines):
                    continue
                text, lines = "\n".join(lines), []
                if text.strip():
                    console.feed(text)
            except EOFError:
                if terminal:
                    sys.stdout.write("\n")
                return 0
            except KeyboardInterrupt:  # the input (or its run) is dropped, as in Python
                lines = []
                sys.stdout.flush()
                sys.stderr.write("\nKeyboardInterrupt\n")
            except GradcliError as error:
                say(error.render())
            except EngineError as error:
                say(from_engine(error).render())


BANNER = "gradcli run: PyTorch, a statement at a time (torch is imported; Ctrl-D ends)"


def _read(prompt: str, terminal: bool) -> str:
    """A line of input: with the prompt on a terminal (readline's editing and history), else
    the prompt on stderr, as Python's console writes it when its input is not a terminal."""
    if terminal:
        return input(prompt)
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


@contextlib.contextmanager
def _history(terminal: bool) -> Iterator[None]:
    """readline's editing and a history of its own (beside the REPL's) on a terminal."""
    if not terminal:
        yield
        return
    try:
        import readline
    except ImportError:  # no readline on this Python: plain input
        yield
        return
    from .repl import history_path, kept_history

    readline.set_completer(None)
    readline.parse_and_bind("tab: tab-insert")  # Tab indents a block, as in Python's console
    with kept_history(readline, history_path().with_name("run_history")):
        yield
