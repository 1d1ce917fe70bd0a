"""``--batch``: the command at every point, in one process chunk by chunk (or handed to
``dask.py``'s cluster), its results streamed as JSON lines or written to ``--out``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError
from ..commands.compute import Bound
from ..results import Points
from .ending import Disagreed, Interrupted, deferred_interrupts, disagreeing
from .out import FolderOut, OutFile, block_rows, check_out_path, refuse_out
from .passes import Settings
from .plan import CHUNK, count, fit_rows, read_points, run, shape_defaults
from .stores.base import is_folder, storage_of


def stream(
    bound: Bound,
    command: str,
    points: dict[str, np.ndarray],
    of: str | None,
    v: np.ndarray | None,
    wrt: list[str] | None,
    out: str | None,
    stdout=None,
    settings: Settings | None = None,
) -> int:
    """Run the batch: JSON lines to ``stdout``, or arrays to ``out``, chunk by chunk.

    Returns the number of points. On Ctrl-C or at --timeout's deadline, what was computed so
    far is kept (complete lines only; in ``out``, the points done) and ``Interrupted`` (or
    ``TimedOut``) is raised; ``Disagreed`` at the end where check's methods disagreed.
    """
    from ..base.notice import Progress
    from ..render import render
    from ..render.json_format import COMPILED_CHUNK, COMPILED_FROM, batch_of

    stdout = stdout or sys.stdout
    total = count(points)
    writer: Any = None  # OutFile, or FolderOut
    if out is not None and (is_folder(out) or storage_of(out)):
        writer = FolderOut(out, total, block_rows(points))
    elif out is not None:
        writer = OutFile(out, total)
    rows = COMPILED_CHUNK if writer is None and total >= COMPILED_FROM else CHUNK
    done = 0
    disagree: list[int] = []
    with (
        deferred_interrupts() as state,
        Progress(total, "points", total > CHUNK) as progress,
        batch_of(total),
    ):
        try:
            for chunk in run(bound, command, points, of, v, wrt, rows, settings):
                state["writing"] = True
                if writer is None:
                    render(chunk, "json", file=stdout)
                    stdout.flush()
                else:
                    writer.write(chunk)
                done += len(next(iter(chunk.values.values())))
                disagree += disagreeing(chunk.first, chunk.sections)
                state["writing"] = False
                progress.update(done)
                if state["presses"]:
                    raise KeyboardInterrupt
        except KeyboardInterrupt:
            if writer is not None:
                writer.close()
            raise Interrupted(done, total, out) from None
        except bounds.TimedOut as exc:  # what was written stays, and is said
            if writer is not None:
                writer.close()
            where = "" if out is None else f" to {out}"
            raise bounds.TimedOut(
                f"{exc.message}: wrote {done} of {total} points{where}", hint=exc.hint
            ) from None
        except BaseException:
            if writer is not None:
                writer.discard()
            raise
    if writer is not None:
        writer.close()
    if disagree:
        raise Disagreed(disagree, done)
    return done


def main(
    fmt: str,
    command: str,
    spec: str,
    out: str | None,
    bind: Callable,
    of: str | None = None,
    v: np.ndarray | None = None,
    wrt: list[str] | None = None,
    dask: str | None = None,
    settings: Settings | None = None,
) -> None:
    """``--batch``: read the points, bind the program, then stream JSON lines to stdout or
    write everything to ``out``; the runs' warnings go to stderr at the end.

    ``bind(defaults)`` binds the program as the command line gives it, ``defaults(program,
    given)`` the values of the inputs it gives none: those take their shape from the first
    point. On Ctrl-C, says how far it got and raises ``Interrupted``.
    """
    from ..base.notice import say

    if fmt not in ("table", *Points.formats):  # table: the default, when none is asked
        raise GradcliError(
            f"--batch writes JSON lines (or --out arrays), not {fmt}",
            hint="leave out --format, or use --out results.npz",
        )
    if out is not None:
        check_out_path(out)
    points = read_points(spec)
    count(points)  # no points: said so before the program is bound without them
    bound = bind(shape_defaults(points))
    if out is not None:  # every input file is read by now: refuse to write over one
        refuse_out(out)  # (before any work: the points are read a chunk at a time later)
    points = fit_rows(points, spec, bound)
    disagreed = None
    try:
        if dask is None:
            done = stream(bound, command, points, of, v, wrt, out, settings=settings)
        else:
            from .dask import stream as on_cluster

            done = on_cluster(bound, command, points, of, v, wrt, out, dask, settings=settings)
    except Interrupted as stop:
        say(stop.message())
        raise
    except Disagreed as found:
        disagreed, done = found, found.total
    for message in bound.messages():
        say(f"warning: {message}")
    if out is not None:
        say(f"wrote {done} points to {out}")
    if disagreed is not None:
        say(disagreed.message())
        raise disagreed
