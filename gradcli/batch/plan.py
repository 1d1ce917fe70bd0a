"""Batch mode: one command at many points, through one traced pass replayed in chunks.

The command's computation (the program, and for grad/vjp its backward pass) is traced once
at the bound point into a tape (``engine.compile``); each chunk of points then goes through
one batched replay, so memory stays bounded by the chunk size for any number of points.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .. import engine as gc
from ..base import budget, limits
from ..base.errors import GradcliError, listing
from ..base.files import atomic_output, refuse_folder, refuse_input
from ..commands.compute import (
    Bound,
    _cotangent,
    _inputs_are,
    _targets,
    hvp_targets,
    integer_input,
    output_of,
)
from ..engine.compile import batch_size
from ..lang.values import json_numbers, load_json, open_archive, parse_value, read_data
from ..results import Points
from .passes import Layout, Pass, Sections, Settings, at_point, check_settings, passes
from .stores.chunked import NpyRows, is_folder, read_stored, storage_of

CHUNK = 8192


def read_points(spec: str, stdin=None) -> dict[str, np.ndarray]:
    """Points as arrays with a leading point dimension, keyed by input name.

    ``@points.npy`` or ``@points.csv`` (one point of x per row), ``@points.npz`` (one array
    per input), ``@DIR`` (.npy parts), ``@points.zarr`` (an array, or a group of one array per
    input), ``@points.parquet`` (or a folder of parts: the columns of ``parquet.py``), or
    ``-``: JSON lines on stdin, each a value of x or an object {name: value}.
    """
    if spec == "-":
        return _json_lines(read_data(stdin or sys.stdin, "--batch -"))
    if spec.startswith("@") and spec.lower().endswith(".npz"):
        with open_archive(spec[1:], "--batch") as archive:
            return {name: archive[name].astype(float) for name in archive.files}
    if spec.startswith("@") and spec.lower().endswith(".npy"):  # read a chunk at a time
        return {"x": NpyRows(spec[1:])}  # type: ignore[dict-item]
    if spec.startswith("@") and (storage_of(spec[1:]) or os.path.isdir(spec[1:])):
        return read_stored(spec[1:])  # type: ignore[return-value]
    return {"x": parse_value(spec, "--batch")}


def first_points(points: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The first point of each input: the value that gives an input its shape when the
    command line gives it none."""
    return {name: array[0] for name, array in points.items() if array.ndim and len(array)}


def shape_defaults(points: dict[str, np.ndarray]) -> Callable:
    """``defaults(program, given)`` for binding the program: the first point's values of the
    inputs that are neither given nor declared, so that the points give them their shape."""
    first = first_points(points)

    def defaults(program, given: dict) -> dict:
        return {n: a for n, a in first.items() if n not in given and n not in program.declared}

    return defaults


def fit_rows(points: dict[str, np.ndarray], spec: str, bound: Bound) -> dict[str, np.ndarray]:
    """Rows of a CSV file reshaped to points of x, when x has a shape of its own."""
    array = points.get("x")
    if not spec.lower().endswith(".csv") or array is None or array.ndim != 1:
        return points
    if "x" not in bound.arrays or bound.arrays["x"].ndim == 0:
        return points
    if array.size % max(bound.arrays["x"].size, 1):
        raise GradcliError(
            f"--batch: the rows of {spec[1:]} do not hold points of x, of shape "
            f"{bound.arrays['x'].shape}",
            hint="write one point of x per row",
        )
    return {**points, "x": array.reshape((-1,) + bound.arrays["x"].shape)}


