"""Batch mode: one command at many points, through one traced pass replayed in chunks.

The command's computation (the program, and for grad/vjp its backward pass) is traced once
at the bound point into a tape (``engine.compile``); each chunk of points then goes through
one batched replay, so memory stays bounded by the chunk size for any number of points.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError, listing
from ..commands.compute import (
    Bound,
    _cotangent,
    _inputs_are,
    integer_input,
    output_of,
)
from ..commands.table import entry
from ..engine.compile import batch_size
from ..lang.values import json_numbers, load_json, open_archive, parse_value, read_data
from ..ops import library as gc
from ..results import Points
from .passes import Batching, Layout, Output, Pass, Sections, Settings, at_point, passes
from .stores.base import storage_of
from .stores.chunked import NpyRows
from .stores.open import read_stored

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
    bounds.check_elements(text.count(",") + text.count("\n") + 1, "--batch -")
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
    chunk: int  # the points one replay takes
    bound: Bound | None = None
    # the most points one replay may take within the bounds (--max-elements, the budget)
    most: int | None = None

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
        passes = [dataclasses.replace(p, function=None, specialised={}) for p in self.passes]
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
    point (``passes.py``).

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
    batching = entry(command).batching()
    traced = _traced_once(bound, command, batching, of, v, wrt, settings)
    if traced is None:
        traced = _run_then_traced(bound, command, batching, of, v, wrt, settings)
    steps, layout, output = traced
    out = output.out
    assert output.name is not None and out is not None
    rows = max(p.rows() for p in steps)
    # the most points the bounds let a replay take: its results' JSON text fits the budget,
    results = out.numel() + sum(int(np.prod(s)) for s in layout.shapes.values()) * max(rows, 1)
    fits = bounds.elements_within(results, bounds.RENDERING_BYTES["json"] / bounds.ELEMENT_BYTES)
    for p in steps:  # and its rows --max-elements, and its values the budget
        most = batch_size(p.tape, bounds.limits().max_elements)
        fits = min(fits, bounds.elements_within(p.tape.elements * p.rows()))
        if most is not None:
            fits = min(fits, max(1, most // p.rows()))
    return Plan(
        command=command,
        output=output.name,
        names=list(bound.arrays),
        fixed={n: a for n, a in bound.arrays.items() if n not in points},
        dtypes={n: bound.arrays[n].dtype for n in points},
        dtype=bound.dtype,
        passes=steps,
        layout=layout,
        chunk=min(chunk, fits),
        bound=bound,
        most=fits,
    )


Traced = tuple[list[Pass], Layout, Output]


def _refusals(bound: Bound, command: str, batching: Batching, v, wrt, settings: Settings):
    """``check(name, out)``: what the command refuses once the program's output is known
    (``wrt``: checked first, as it reads no output); and the targets."""
    targets = _targets_of(bound, batching, wrt, settings)
    return _checker(bound, command, batching, v, targets, settings, batching.settle), targets


def _targets_of(bound: Bound, batching: Batching, wrt, settings: Settings) -> list[str]:
    if wrt is not None and any(t not in bound.arrays for t in wrt):
        raise GradcliError(
            "--batch: --wrt must name inputs of the program",
            hint=f"its inputs are {listing(bound.arrays)}",
        )
    return batching.targets(bound, wrt, settings)


def _checker(bound: Bound, command: str, batching: Batching, v, targets, settings, settle):
    """``check(name, out)`` of ``_refusals``, the command's own checks by ``settle``."""

    def check(name: str, out: gc.Tensor) -> Settings:
        if batching.implicit_v and v is None and out.numel() != 1:  # before the tracing
            raise gc.ScalarOutputError("grad can be implicitly created only for scalar outputs")
        if v is not None:
            _cotangent(v, out, name, bound.dtype)  # the shape must match the output's
        return settle(bound, command, name, out, targets, settings)

    return check


def _run_then_traced(
    bound: Bound, command: str, batching: Batching, of, v, wrt, settings: Settings
) -> Traced:
    """The program run at the bound point, its output checked, then the passes traced."""
    env = bound.run(bound.leaves())
    name, out = output_of(bound, env, of)
    check, targets = _refusals(bound, command, batching, v, wrt, settings)
    settings = check(name, out)
    output = Output(bound, of, name, out)
    steps, layout = passes(bound, command, batching, output, targets, v, settings)
    return steps, layout, output


def _traced_once(
    bound: Bound, command: str, batching: Batching, of, v, wrt, settings: Settings
) -> Traced | None:
    """The passes traced with the program run once, in the first pass, its output checked
    there before the pass goes on (``passes.Output``); None where that cannot be, or where
    anything is refused, for ``_run_then_traced`` to say it as ever: every check runs, in
    another order, and the warnings of the runs (``bound.log``) are as they were before."""
    if not batching.once:
        return None
    log = bound.log
    kept = (list(log.notes), list(log.nonfinite), dict(log.origins))
    try:
        if bound.program.writes:  # as a plain run's leaves refuse them
            bound.program.check_writes(bound.leaves())
        targets = _targets_of(bound, batching, wrt, settings)
        early = batching.early(bound, targets, settings)
        # the output's checks (jvp's tangents, hvp's vectors: settled by ``early`` already)
        refuses = batching.refuses or batching.settle
        settled = settings if batching.refuses is None else early
        check = _checker(bound, command, batching, v, targets, settled, refuses)
        output = Output(bound, of, check=check)
        steps, layout = passes(bound, command, batching, output, targets, v, early)
    except Exception:  # noqa: BLE001 - said again the long way, in its order
        log.notes[:], log.nonfinite[:] = kept[0], kept[1]
        log.origins.clear()
        log.origins.update(kept[2])
        return None
    return steps, layout, output


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
    for start, stop in spans(total, steps.chunk, steps.most):
        bounds.tick(f"{start:,} of {total:,} points done")
        rows = {n: a[start:stop] for n, a in points.items()}
        yield steps.results(start, steps.replay(rows, start))


def spans(total: int, chunk: int, most: int | None = None) -> list[tuple[int, int]]:
    """The chunks of ``total`` points, (start, stop) each: ``chunk`` points a chunk, but the
    points left after the last whole chunk, when fewer than a quarter of one, go with it where
    the bounds allow (``most``: 10,000 points are one replay, not 8,192 and 1,808; a replay
    has some 30 µs of fixed cost, a quarter chunk's points about that)."""
    starts = list(range(0, total, chunk))
    left = total - starts[-1] if starts else 0
    if len(starts) > 1 and left < chunk // 4 and most is not None and chunk + left <= most:
        starts.pop()
    return list(zip(starts, [*starts[1:], total]))
