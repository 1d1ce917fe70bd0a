"""``--batch ... --dask ADDRESS``: the batch's chunks replayed on a Dask cluster.

The command's pass is traced once here (``batch.plan``) and the plan (the tape, the values of
the inputs the points leave out) is sent once to every worker. Each chunk is a task that
reads its points where they live (a .npy file or a folder of .npy parts on a file system the
workers share, read by the worker; points read from stdin or a .csv go with the task),
replays the plan, and writes its results where they go: into the ``--out`` file at the
chunk's rows, or into the ``--out`` folder as one part per chunk, or back here for JSON lines,
which are written in the points' order. Progress goes to stderr. Ctrl-C, --timeout and a
failure keep what the batch module keeps: whole lines, or an ``--out`` holding the points done
(the chunks done from the first on).

``dask[distributed]`` is an optional extra: ``pip install 'gradcli[dask]'``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..base import budget
from ..base.errors import GradcliError
from ..base.files import mark_output, refuse_input
from ..commands.compute import Bound
from .passes import Settings
from .plan import (
    Disagreed,
    Interrupted,
    Plan,
    _arrays,
    _deferred_interrupts,
    _npy_header,
    count,
    disagreeing,
    main_results,
    plan,
    sections_of,
    zip_parts,
)
from .stores.chunked import Stored, chunks, is_folder, out_target, replace_folder, storage_of

#: The chunks of points a task takes (each replayed on its own, as in one process): more
#: than one, so that a task's own cost (milliseconds of scheduling and transfer) is small
#: beside its work.
TASKS = 16

SHARED = (
    "the workers read the points and write --out by their paths: give paths on a file system "
    "every worker sees"
)


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise GradcliError(
            "--dask needs Dask's distributed scheduler, which is not installed",
            hint="pip install 'gradcli[dask]'",
        ) from None
    return distributed


@contextlib.contextmanager
def client(address: str) -> Iterator[Any]:
    """A client of the cluster at ``address`` (``tcp://host:8786``), or of a new
    ``LocalCluster`` of N worker processes (``local:N``), closed at the end."""
    distributed = _distributed()
    if address.startswith("local:"):
        try:
            workers = int(address[len("local:") :])
        except ValueError:
            workers = 0
        if not 1 <= workers <= 256:
            raise GradcliError(
                f"--dask {address}: local:N takes a number of workers from 1 to 256",
                hint="e.g. --dask local:2",
            )
        cluster = local_cluster(workers)
        with cluster, distributed.Client(cluster) as connection:
            yield connection
        return
    if "://" not in address:
        raise GradcliError(
            f"--dask {address}: not an address of a Dask scheduler",
            hint="give tcp://HOST:PORT (the scheduler's), or local:N for N local workers",
        )
    try:
        connection = distributed.Client(address, timeout=10)
    except (OSError, TimeoutError) as exc:
        raise GradcliError(
            f"--dask {address}: cannot reach the scheduler: {exc}",
            hint="start one with dask scheduler (and workers with dask worker ADDRESS)",
        ) from None
    with connection:
        yield connection


def local_cluster(workers: int) -> Any:
    """A ``LocalCluster`` of ``workers`` processes of one thread each, on free ports, quiet."""
    import dask

    distributed = _distributed()
    # Dask's nanny sets MALLOC_TRIM_THRESHOLD_ small for its workers, which turns off glibc's
    # adaptive mmap threshold: each chunk's arrays (a megabyte or so) are then mapped and
    # faulted in afresh, and a replay takes two to four times as long. Arrays up to 64 MB
    # come from the heap instead, as in one process.
    environment = {"MALLOC_TRIM_THRESHOLD_": str(1 << 28), "MALLOC_MMAP_THRESHOLD_": str(1 << 26)}
    prefix = "distributed.nanny.pre-spawn-environ"
    with dask.config.set({f"{prefix}.{k}": v for k, v in environment.items()}):
        return distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: 8787 may be taken
            silence_logs=logging.ERROR,
        )


# -- where a chunk's points come from -------------------------------------------------------


@dataclasses.dataclass
class _Rows:
    """A chunk of one input's points: read by the worker from files, or carried along."""

    source: Any  # Stored (paths only), or the chunk's array itself
    start: int
    stop: int

    def read(self) -> np.ndarray:
        if isinstance(self.source, Stored):
            return self.source[self.start : self.stop]
        return np.asarray(self.source)


def _rows(array: Any, start: int, stop: int) -> _Rows:
    if isinstance(array, Stored):
        return _Rows(array, start, stop)
    return _Rows(np.asarray(array[start:stop]), 0, stop - start)


# -- where a chunk's results go -------------------------------------------------------------


@dataclasses.dataclass
class _Sink:
    """Where workers write results: each result's .npy file (written at the chunk's rows), or
    a folder that gets a part per chunk for each result; None: back to the client."""

    files: dict[str, tuple[str, int, int]]  # result -> (path, header bytes, bytes per point)
    folder: str | None

    def write(self, index: int, start: int, results: dict[str, np.ndarray]) -> None:
        if self.folder is not None:
            for key, array in results.items():
                final = os.path.join(self.folder, key, f"part-{index:06d}.npy")
                partial = final + ".partial"
                with open(partial, "wb") as f:
                    np.save(f, np.ascontiguousarray(array))
                os.replace(partial, final)
            return
        for key, (path, header, row) in self.files.items():
            with open(path, "r+b") as f:
                f.seek(header + start * row)
                f.write(np.ascontiguousarray(results[key]).tobytes())


def replay_chunk(
    steps: Plan, index: int, start: int, rows: dict[str, _Rows], sink: _Sink | None
) -> Any:
    """A worker's task: the chunk's points read, replayed, written (or returned). An error of
    the user's kind comes back as ``("error", message, hint)``."""
    try:
        points = {n: r.read() for n, r in rows.items()}
        size = len(next(iter(points.values())))
        pieces = [  # replayed a chunk at a time, as in one process: small arrays are faster
            _arrays(
                steps.results(
                    start + i,
                    steps.replay({n: p[i : i + steps.chunk] for n, p in points.items()}, start + i),
                )
            )
            for i in range(0, size, steps.chunk)
        ]
        results = {k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]}
    except GradcliError as exc:
        return ("error", exc.message, exc.hint)
    except OSError as exc:  # the points, as the client named them, are not there
        return ("error", f"--dask: a worker cannot read the points: {exc}", SHARED)
    if sink is None:
        return results
    try:
        sink.write(index, start, results)
    except OSError as exc:
        return ("error", f"--dask: a worker cannot write --out: {exc}", SHARED)
    return Written(len(next(iter(results.values()))), disagreeing(start, sections_of(results)))


