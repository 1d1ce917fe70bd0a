"""``gradcli run -i``: Python's interactive console over the script interpreter.

A learner types the tutorial a line at a time, as into ``python`` with torch imported: ``>>> ``
for a new statement, ``... `` while it goes on. An input goes on while Python's parser says it
is unfinished (an open bracket or triple quote, a trailing backslash, a block header with no
body yet); an input that opens a block (``def``, ``for``, ``with``, a decorator, ...) goes on
until an empty line, as in Python's console. Each complete input is lowered and run by the
same interpreter as a script (``python/interpreter.py``), in one run whose names, grad mode,
default dtype, print options and random generator last the whole session; its lines are
numbered from 1 in warnings and tracebacks (``File "<stdin>", line 1, in <module>``), as
Python numbers an interactive input. ``--max-steps`` bounds each input.

This module holds the console's logic; reading the terminal (prompts, history) is the
command line's (``cli/run.py``).
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from typing import TextIO

from ..lang.values import quiet_parse
from .python.interpreter import lower, new_run, run_program, session
from .python.limits import Steps
from .python.runtime import Run

PS1, PS2 = ">>> ", "... "

# What Python's parser says of an input that is only unfinished (more lines would complete it)
_UNFINISHED = (
    "was never closed",
    "unexpected EOF",
    "expected an indented block",
    "unterminated triple-quoted string",
)
_BLOCKS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.Match,
)


def needs_more(lines: list[str]) -> bool:
    """Whether the input of ``lines`` goes on on the next line (Python's console's rule)."""
    if not "".join(lines).strip():
        return False
    if len(lines) > 1 and not lines[-1].strip():
        return False  # an empty line ends a block
    text = "\n".join(lines)
    if text.rstrip("\n").endswith("\\"):
        return True
    if lines[0].lstrip().startswith("@"):
        return True  # a decorator: its def follows, and the block ends at an empty line
    try:
        tree = quiet_parse(text, "exec")
    except SyntaxError as exc:
        return any(words in (exc.msg or "") for words in _UNFINISHED)
    except (RecursionError, MemoryError):
        return False  # lowering says what is wrong
    first = tree.body[0] if tree.body else None
    return isinstance(first, _BLOCKS) or len(tree.body) > 1 and isinstance(tree.body[-1], _BLOCKS)


class Console:
    """One console session: a run whose names and state last from input to input."""

    def __init__(
        self,
        seed: int = 0,
        max_steps: int | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ):
        self.max_steps = max_steps
        self.run: Run = new_run("", "<stdin>", seed, out, err, max_steps)

    @contextlib.contextmanager
    def open(self) -> Iterator[Console]:
        """The session's engine state, in force while the console reads and runs inputs."""
        with session(self.run):
            yield self

    def script(self, source: str, filename: str) -> int:
        """Run a whole script first (``gradcli run -i FILE``, as ``python -i FILE``); its
        names stay for the inputs that follow. The exit status of the script."""
        program = lower(source)
        self._place(source, filename, quoted=filename != "<stdin>")
        return run_program(self.run, program)

    def feed(self, text: str) -> int:
        """Run one complete input; 0, or 1 after an uncaught exception (its traceback on
        stderr). ``GradcliError`` for what gradcli does not take: nothing of it ran."""
        program = lower(text)
        self._place(text, "<stdin>", quoted=False)
        return run_program(self.run, program)

    def _place(self, text: str, filename: str, quoted: bool) -> None:
        run = self.run
        run.filename, run.lines, run.quoted = filename, text.split("\n"), quoted
        run.steps = Steps() if self.max_steps is None else Steps(self.max_steps)
        run.line = 0
