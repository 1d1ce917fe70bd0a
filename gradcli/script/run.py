"""``gradcli run SCRIPT``: a PyTorch script, run as Python's interactive interpreter runs it.

The entry of the command: the script's text (``read_script``) and its run by the interpreter
(``script/python``: Python's ``ast`` lowered to closures, never executed as Python). What
gradcli cannot take is a ``GradcliError`` before anything runs; an exception the script does
not catch ends the run as Python's do (the traceback, then ``RuntimeError: ...``; exit 1).
"""

from __future__ import annotations

from typing import TextIO

from ..lang.values import existing_file


def read_script(script: str) -> str:
    """The text of the script at this path (``-``: stdin), within ``--max-length``."""
    from ..lang.source import read_source

    if script != "-":
        existing_file(script, "gradcli run", "check the path of the script (- reads stdin)")
    return read_source(None, None, script)


def run_script(
    source: str,
    filename: str,
    seed: int = 0,
    out: TextIO | None = None,
    err: TextIO | None = None,
    max_steps: int | None = None,
) -> int:
    """Run a script, printing to ``out`` and ``err``; the exit status Python would have (0,
    or 1 after an uncaught exception). ``GradcliError`` for text gradcli does not take."""
    from .python.interpreter import run_script as interpret

    return interpret(source, filename, seed, out, err, max_steps)