@dataclasses.dataclass
class Written:
    """What a worker that wrote its chunk into --out says: how many points, and at which of
    them check's methods disagreed."""

    done: int
    disagree: list[int]


class ChunkedOut:
    """--out written by the workers: ``.npy``/``.npz`` files made here with their final
    headers, filled at each chunk's rows, or a folder (``--out DIR/``) of parts, one per chunk
    and result (``DIR/grads.x/part-000000.npy``, ...). Everything is written under temporary
    names, renamed onto --out at the end; closed early, it holds the chunks done from the
    first on."""

    def __init__(self, path: str, total: int, first: dict[str, np.ndarray]):
        self.path, self.total = path, total
        self.is_folder = is_folder(path)
        refuse_input(path.rstrip("/") or path)
        keys = first if self.is_folder or path.endswith(".npz") else main_results(path, first)
        self.rows = {k: (first[k].shape[1:], first[k].dtype) for k in keys}
        self.target = out_target(path)
        parent = os.path.dirname(self.target)
        self.scratch = tempfile.mkdtemp(prefix=".gradcli-", suffix=".tmp", dir=parent)
        files = {}
        try:
            for key, (row, dtype) in self.rows.items():
                if self.is_folder:
                    os.mkdir(os.path.join(self.scratch, key))
                    continue
                part = os.path.join(self.scratch, f"{key}.npy")
                header = _npy_header((total, *row), dtype)
                point = int(np.prod(row, dtype=np.int64)) * dtype.itemsize
                with open(part, "wb") as f:
                    f.write(header)
                    f.truncate(len(header) + total * point)
                files[key] = (part, len(header), point)
        except OSError as exc:  # a full disk: nothing left behind
            self.discard()
            raise GradcliError(f"--out {path}: cannot write: {exc}") from None
        self.sink = _Sink(files, self.scratch if self.is_folder else None)

    def close(self, done: int, parts: int) -> None:
        """Finish --out with the first ``done`` points (the first ``parts`` chunks). What is
        kept is moved (or, stopped early, copied) out of the scratch folder, which is removed:
        a worker still busy with a cancelled task writes only there."""
        kept = tempfile.mkdtemp(prefix=".gradcli-", suffix=".tmp", dir=os.path.dirname(self.target))
        try:
            if self.is_folder:
                for key in self.rows:
                    os.mkdir(os.path.join(kept, key))
                    for name in os.listdir(os.path.join(self.scratch, key)):
                        if name.endswith(".npy") and int(name[5:11]) < parts:
                            os.replace(*(os.path.join(f, key, name) for f in (self.scratch, kept)))
                mark_output(kept, list(self.rows), done)
                replace_folder(kept, self.path)
                return
            paths = {}
            for key, (part, header, point) in self.sink.files.items():
                paths[key] = part
                if done < self.total:
                    paths[key] = os.path.join(kept, f"{key}.npy")
                    row, dtype = self.rows[key]
                    with open(part, "rb") as source, open(paths[key], "wb") as copy:
                        copy.write(_npy_header((done, *row), dtype))
                        source.seek(header)
                        _copy(source, copy, done * point)
            final = os.path.join(kept, "all.npz")
            if self.path.endswith(".npz"):
                zip_parts(final, paths)
            else:
                (final,) = paths.values()
            with open(final, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(final, self.target)
        except OSError as exc:
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        finally:
            shutil.rmtree(kept, ignore_errors=True)
            self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _copy(source: Any, target: Any, size: int) -> None:
    """The next ``size`` bytes of ``source`` written to ``target``, a block at a time."""
    while size > 0:
        block = source.read(min(size, 1 << 22))
        if not block:
            raise OSError(f"{source.name} is cut short")
        target.write(block)
        size -= len(block)


def stream(
    bound: Bound,
    command: str,
    points: dict[str, Any],
    of: str | None,
    v: np.ndarray | None,
    wrt: list[str] | None,
    out: str | None,
    address: str,
    stdout: Any = None,
    settings: Settings | None = None,
) -> int:
    """The batch on the cluster at ``address``: JSON lines to ``stdout`` in the points'
    order, or arrays to ``out``. Returns the number of points (see ``batch.stream``)."""
    import sys

    from ..base.notice import Progress
    from ..render import render

    stdout = stdout or sys.stdout
    total = count(points)
    steps = plan(bound, command, points, of, v, wrt, settings=settings)
    if any(p.tape.dynamic for p in steps.passes):
        raise GradcliError(
            "--dask: the program's shapes follow the values of each point (a mask such as "
            "x[x > 0]), so its pass is traced anew at each point, which only one process does",
            hint="leave out --dask",
        )
    rows = block_rows(points) or TASKS * steps.chunk
    aligned = out is not None and storage_of(out) == "zarr"  # each task writes whole chunks
    spans = chunks(points, total, TASKS * steps.chunk, rows if aligned else None)
    first = _arrays(steps.results(0, steps.replay({n: a[:1] for n, a in points.items()})))
    writer = None if out is None else chunked_out(out, total, first, rows)
    sent = steps.sent()
    done = parts = 0
    disagree: list[int] = []
    with contextlib.ExitStack() as stack:
        if writer is not None:  # its scratch files go, however the batch ends
            stack.callback(writer.discard)
        connection = stack.enter_context(client(address))
        distributed = _distributed()
        state = stack.enter_context(_deferred_interrupts())
        progress = stack.enter_context(Progress(total, "points", len(spans) > 1))
        shared = connection.scatter(sent, broadcast=True, hash=False)
        window = 2 * max(1, len(connection.scheduler_info().get("workers", {}))) + 2
        sink = None if writer is None else writer.sink
        running = distributed.as_completed()
        indices: dict[str, int] = {}  # a task's key -> its chunk
        finished: dict[int, Any] = {}
        following = 0

        def submit(index: int) -> None:
            first, last = spans[index]
            rows = {n: _rows(a, first, last) for n, a in points.items()}
            task = connection.submit(replay_chunk, shared, index, first, rows, sink, pure=False)
            indices[task.key] = index
            running.add(task)

        def stop() -> None:  # the tasks under way are cancelled before --out is closed
            pending = list(running.futures)
            running.clear()
            connection.cancel(pending, force=True)

        try:
            for following in range(min(window, len(spans))):
                submit(following)
            following = min(window, len(spans))
            for task in running:
                result = task.result()
                if isinstance(result, tuple):
                    raise GradcliError(result[1], hint=result[2])
                finished[indices.pop(task.key)] = result
                while parts in finished:  # in order: the chunks done from the first on
                    state["writing"] = True
                    chunk = finished.pop(parts)
                    if writer is None:
                        lines = steps.results(spans[parts][0], sections_of(chunk))
                        render(lines, "json", file=stdout)
                        stdout.flush()
                        disagree += disagreeing(lines.first, lines.sections)
                    else:
                        disagree += chunk.disagree
                    done, parts = spans[parts][1], parts + 1
                    state["writing"] = False
                    progress.update(done)
                if following < len(spans):
                    submit(following)
                    following += 1
                if state["presses"]:
                    raise KeyboardInterrupt
                budget.tick(f"{done:,} of {total:,} points done")
        except KeyboardInterrupt:
            stop()
            if writer is not None:
                writer.close(done, parts)
            raise Interrupted(done, total, out) from None
        except budget.TimedOut as exc:
            stop()
            if writer is not None:
                writer.close(done, parts)
            where = "" if out is None else f" to {out}"
            raise budget.TimedOut(
                f"{exc.message}: wrote {done} of {total} points{where}", hint=exc.hint
            ) from None
        except BaseException:
            stop()
            raise
        if writer is not None:
            writer.close(done, parts)
    if disagree:
        raise Disagreed(disagree, done)
    return done


def block_rows(points: dict[str, Any]) -> int | None:
    """The rows of a Zarr chunk of the points (of the first input in a Zarr store): the
    chunks of a Zarr --out along the points, which are then chunked like the input."""
    from .stores.zarr import ZarrRows

    return next((a.rows for a in points.values() if isinstance(a, ZarrRows)), None)


def chunked_out(path: str, total: int, first: dict[str, np.ndarray], rows: int) -> Any:
    """The --out that chunks are written into, in its format: a Zarr group, a Parquet file
    (both in blocks of ``rows`` points), or .npy, .npz, DIR/ (``ChunkedOut``)."""
    kind = storage_of(path)
    if kind == "zarr":
        from .stores.zarr import ZarrOut

        return ZarrOut(path, total, first, rows)
    if kind == "parquet":
        from .stores.parquet import ParquetOut

        return ParquetOut(path, total, first, rows)
    return ChunkedOut(path, total, first)


class FolderOut:
    """``--out DIR/``, ``.zarr`` or ``.parquet`` in one process: the chunks written as a
    cluster's workers write them. For Zarr and Parquet, the chunks are gathered into blocks
    of ``rows`` points (the points' Zarr chunks, else a cluster's task of ``TASKS`` chunks),
    so that the output is chunked as a cluster writes it, and Zarr's chunks written whole."""

    def __init__(self, path: str, total: int, rows: int | None = None):
        self.path, self.total, self.rows = path, total, rows
        self.out: Any = None  # ChunkedOut, ZarrOut or ParquetOut
        self.done = self.parts = 0
        self.gathers = storage_of(path) is not None
        self.pending: list[dict[str, np.ndarray]] = []
        self.waiting = 0  # the points pending

    def write(self, chunk: Any) -> None:
        arrays = _arrays(chunk)
        size = len(next(iter(arrays.values())))
        if self.out is None:  # cleans up after itself
            self.rows = self.rows or TASKS * size
            self.out = chunked_out(self.path, self.total, arrays, self.rows)
        if not self.gathers:
            self._put(arrays)
            return
        self.pending.append(arrays)
        self.waiting += size
        self._flush()

    def _flush(self, last: bool = False) -> None:
        """Write the pending points that fill a block (``last``: all of them)."""
        assert self.rows is not None
        while self.waiting and (last or self.waiting >= self.rows - self.done % self.rows):
            size = min(self.waiting, self.rows - self.done % self.rows)
            pending = {k: np.concatenate([p[k] for p in self.pending]) for k in self.pending[0]}
            self._put({k: a[:size] for k, a in pending.items()})
            self.waiting -= size
            self.pending = [{k: a[size:] for k, a in pending.items()}] if self.waiting else []

    def _put(self, arrays: dict[str, np.ndarray]) -> None:
        try:
            self.out.sink.write(self.parts, self.done, arrays)
        except OSError as exc:
            self.discard()
            raise GradcliError(f"--out {self.path}: cannot write: {exc}") from None
        self.parts += 1
        self.done += len(next(iter(arrays.values())))

    def close(self) -> None:
        if self.out is not None:
            self._flush(last=True)
            self.out.close(self.done, self.parts)

    def discard(self) -> None:
        if self.out is not None:
            self.out.discard()
