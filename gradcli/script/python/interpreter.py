"""A script's run from its text: parsed by Python's ``ast`` (never executed as Python), lowered
whole before anything runs (a refusal is a ``GradcliError``, exit 2, nothing printed), then run
statement by statement as Python's interactive interpreter runs a pasted script, with
``torch`` already imported.

An exception the script does not catch ends the run as it ends Python's: everything printed
before it stays, then Python's traceback on stderr (the script's frames, the source lines and
Python 3.11's carets where a file is run; ``<stdin>`` shows no source), exit status 1.
"""

from __future__ import annotations

import contextlib
import gc as collector
import sys
import traceback
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

import numpy as np

from ...base.errors import GradcliError
from ...engine import graph_hooks, torch_random
from ...engine.meter import metering
from ...lang.validate import check_characters
from ...lang.values import quiet_parse
from ...ops import library as gc
from ...ops.numerics import summation
from . import builtins, library_objects, torch_api
from .errors import Place, places
from .lower_statements import Statements
from .runtime import RUNNING, Frame, Run

RECURSION_LIMIT = 20_000  # Python frames: the script's calls are bounded far below it


def lower(source: str) -> Any:
    """The script lowered to one closure of the module's frame; ``GradcliError`` for what
    gradcli does not take (or Python cannot parse)."""
    check_characters(source)
    lines = source.split("\n")
    try:
        tree = quiet_parse(source, "exec")
    except SyntaxError as exc:
        line = (exc.text or "").rstrip("\n")
        raise GradcliError(
            f"Python cannot parse the script: {exc.msg}",
            where=f"line {exc.lineno}",
            source=line or None,
            column=None if exc.offset is None or not line else max(exc.offset - 1, 0),
            hint="check the brackets and quotes of that line",
        ) from None
    except (RecursionError, MemoryError):
        raise GradcliError("the script is nested too deeply to parse") from None
    try:
        return Statements(lines).module(tree)
    except RecursionError:
        raise GradcliError(
            "the script is nested too deeply to lower", hint="split its expressions"
        ) from None


def new_run(
    source: str,
    filename: str,
    seed: int = 0,
    out: TextIO | None = None,
    err: TextIO | None = None,
    max_steps: int | None = None,
) -> Run:
    """A run of ``source``'s script with ``torch`` imported (as the interactive interpreter
    the tutorials are pasted into)."""
    run = Run(filename, source.split("\n"), filename != "<stdin>", seed, out, err, max_steps)
    run.modules = dict(torch_api.modules(run))
    run.builtins = builtins.builtins(run)
    run.globals["torch"] = run.modules["torch"]
    run.globals["__name__"] = "__main__"
    run.call_object = lambda value, args, kwargs: library_objects.call(run, value, args, kwargs)
    return run


def run_script(
    source: str,
    filename: str,
    seed: int = 0,
    out: TextIO | None = None,
    err: TextIO | None = None,
    max_steps: int | None = None,
) -> int:
    """Run a script, printing to ``out`` and ``err``; the exit status Python would have (0,
    or 1 after an uncaught exception). ``GradcliError`` for what gradcli does not take."""
    program = lower(source)
    status = execute(new_run(source, filename, seed, out, err, max_steps), program)
    if graph_hooks.HOOKED or graph_hooks.PACKED:
        # the run's hooks and packed tensors are in cycles with its values (a hook's function
        # holds the script's globals): collected now, later work in this process (the
        # library, a test suite) is not held to the engine's slower paths for hooked graphs
        collector.collect()
    return status


def execute(run: Run, program: Any) -> int:
    """Run ``program`` (``lower``'s) in ``run``; the exit status."""
    with session(run):
        return run_program(run, program)


@contextlib.contextmanager
def session(run: Run) -> Iterator[None]:
    """The engine's state a run keeps from its first statement to its last (torch's default
    dtype and grad mode, the run's generator, numpy's warnings off), put back after it: one
    script's run, or a whole console session (``script/console.py``)."""
    limit = sys.getrecursionlimit()
    with contextlib.ExitStack() as stack:
        stack.enter_context(gc.default_dtype(np.float32))  # torch's default floating dtype
        stack.enter_context(gc.set_grad_enabled(True))  # put back after the script's own
        stack.enter_context(torch_random.using(run.generator))  # what rand, dropout draw from
        stack.enter_context(summation.torch_order())  # torch's last bits in sums and means
        stack.enter_context(metering(run.tally))  # every value the engine makes, counted
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore", RuntimeWarning)
        stack.enter_context(np.errstate(all="ignore"))
        defaults = contextlib.ExitStack()
        stack.enter_context(defaults)
        run.set_engine_default = lambda dtype: defaults.enter_context(gc.default_dtype(dtype))
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
        RUNNING.append(run)
        try:
            yield
        finally:
            RUNNING.pop()
            sys.setrecursionlimit(limit)
            run.out.flush()


def run_program(run: Run, program: Any) -> int:
    """Run ``program`` in ``run``'s module frame, inside ``session(run)``; the exit status:
    0, or 1 after an exception the script did not catch (its traceback on ``run.err``)."""
    frame = Frame(run.globals, None, run)
    try:
        program(frame)
    except GradcliError:
        run.out.flush()
        raise
    except RecursionError:
        run.out.flush()
        raise GradcliError(
            f"line {run.line}: the script nests calls or values too deeply for gradcli run",
            hint="a recursion that does not end?",
        ) from None
    except Exception as exc:  # the script's uncaught exception: Python's traceback
        run.out.flush()
        run.err.write(traceback_text(run, exc))
        run.err.flush()
        return 1
    finally:
        run.out.flush()
    return 0


def traceback_text(run: Run, exc: BaseException) -> str:
    """What Python prints for ``exc``, uncaught: the script's frames, outermost first."""
    text = "Traceback (most recent call last):\n"
    for place in reversed(places(exc)):
        text += f'  File "{run.filename}", line {place.line}, in {place.function}\n'
        if run.quoted:
            text += _quoted(run.source(place.line), place)
    return text + "".join(traceback.format_exception_only(type(exc), exc))


def _quoted(line: str, place: Place) -> str:
    """The source line of a frame, and Python 3.11's carets under the expression at fault
    where it is not the whole line."""
    shown = line.strip()
    if not shown:
        return ""
    text = f"    {shown}\n"
    if place.span is None:
        return text
    start, end, left, right = place.span
    indent = len(line) - len(line.lstrip())
    if start <= indent and end >= len(line.rstrip()):
        return text  # the whole line: no carets
    marks = "".join("^" if left <= k < right else "~" for k in range(start, end))
    return text + "    " + " " * (start - indent) + marks + "\n"