def _json_lines(text: str) -> dict[str, np.ndarray]:
    limits.check_elements(text.count(",") + text.count("\n") + 1, "--batch -")
    columns: dict[str, list] = {}
    lines = [line for line in text.splitlines() if line.strip()]
    for number, line in enumerate(lines, start=1):
        where = f"--batch -: line {number}"
        item = load_json(line, where)
        item = item if isinstance(item, dict) else {"x": item}
        item = {name: json_numbers(value, f"{where}: {name}") for name, value in item.items()}
        if columns and set(item) != set(columns):
            raise GradcliError(
                f"--batch -: line {number} names other inputs than line 1",
                hint="name the same inputs on every line",
            )
        for name, value in item.items():
            shape = _shape(value, f"{where}: the point of {name}")
            first = _shape(columns[name][0], name) if name in columns else shape
            if shape != first:
                raise GradcliError(
                    f"{where}: the point of {name} has shape {shape}, but line 1's has shape "
                    f"{first}",
                    hint="give every point of an input the same shape, one point per line",
                )
            columns.setdefault(name, []).append(value)
    if not columns:
        raise GradcliError("--batch -: no points on stdin")
    try:
        return {name: np.asarray(values, dtype=float) for name, values in columns.items()}
    except (ValueError, TypeError):
        raise GradcliError(
            "--batch -: the points of an input must all be numbers of one shape",
            hint='give one point per line: [1, 2] or {"x": [1, 2]}',
        ) from None


def _shape(value: Any, what: str) -> tuple[int, ...]:
    """The shape of a point read from JSON, refusing rows of different lengths."""
    try:
        return np.asarray(value, dtype=float).shape
    except ValueError:
        raise GradcliError(
            f"{what} has rows of different lengths", hint="give every row the same length"
        ) from None


def count(points: dict[str, np.ndarray]) -> int:
    """The number of points, after checking that every input has the same, at least one."""
    if not points:
        raise GradcliError("--batch: the file holds no arrays")
    for name, array in points.items():
        if array.ndim == 0 or len(array) == 0:
            raise GradcliError(
                f"--batch: no points for {name}",
                hint="give an array with a leading dimension of points, e.g. shape (N, 2)",
            )
    counts = {len(a) for a in points.values()}
    if len(counts) != 1:
        raise GradcliError(
            "--batch: every input needs the same number of points",
            hint="give every array the same leading dimension N",
        )
    return counts.pop()


@dataclass
class Plan:
    """A batch's traced passes and what replays them at a chunk of points: small, and sent as
    it is to every worker of a cluster (``bound`` and the passes' functions, kept only where
    they were traced, are left out of what is sent)."""

    command: str
    output: str
    names: list[str]  # the program's inputs, in the tapes' order
    fixed: dict[str, np.ndarray]  # the values of the inputs the points leave out
    dtypes: dict[str, np.dtype]  # of every input given points
    dtype: type  # the floating type
    passes: list[Pass]
    layout: Layout  # how the passes' outputs fold into each point's results
    chunk: int  # the most points one replay takes
    bound: Bound | None = None

    @property
    def targets(self) -> list[str]:
        return self.layout.targets

    def replay(self, points: dict[str, np.ndarray], first: int = 0) -> Sections:
        """The results at a chunk of points (arrays with a leading point dimension), the
        chunk's first point numbered ``first`` in what errors say."""
        arrays = [
            self._points(n, points[n], first) if n in points else self.fixed[n] for n in self.names
        ]
        batched = [n in points for n in self.names]
        size = len(next(iter(points.values())))
        outputs = [p.replay(arrays, batched, size, self.bound, first) for p in self.passes]
        return self.layout.fold(outputs)

    def _points(self, name: str, values: np.ndarray, first: int) -> np.ndarray:
        """A chunk of an input's points, in its dtype (an integer input's whole numbers)."""
        dtype = self.dtypes[name]
        if dtype.kind == "f":
            return np.asarray(values, dtype=self.dtype)
        try:
            return integer_input(name, values, dtype)
        except GradcliError:  # say which point: the first that is refused alone
            for i, point in enumerate(values):
                with at_point(first + i):
                    integer_input(name, point, dtype)
            raise

    def results(self, first: int, sections: Sections) -> Points:
        return Points(command=self.command, output=self.output, first=first, sections=sections)

    def sent(self) -> Plan:
        """The plan as a worker gets it: without what only the tracing process holds."""
        passes = [dataclasses.replace(p, function=None) for p in self.passes]
        return dataclasses.replace(self, bound=None, passes=passes)


