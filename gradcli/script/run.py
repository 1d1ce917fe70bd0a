"""``gradcli run SCRIPT``: a PyTorch script, statement by statement, printing what torch prints.

The entry of the command: the script's text (``read_script``), its steps from the parse cache
or compiled afresh (``load_steps``, ``compile.py``), and a ``ScriptRun`` (``execute.py``)
that runs them. The script is never executed as Python; what gradcli cannot take is a
``GradcliError`` before anything runs, and torch's errors end the run as Python's uncaught
exceptions do (the traceback's frame, then ``RuntimeError: ...``; exit 1).
"""

from __future__ import annotations

from typing import TextIO

import numpy as np

from .. import engine as gc
from ..lang.values import existing_file
from .compile import compile_script
from .execute import ScriptRun
from .steps import ScriptError, Step, step_from_json, step_json


def load_steps(source: str, use_cache: bool = True) -> list[Step]:
    """The steps of a script, from the parse cache when it holds them (a script run again
    needs neither sympy nor the validator); an entry that does not read back is made again."""
    from ..lang.cache import read_entry, write_entry

    if use_cache:
        data = read_entry(source, "script")
        try:
            if isinstance(data, dict) and data["source"] == source:
                return [step_from_json(step) for step in data["steps"]]
        except Exception:  # noqa: BLE001 - an entry not of the compiler's steps: made again
            pass
    steps = compile_script(source)
    if use_cache:
        write_entry(source, "script", {"source": source, "steps": [step_json(s) for s in steps]})
    return steps


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
    use_cache: bool = True,
    max_steps: int | None = None,
) -> int:
    """Run a script, printing to ``out`` and ``err``; the exit status Python would have (0,
    or 1 after an uncaught exception). ``GradcliError`` for text gradcli does not take."""
    from .python.interpreter import run_script as interpret

    return interpret(source, filename, seed, out, err, max_steps)
