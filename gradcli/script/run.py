"""``gradcli run SCRIPT``: a PyTorch script, run as Python's interactive interpreter runs it.

The entry of the command: the script's text (``read_script``) and its run by the interpreter
(``script/python``: Python's ``ast`` lowered to closures, never executed as Python). What
gradcli cannot take is a ``GradcliError`` before anything runs; an exception the script does
not catch ends the run as Python's do (the traceback, then ``RuntimeError: ...``; exit 1).
"""

from __future__ import annotations

from ..lang.values import existing_file
from .python.interpreter import run_script

__all__ = ["read_script", "run_script"]


def read_script(script: str) -> str:
    """The text of the script at this path (``-``: stdin), within ``--max-length``."""
    from ..lang.source import read_source

    if script != "-":
        existing_file(script, "gradcli run", "check the path of the script (- reads stdin)")
    return read_source(None, None, script)