def plan(
    bound: Bound,
    command: str,
    points: dict[str, np.ndarray],
    of: str | None = None,
    v: np.ndarray | None = None,
    wrt: list[str] | None = None,
    chunk: int = CHUNK,
    settings: Settings | None = None,
) -> Plan:
    """Check the points against the program, and trace the command's passes at the bound
    point (``batch_passes``).

    ``wrt`` names inputs only: an intermediate node has no value of its own at each point.
    """
    settings = settings or Settings()
    count(points)
    for name in points:
        if name not in bound.arrays:
            raise GradcliError(
                f"--batch gives points for {name!r}, which is not an input of the program",
                hint=_inputs_are(list(bound.arrays)),
            )
    for name, array in points.items():
        if array.shape[1:] != bound.arrays[name].shape:
            raise GradcliError(
                f"--batch: the points of {name} have shape {array.shape[1:]}, "
                f"but {name} has shape {bound.arrays[name].shape}",
                hint=f"give an array of shape (N, {', '.join(map(str, bound.arrays[name].shape))})",
            )
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    if wrt is not None and any(t not in bound.arrays for t in wrt):
        raise GradcliError(
            "--batch: --wrt must name inputs of the program",
            hint=f"its inputs are {listing(bound.arrays)}",
        )
    if command == "hvp":
        targets = hvp_targets(bound, settings.vectors, wrt)
    else:
        targets = [] if command in ("eval", "jvp") else _targets(bound, wrt)
    if command in ("grad", "vjp") and v is None and out.numel() != 1:  # before the tracing
        raise gc.ScalarOutputError("grad can be implicitly created only for scalar outputs")
    if v is not None:
        _cotangent(v, out, name, bound.dtype)  # the shape must match the output's
    settings = check_settings(bound, command, name, out, targets, settings)
    steps, layout = passes(bound, command, name, out, targets, v, settings)
    rows = max(p.rows() for p in steps)
    for p in steps:  # a chunk's rows fit --max-elements, and its values the budget
        most = batch_size(p.tape, limits.current().max_elements) or chunk * rows
        chunk = min(
            chunk, max(1, most // p.rows()), budget.elements_within(p.tape.elements * p.rows())
        )
    # and so does its results' JSON text
    results = out.numel() + sum(int(np.prod(s)) for s in layout.shapes.values()) * max(rows, 1)
    as_text = budget.RENDERING_BYTES["json"] / budget.ELEMENT_BYTES
    chunk = min(chunk, budget.elements_within(results, as_text))
    return Plan(
        command=command,
        output=name,
        names=list(bound.arrays),
        fixed={n: a for n, a in bound.arrays.items() if n not in points},
        dtypes={n: bound.arrays[n].dtype for n in points},
        dtype=bound.dtype,
        passes=steps,
        layout=layout,
        chunk=chunk,
        bound=bound,
    )


def run(
    bound: Bound,
    command: str,
    points: dict[str, np.ndarray],
    of: str | None = None,
    v: np.ndarray | None = None,
    wrt: list[str] | None = None,
    chunk: int = CHUNK,
    settings: Settings | None = None,
) -> Iterator[Points]:
    """The command at every point, one ``Points`` per chunk of points (see ``plan``)."""
    total = count(points)
    steps = plan(bound, command, points, of, v, wrt, chunk, settings)
    for start in range(0, total, steps.chunk):
        budget.tick(f"{start:,} of {total:,} points done")
        stop = min(start + steps.chunk, total)
        rows = {n: a[start:stop] for n, a in points.items()}
        yield steps.results(start, steps.replay(rows, start))


def check_out_path(path: str) -> None:
    """Fail before any work when --out cannot be written."""
    kind = storage_of(path)
    if kind == "zarr":
        from .stores.zarr import zarr

        zarr()  # the extra is installed, before any work
    elif kind == "parquet":
        from .stores.parquet import pyarrow

        pyarrow()
    if not (is_folder(path) or kind or path.endswith((".npy", ".npz"))):
        raise GradcliError(
            f"--out {path}: unknown file type",
            hint="use .npy, .npz, .zarr or .parquet, or DIR/ for a folder of .npy parts",
        )
    folder = Path(path.rstrip("/") or path).parent  # a folder's, or a Zarr store's, parent
    if not folder.is_dir():
        raise GradcliError(f"--out {path}: no such folder {folder}")


def refuse_out(path: str) -> None:
    """Refuse an --out that is one of the command's inputs (those read so far), or a folder
    gradcli may not replace (``files.refuse_folder``)."""
    refuse_input(path.rstrip("/") or path)
    if is_folder(path) or storage_of(path) == "zarr":
        refuse_folder(path)


def _arrays(chunk: Points) -> dict[str, np.ndarray]:
    """A chunk's results as --out names them: ``SECTION.NAME`` (``values.y``, ``grads.x``,
    ``jacobian.x``, ``hessian.x,w``, ``check.agree``)."""
    return {
        f"{section}.{k}": np.asarray(a)
        for section, arrays in chunk.sections.items()
        for k, a in arrays.items()
    }


def sections_of(arrays: dict[str, np.ndarray]) -> Sections:
    """``_arrays``' names read back into sections."""
    sections: Sections = {}
    for key, array in arrays.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, {})[name] = array
    return sections


