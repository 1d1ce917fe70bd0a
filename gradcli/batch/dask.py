"""``--batch ... --dask ADDRESS``: the batch's chunks replayed on a Dask cluster.

The command's pass is traced once here (``batch.plan``) and the plan (the tape, the values of
the inputs the points leave out) is sent once to every worker. Each chunk is a task that
reads its points where they live (a .npy file or a folder of .npy parts on a file system the
workers share, read by the worker; points read from stdin or a .csv go with the task),
replays the plan, and writes its results where they go: into the ``--out`` file at the
chunk's rows, or into the ``--out`` folder as one part per chunk, or back here for JSON lines,
which are written in the points' order. Progress goes to stderr. Ctrl-C, --timeout and a
failure keep what a batch in one process keeps (``stream.py``): whole lines, or an ``--out``
holding the points done (the chunks done from the first on).

``dask[distributed]`` is an optional extra: ``pip install 'gradcli[dask]'``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..base import bounds
from ..base.errors import GradcliError, optional_module
from ..commands.compute import Bound
from .ending import Disagreed, Interrupted, deferred_interrupts, disagreeing
from .out import TASKS, NpySink, block_rows, chunked_out, out_arrays, sections_of
from .passes import Settings
from .plan import Plan, count, plan
from .stores.base import Stored, storage_of
from .stores.chunked import chunks

SHARED = (
    "the workers read the points and write --out by their paths: give paths on a file system "
    "every worker sees"
)


def _distributed() -> Any:
    missing = "--dask needs Dask's distributed scheduler, which is not installed"
    return optional_module("distributed", missing, "dask")


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


#: The environment of a local cluster's workers: numpy's libraries held to one thread (the
#: worker's own), and each chunk's arrays allocated from the heap. Dask's nanny sets
#: MALLOC_TRIM_THRESHOLD_ small for its workers, which turns off glibc's adaptive mmap
#: threshold: each chunk's arrays (a megabyte or so) are then mapped and faulted in afresh, and
#: a replay takes two to four times as long; arrays up to 64 MB come from the heap instead, as
#: in one process.
WORKER_ENVIRONMENT = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MALLOC_TRIM_THRESHOLD_": str(1 << 28),
    "MALLOC_MMAP_THRESHOLD_": str(1 << 26),
}

#: What a worker imports, once, in the fork server its processes are forked from: the main
#: module (which a new worker would otherwise run again), Dask's worker and this module.
WORKER_MODULES = ["__main__", "distributed", "distributed.nanny", __name__]


def start_method() -> str:
    """How a local cluster's worker processes start: forked from a fork server on Linux (a
    worker then starts in milliseconds, not the half second of importing Dask, numpy and
    gradcli anew), else started afresh (``spawn``, Dask's default)."""
    import multiprocessing

    forks = sys.platform == "linux" and "forkserver" in multiprocessing.get_all_start_methods()
    return "forkserver" if forks else "spawn"


def start_fork_server() -> None:
    """Start the fork server of ``local:N``'s workers now, so that it imports their modules
    while this process traces the program; nothing where workers are spawned. It starts with
    ``WORKER_ENVIRONMENT``, which the workers forked from it inherit."""
    if start_method() != "forkserver":
        return
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(WORKER_MODULES)
    saved = {k: os.environ.get(k) for k in WORKER_ENVIRONMENT}
    os.environ.update(WORKER_ENVIRONMENT)
    try:
        forkserver.ensure_running()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


#: Dask's periodic work, made rarer on a local cluster: the event loops' check for blocking
#: (every 20 ms), the memory monitors of workers and nannies (every 100 ms), the system
#: monitor (every 500 ms) and work stealing (every 100 ms; the tasks are queued at the
#: scheduler and handed to the workers that are free). Idle, a 2-worker cluster then uses
#: about a fifth of the CPU time: 0.6 % of a core in the command and 0.2 % in each worker,
#: against 2.8 % and 1.7 %, taken from the replays.
QUIETER = {
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.scheduler.work-stealing": False,
    "distributed.worker.profile.enabled": False,  # the workers' sampling profiler (every 10 ms)
}


def local_cluster(workers: int) -> Any:
    """A ``LocalCluster`` of ``workers`` processes of one thread each, on free ports, quiet,
    without a dashboard, and with as little periodic work as Dask allows (``QUIETER``)."""
    distributed = _distributed()  # first: it names the extra where Dask is not installed
    import dask

    start_fork_server()
    prefix = "distributed.nanny.pre-spawn-environ"
    settings: dict[str, Any] = {f"{prefix}.{k}": v for k, v in WORKER_ENVIRONMENT.items()}
    settings["distributed.worker.multiprocessing-method"] = start_method()
    settings.update(QUIETER)
    with dask.config.set(settings):
        return distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # its HTTP server (health, metrics) on a free port,
            scheduler_kwargs={"dashboard": False},  # without the dashboard (bokeh's import)
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


def replay_chunk(
    steps: Plan, index: int, start: int, rows: dict[str, _Rows], sink: NpySink | None
) -> Any:
    """A worker's task: the chunk's points read, replayed, written (or returned). An error of
    the user's kind comes back as ``("error", message, hint)``."""
    try:
        points = {n: r.read() for n, r in rows.items()}
        size = len(next(iter(points.values())))
        pieces = [  # replayed a chunk at a time, as in one process: small arrays are faster
            out_arrays(
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


#: About how many tasks each worker gets: enough that the last ones, on which the others may
#: wait, are a small part of its share; few enough that a task's own cost (a millisecond or
#: two of scheduling) stays small beside its replays.
TASKS_A_WORKER = 8


def task_rows(total: int, workers: int, chunk: int) -> int:
    """The points of a task: a whole number of replays' chunks, from one to ``TASKS``, about
    ``TASKS_A_WORKER`` tasks for each worker."""
    share = -(-total // (workers * TASKS_A_WORKER))
    return chunk * min(TASKS, max(1, -(-share // chunk)))


@dataclasses.dataclass
class Written:
    """What a worker that wrote its chunk into --out says: how many points, and at which of
    them check's methods disagreed."""

    done: int
    disagree: list[int]


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
    order, or arrays to ``out``. Returns the number of points (see ``stream.stream``)."""
    from ..base.notice import Progress
    from ..render import render

    stdout = stdout or sys.stdout
    total = count(points)
    if address.startswith("local:"):  # its workers' imports, while the program is traced
        start_fork_server()
    steps = plan(bound, command, points, of, v, wrt, settings=settings)
    if any(p.tape.dynamic for p in steps.passes):
        raise GradcliError(
            "--dask: the program's shapes follow the values of each point (a mask such as "
            "x[x > 0]), so its pass is traced anew at each point, which only one process does",
            hint="leave out --dask",
        )
    rows = block_rows(points) or TASKS * steps.chunk
    aligned = out is not None and storage_of(out) == "zarr"  # each task writes whole chunks
    first = out_arrays(steps.results(0, steps.replay({n: a[:1] for n, a in points.items()})))
    writer = None if out is None else chunked_out(out, total, first, rows)
    sent = steps.sent()
    done = parts = 0
    disagree: list[int] = []
    with contextlib.ExitStack() as stack:
        if writer is not None:  # its scratch files go, however the batch ends
            stack.callback(writer.discard)
        connection = stack.enter_context(client(address))
        distributed = _distributed()
        state = stack.enter_context(deferred_interrupts())
        shared = connection.scatter(sent, broadcast=True, hash=False)
        workers = max(1, len(connection.scheduler_info().get("workers", {})))
        size = task_rows(total, workers, steps.chunk)
        spans = chunks(points, total, size, rows if aligned else None)
        progress = stack.enter_context(Progress(total, "points", len(spans) > 1))
        window = 2 * workers + 2
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
                bounds.tick(f"{done:,} of {total:,} points done")
        except KeyboardInterrupt:
            stop()
            if writer is not None:
                writer.close(done, parts)
            raise Interrupted(done, total, out) from None
        except bounds.TimedOut as exc:
            stop()
            if writer is not None:
                writer.close(done, parts)
            where = "" if out is None else f" to {out}"
            raise bounds.TimedOut(
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