def _npy_header(shape: tuple[int, ...], dtype: np.dtype, length: int = 0) -> bytes:
    """A .npy (version 1.0) header for an array of ``shape`` and ``dtype``, padded with spaces
    to a multiple of 64 bytes and to at least ``length``: a header written for the final
    shape can be rewritten in place for fewer points."""
    text = repr(
        {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )
    magic = b"\x93NUMPY\x01\x00"
    size = max(len(magic) + 2 + len(text) + 1, length)
    size += -size % 64
    padded = text.ljust(size - len(magic) - 2 - 1) + "\n"
    return magic + (len(padded)).to_bytes(2, "little") + padded.encode("latin-1")


def main_results(path: str, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What ``--out results.npy`` holds: the command's one result (the gradient, the
    Jacobian, ...; the values, for eval); several are refused, for a .npz."""
    main = [k for k in arrays if not k.startswith("values.")] or list(arrays)
    if len(main) != 1:
        raise GradcliError(
            f"--out {path}: there are {len(main)} results ({', '.join(main)})",
            hint="write them all with --out results.npz",
        )
    return {main[0]: arrays[main[0]]}


def zip_parts(target: str, parts: dict[str, str]) -> None:
    """A .npz archive of .npy files, one member a result (each read from its file in blocks)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for key, path in parts.items():
            z.write(path, f"{key}.npy")


@dataclass
class _Part:
    """One result of --out, as a .npy file being written."""

    path: str
    file: BinaryIO
    dtype: np.dtype
    row: tuple[int, ...]  # the shape of one point's result
    header: int  # the length of its header, kept when it is rewritten


class OutFile:
    """--out written chunk by chunk, so that memory stays bounded by the chunk whatever the
    number of points: each result is a .npy whose header holds its final shape, its rows
    appended as they come (``.npz``: one such file a result, put into the archive one at a
    time at the end). Closed early (Ctrl-C, --timeout), it holds the points done."""

    def __init__(self, path: str, total: int):
        self.path, self.total, self.done = path, total, 0
        self.parts: dict[str, _Part] = {}
        # the file is written under a temporary name, renamed onto --out when it is complete
        self.output = contextlib.ExitStack()
        self.target = path

    def _open(self, arrays: dict[str, np.ndarray]) -> None:
        if not self.path.endswith(".npz"):
            arrays = main_results(self.path, arrays)
        self.target = self.output.enter_context(atomic_output(self.path))
        folder = os.path.dirname(os.path.abspath(self.target))
        for key, array in arrays.items():
            if self.path.endswith(".npz"):
                handle, path = tempfile.mkstemp(".npy", ".gradcli-", folder)
                file = os.fdopen(handle, "wb")
            else:
                path, file = self.target, open(self.target, "wb")  # noqa: SIM115 - see close()
            header = _npy_header((self.total, *array.shape[1:]), array.dtype)
            self.parts[key] = _Part(path, file, array.dtype, array.shape[1:], len(header))
            file.write(header)

    def write(self, chunk: Points) -> None:
        """Append the chunk's points to every result."""
        arrays = _arrays(chunk)
        try:
            if not self.parts:
                self._open(arrays)
            for key, part in self.parts.items():
                np.ascontiguousarray(arrays[key], dtype=part.dtype).tofile(part.file)
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        self.done += len(next(iter(arrays.values())))

    def close(self) -> None:
        """Finish the file: its arrays hold the points written (all of them, unless the
        batch stopped early)."""
        try:
            for part in self.parts.values():
                if self.done < self.total:  # the header says how many points there are
                    part.file.seek(0)
                    part.file.write(_npy_header((self.done, *part.row), part.dtype, part.header))
                    rows = self.done * math.prod(part.row) * part.dtype.itemsize
                    part.file.truncate(part.header + rows)
                part.file.close()
            if self.path.endswith(".npz") and self.parts:
                zip_parts(self.target, {key: part.path for key, part in self.parts.items()})
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        self.discard(keep=True)
        self.output.close()  # the file complete: renamed onto --out

    def discard(self, keep: bool = False) -> None:
        """Close and remove the parts of a .npz (and, unless ``keep``, the file half written,
        leaving --out as it was)."""
        for part in self.parts.values():
            with contextlib.suppress(OSError):  # a full disk fails the flush of the close too
                part.file.close()
            if part.path != self.target:
                with contextlib.suppress(OSError):
                    os.remove(part.path)
        self.parts = {}
        if not keep:
            abandoned = GradcliError(f"--out {self.path}: not written")
            self.output.__exit__(GradcliError, abandoned, None)  # removes the temporary file


class Interrupted(Exception):
    """Ctrl-C stopped a batch; ``done`` points had been written (or saved)."""

    def __init__(self, done: int, total: int, out: str | None):
        super().__init__(done)
        self.done, self.total, self.out = done, total, out

    def message(self) -> str:
        where = "" if self.out is None else f" to {self.out}"
        return f"interrupted: wrote {self.done} of {self.total} points{where}"


class Disagreed(Exception):
    """check's methods disagreed at the ``points`` named (the batch ran to its end)."""

    def __init__(self, points: list[int], total: int):
        super().__init__(points)
        self.points, self.total = points, total

    def message(self) -> str:
        shown = ", ".join(map(str, self.points[:10])) + (", ..." if len(self.points) > 10 else "")
        return (
            f"check: the methods disagree at {len(self.points)} of {self.total} points "
            f"({shown}): see check.agree and check.max_error of each"
        )


def disagreeing(first: int, sections: Sections) -> list[int]:
    """The numbers of the points of a chunk (from ``first``) where check's methods disagree."""
    agree = sections.get("check", {}).get("agree")
    return [] if agree is None else (first + np.flatnonzero(~np.asarray(agree))).tolist()


@contextmanager
def _deferred_interrupts():
    """Ctrl-C while a chunk is written waits until its last line is out, so the output never
    ends inside a line. A first Ctrl-C lets the chunk under way finish; a second one stops the
    computation at once. Yields a function that tells whether Ctrl-C was pressed."""
    state = {"presses": 0, "writing": False}

    def handler(signum, frame):
        state["presses"] += 1
        if state["presses"] > 1 and not state["writing"]:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield state  # signals reach the main thread only: nothing to defer
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


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

    stdout = stdout or sys.stdout
    total = count(points)
    writer: Any = None  # OutFile, or cluster.FolderOut
    if out is not None and (is_folder(out) or storage_of(out)):
        from .dask import FolderOut, block_rows

        writer = FolderOut(out, total, block_rows(points))
    elif out is not None:
        writer = OutFile(out, total)
    done = 0
    disagree: list[int] = []
    with _deferred_interrupts() as state, Progress(total, "points", total > CHUNK) as progress:
        try:
            for chunk in run(bound, command, points, of, v, wrt, settings=settings):
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
        except budget.TimedOut as exc:  # what was written stays, and is said
            if writer is not None:
                writer.close()
            where = "" if out is None else f" to {out}"
            raise budget.TimedOut(
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
