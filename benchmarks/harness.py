"""Shared machinery for the benchmark suites: timing, checking, machine facts, table and JSON.

Timing follows one rule everywhere (:func:`cpu_times`), made to hold on a shared, busy
machine: the implementations of one benchmark are warmed up once each, then timed in
interleaved rounds (each round calls every implementation, the fast ones several times, for
about ``round_seconds`` each), and what is counted is CPU time, of this process and of the
processes it waited for (``resource.getrusage``), not the wall clock: time the machine gave to
other work is not counted. Each implementation's figure is the median of its rounds, with the
lowest and highest round beside it; a ratio is the median of the rounds' ratios (the two
implementations of a round ran at the same moments), with its spread. Every library is held to
one thread (``benchmarks/__init__.py``), so that CPU time is the time of one core. The garbage
collector stays on, as a user would have it, but is emptied before each implementation's turn.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import importlib
import importlib.metadata
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Timing:
    """How to time: ``rounds`` rounds, each giving every implementation ``round_seconds``.

    ``--quick`` sets ``once_over``: an implementation whose first call took more CPU seconds than
    that is timed once (one call, no spread) rather than in every round; and where the suite
    passes on the CPU time of the call it made to check an output (``first_calls``), that call
    is the warm-up, not another (``cpu_times``).
    """

    rounds: int
    round_seconds: float
    once_over: float | None = None


#: The default timing, and the one for ``--quick`` (3 rounds: a median and a spread still;
#: a call over half a second of CPU is timed once, so that every suite's quick run together
#: takes about a minute of CPU time).
FULL = Timing(rounds=7, round_seconds=0.15)
QUICK = Timing(rounds=3, round_seconds=0.02, once_over=0.5)

#: For benchmarks that start processes (a fraction of a second to seconds a call): a warm-up,
#: then 7 (3 with ``--quick``) interleaved rounds of one call each; in-process functions timed
#: in the same rounds still get several calls a round. With ``--quick``, a process over half a
#: second (one that imports torch, or sympy) is measured once, by its first run.
PROCESS_FULL = Timing(rounds=7, round_seconds=0.15)
PROCESS_QUICK = Timing(rounds=3, round_seconds=0.01, once_over=0.5)

#: ``--quick`` for rows where one measurement answers the question (does a refusal come
#: within a second?): every implementation timed once, a process by its first run.
ONCE = Timing(rounds=1, round_seconds=0.0, once_over=0.0)

#: What ``--quick`` left out, each a line saying what and how to run it (``quick_skip``);
#: printed at the end of the run by ``python -m benchmarks``.
QUICK_SKIPS: list[str] = []


def quick_skip(suite: str, what: str, how: str = "") -> None:
    """Note that ``--quick`` does not run ``what`` of ``suite``, and how to run it."""
    how = how or f"`python -m benchmarks {suite}` (without --quick) runs it"
    QUICK_SKIPS.append(f"{suite}: {what}; {how}")


@dataclass(frozen=True)
class Figure:
    """One implementation's CPU time a call: the median of its rounds, the lowest and highest
    round, each round's (in the order run, for ratios round by round) and the calls timed."""

    median: float
    low: float
    high: float
    rounds: tuple[float, ...]
    calls: int

    @classmethod
    def of(cls, rounds: Sequence[float], calls: int) -> Figure:
        return cls(statistics.median(rounds), min(rounds), max(rounds), tuple(rounds), calls)


@dataclass
class Result:
    """One row: the CPU time of one implementation on one benchmark, against its baseline."""

    suite: str
    benchmark: str
    implementation: str
    median_ms: float
    low_ms: float
    high_ms: float
    repeats: int
    baseline: str
    rounds_ms: tuple[float, ...] = ()
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    target: float | None = None
    status: str = ""
    target_ms: float | None = None  # an absolute target, where the issue states one
    # "wall" for the rows whose point is time saved by running in parallel, "estimate" for an
    # estimate of the wall clock on a quiet machine (``quiet_wall``)
    clock: str = "cpu"


def results_of(
    suite: str, benchmark: str, times: Mapping[str, Figure], baseline: str
) -> list[Result]:
    """A row for each implementation's figure."""
    return [
        Result(
            suite,
            benchmark,
            name,
            f.median * 1e3,
            f.low * 1e3,
            f.high * 1e3,
            f.calls,
            baseline,
            tuple(r * 1e3 for r in f.rounds),
        )
        for name, f in times.items()
    ]


def single(
    suite: str, benchmark: str, name: str, seconds: float, baseline: str, clock: str = "cpu"
) -> Result:
    """A row of one measurement (a run too long to repeat): no spread."""
    ms = seconds * 1e3
    return Result(suite, benchmark, name, ms, ms, ms, 1, baseline, (ms,), clock=clock)


def optional_import(name: str) -> ModuleType | None:
    """``importlib.import_module(name)``, or None when it (or something it needs) is missing.
    torch is held to one thread, within operations and between them (``OMP_NUM_THREADS``,
    which ``benchmarks/__init__.py`` sets, holds only the first)."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    if name == "torch":
        one_thread_torch(module)
    return module


def one_thread_torch(torch: Any) -> None:
    """torch on one thread: ``set_num_threads(1)``, and ``set_num_interop_threads(1)``, which
    torch accepts only before its first parallel work (later it keeps what it has)."""
    torch.set_num_threads(1)
    if torch.get_num_interop_threads() != 1:
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(1)


def cpu_seconds() -> float:
    """CPU time (user and system) of this process and of the processes it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def first_calls(
    fns: Mapping[str, Callable[[], Any]], generation: int = 1
) -> tuple[dict[str, Any], dict[str, float]]:
    """Call each function once (to check what it returns): its value and its CPU seconds,
    which ``cpu_times`` can take as the warm-up (``Timing.once_over``). The garbage collector
    is emptied before each call up to ``generation`` (by default the young ones, where the last
    call's garbage is: cheap)."""
    values, seconds = {}, {}
    for name, fn in fns.items():
        gc.collect(generation)
        start = cpu_seconds()
        values[name] = fn()
        seconds[name] = cpu_seconds() - start
    return values, seconds


def cpu_times(
    fns: dict[str, Callable[[], Any]],
    timing: Timing,
    first: Mapping[str, float] | None = None,
    processes: Collection[str] = (),
) -> dict[str, Figure]:
    """Time each function in interleaved rounds: its CPU time a call, round by round.

    After one warm-up call each, every round calls each function ``round_seconds`` divided by its
    warm-up time times (at least once), so that a slow one costs one call a round. With
    ``timing.once_over`` set (``--quick``), ``first`` (the CPU seconds of a call each function
    has just made, ``first_calls``) stands for the warm-up of the functions it names, and a
    function whose warm-up took more than ``once_over`` seconds is timed once: in the first
    round, or, if it is one of ``processes`` (each call a whole process, as cold as the next),
    by its warm-up, and not called again. Before each turn the garbage collector is emptied:
    fully, or with ``once_over`` in its young generations only, where the last turn's garbage
    is (a full collection walks every object of the libraries imported: 0.12 s a time once
    torch and sympy are, more than many a turn takes).
    """
    once = timing.once_over
    generation = 2 if once is None else 1
    warm_up = {name: s for name, s in (first or {}).items() if name in fns and once is not None}
    for name, fn in fns.items():
        if name not in warm_up:
            warm_up[name] = first_calls({name: fn}, generation)[1][name]
    calls = {name: max(1, int(timing.round_seconds / max(s, 1e-6))) for name, s in warm_up.items()}
    slow = {name for name in fns if once is not None and warm_up[name] > once}
    rounds: dict[str, list[float]] = {name: [] for name in fns}
    counted = slow.intersection(processes)
    rounds.update({name: [warm_up[name]] for name in counted})
    for index in range(timing.rounds):
        for name, fn in fns.items():
            if name in slow and (index or name in counted):
                continue
            gc.collect(generation)
            start = cpu_seconds()
            for _ in range(calls[name]):
                fn()
            rounds[name].append((cpu_seconds() - start) / calls[name])
    return {name: Figure.of(rounds[name], calls[name] * len(rounds[name])) for name in fns}


@dataclass
class TreeRun:
    """One run of a command and of the processes it started (``sample_tree``): its wall
    clock, each process's CPU seconds and role, and the samples they were read from, each
    (seconds since the start, {pid: CPU seconds so far})."""

    wall: float
    cpu: dict[int, float]
    roles: dict[int, str]
    samples: list[tuple[float, dict[int, float]]]

    def of(self, role: str) -> list[float]:
        """The CPU seconds of each process of ``role``, in the order they started."""
        return [self.cpu[pid] for pid in sorted(self.cpu) if self.roles[pid] == role]


def _role(process: Any, root: int) -> str:
    """What a process of a run is: the command itself, or one that it (or Dask's nannies, in
    it) started: multiprocessing's resource tracker or fork server, or a worker."""
    if process.pid == root:
        return "command"
    line = " ".join(process.cmdline())
    if "resource_tracker" in line:
        return "resource tracker"
    if "forkserver" in line and process.ppid() == root:
        return "fork server"
    return "worker"


def sample_tree(
    argv: Sequence[str | Path],
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    every: float = 0.02,
) -> TreeRun:
    """Run ``argv`` to completion (its output discarded), reading the CPU time of it and of
    every process under it every ``every`` seconds (``psutil``): what each process used, and
    when. A process's last ``every`` seconds before it ends may go uncounted."""
    import psutil

    full_env = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
    start = time.perf_counter()
    child = subprocess.Popen(
        [str(a) for a in argv], env=full_env, cwd=cwd, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    errors = b""

    def drain() -> None:  # stderr read on the side, so that the command never blocks on it
        nonlocal errors
        assert child.stderr is not None
        errors = child.stderr.read()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    root = psutil.Process(child.pid)
    cpu: dict[int, float] = {}
    roles: dict[int, str] = {}
    samples = []
    while child.poll() is None:
        with contextlib.suppress(psutil.Error):
            for process in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    times = process.cpu_times()
                    if process.pid not in roles:
                        roles[process.pid] = _role(process, child.pid)
                    cpu[process.pid] = max(cpu.get(process.pid, 0.0), times.user + times.system)
        samples.append((time.perf_counter() - start, dict(cpu)))
        time.sleep(every)
    wall = time.perf_counter() - start
    reader.join()
    if child.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, argv))} exited with {child.returncode}: "
            f"{errors.decode(errors='replace')[-2000:]}"
        )
    return TreeRun(wall, cpu, roles, samples)


def _packed(samples: Sequence[Mapping[int, float]], cores: int) -> float:
    """The wall clock of the work between successive samples on a quiet machine: each
    interval's work takes at least its total over the cores, and at least the longest any
    one process (one core at a time) worked in it; the intervals follow one another."""
    total = 0.0
    for before, now in zip(samples, samples[1:]):
        worked = [now[pid] - before.get(pid, 0.0) for pid in now]
        total += max(sum(worked) / cores, max(worked, default=0.0))
    return total


def quiet_wall(run: TreeRun, cores: int) -> float:
    """The wall clock a sampled run (``sample_tree``) would take on a quiet machine of
    ``cores`` cores, estimated from the CPU time its processes used (Amdahl's law).

    The run is cut where its workers do the work: before the first 1 % of their CPU time
    and after the last 1 %, its processes' work is packed interval by interval
    (``_packed``: start-up, tracing, the fork server's imports beside it; closing). In
    between, the workers run side by side: that part takes the busiest worker's CPU time,
    or, where it is more, the CPU time of every process then (the command's scheduling and
    gathering included) over the cores. Without workers, the run is packed whole.

    What the machine's other work took is not counted; work it spread out (a process kept
    waiting in one interval works in a later one) is counted as if it had to wait, so that
    the estimate errs long rather than short."""
    workers = [pid for pid, role in run.roles.items() if role == "worker"]
    cumulative = [{}, *(cpu for _, cpu in run.samples)]
    done = [sum(cpu.get(pid, 0.0) for pid in workers) for cpu in cumulative]
    if not done[-1]:
        return _packed(cumulative, cores)
    first = next(i for i, d in enumerate(done) if d >= 0.01 * done[-1]) - 1  # from before it
    last = next(i for i, d in enumerate(done) if d >= 0.99 * done[-1])
    start, end = cumulative[first], cumulative[last]
    worked = {pid: end.get(pid, 0.0) - start.get(pid, 0.0) for pid in end}
    side_by_side = max(max(worked[pid] for pid in workers), sum(worked.values()) / cores)
    before, after = _packed(cumulative[: first + 1], cores), _packed(cumulative[last:], cores)
    return before + side_by_side + after


def check_same(
    benchmark: str, outputs: dict[str, Sequence[np.ndarray]], reference: str, rtol: float
) -> None:
    """Raise AssertionError unless every implementation's outputs match ``reference``'s.

    Outputs are compared with ``np.allclose(rtol=rtol)`` and an absolute tolerance of ``rtol``
    times 1e-3 of the reference's largest magnitude, so that tiny values (a chain of products can
    make gradients of order 1e-188) are still compared relatively rather than passing trivially.
    """
    expected = [np.asarray(a, dtype=np.float64) for a in outputs[reference]]
    for name, got in outputs.items():
        if len(got) != len(expected):
            raise AssertionError(
                f"{benchmark}: {name} gave {len(got)} outputs, not {len(expected)}"
            )
        for index, (want, have) in enumerate(zip(expected, got, strict=True)):
            have = np.asarray(have, dtype=np.float64)
            atol = rtol * 1e-3 * float(np.max(np.abs(want), initial=0.0))
            if have.shape != want.shape or not np.allclose(have, want, rtol=rtol, atol=atol):
                worst = np.max(np.abs(have - want) / np.maximum(np.abs(want), atol or 1e-300))
                raise AssertionError(
                    f"{benchmark}: {name} disagrees with {reference} on output {index} "
                    f"(shape {have.shape} vs {want.shape}, worst relative error {worst:.3g})"
                )


def add_ratios(results: list[Result], subject: str, targets: dict[str, float]) -> list[Result]:
    """Fill each result's ratio to its baseline (the median of the rounds' ratios where both
    were timed in the same rounds, with their spread), and PASS/MISS for ``subject``."""
    base = {(r.benchmark, r.implementation): r for r in results}
    for r in results:
        b = base[(r.benchmark, r.baseline)]
        if len(r.rounds_ms) == len(b.rounds_ms) > 1:
            ratios = [mine / theirs for mine, theirs in zip(r.rounds_ms, b.rounds_ms, strict=True)]
            r.ratio, r.ratio_low, r.ratio_high = statistics.median(ratios), min(ratios), max(ratios)
        else:
            r.ratio = r.median_ms / b.median_ms
        if r.implementation == subject and r.benchmark in targets:
            r.target = targets[r.benchmark]
            r.status = "PASS" if r.ratio <= r.target else "MISS"
    return results


def add_absolute(results: list[Result], targets: Mapping[tuple[str, str], float]) -> list[Result]:
    """PASS/MISS against absolute targets in ms, keyed by (benchmark, implementation)."""
    for r in results:
        target = targets.get((r.benchmark, r.implementation))
        if target is not None:
            r.target_ms = target
            r.status = "PASS" if r.median_ms <= target else "MISS"
    return results


def python_script(name: str) -> Path:
    """A console script installed beside the running interpreter (the virtualenv's ``bin``)."""
    return Path(sys.executable).parent / name


@functools.cache
def shared_pycache() -> Path:
    """The directory of the compiled bytecode of every process the suites start, one for the
    whole run (removed at exit): with a prefix of its own, a process compiles every module it
    imports, numpy's and sympy's too (6 s of CPU for gradcli's), and this is done once a run,
    not once a suite."""
    path = Path(tempfile.mkdtemp(prefix="gradcli-bench-pycache-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def with_bytecode(pycache: str | Path | None = None) -> dict[str, str | None]:
    """Environment changes giving a process compiled bytecode, as an installed program has.

    Python then reads and writes ``.pyc`` files under ``pycache`` (``PYTHONPYCACHEPREFIX``;
    by default ``shared_pycache()``), never beside the sources, even where
    ``PYTHONDONTWRITEBYTECODE`` is set (it is removed): after a first, warm-up run nothing is
    compiled from source again.
    """
    where = shared_pycache() if pycache is None else pycache
    return {"PYTHONPYCACHEPREFIX": str(where), "PYTHONDONTWRITEBYTECODE": None}


def command(
    argv: Sequence[str | Path],
    env: Mapping[str, str | None] | None = None,
    cwd: str | Path | None = None,
    stdout_path: str | Path | None = None,
    exit_code: int = 0,
) -> Callable[[], str]:
    """A function that runs ``argv`` to completion and returns its standard output.

    ``env`` changes this process's environment for the command (a value of None removes the
    variable); with ``stdout_path`` the output goes to that file (truncated each call) and the
    function returns "". An exit other than ``exit_code`` raises RuntimeError with the
    command's standard error.
    """
    argv = [str(a) for a in argv]
    full_env = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value

    def run() -> str:
        if stdout_path is None:
            done = subprocess.run(argv, env=full_env, cwd=cwd, capture_output=True, text=True)
        else:
            with open(stdout_path, "w", encoding="utf-8") as out:
                done = subprocess.run(
                    argv, env=full_env, cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True
                )
        if done.returncode != exit_code:
            raise RuntimeError(
                f"{' '.join(argv)} exited with {done.returncode}: {done.stderr.strip()[-2000:]}"
            )
        return done.stdout or ""

    return run


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what ``platform`` says."""
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or "cpu"


def load_average() -> str | None:
    """The load average over 1, 5 and 15 minutes, where the system tells it."""
    if not hasattr(os, "getloadavg"):
        return None
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine_facts() -> dict[str, Any]:
    """Facts that decide the figures: versions, CPU count, BLAS set-up, thread pools."""
    facts: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "machine": f"{platform.node()}: {platform.machine()}, {_cpu_model()}",
        "threads": "1 per library (benchmarks/__init__.py); times are CPU time",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "numpy": np.__version__,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(not set)"),
    }
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        facts["numpy_blas"] = f"{blas.get('name')} {blas.get('version')}"
    except (KeyError, TypeError):  # show_config's layout differs between numpy versions
        facts["numpy_blas"] = None
    for dist in ("torch", "autograd", "jax"):
        facts[dist] = _version(dist)
    if facts["torch"] and "torch" in sys.modules:
        torch = sys.modules["torch"]
        facts["torch_threads"] = (
            f"{torch.get_num_threads()} (between operations {torch.get_num_interop_threads()})"
        )
    threadpoolctl = optional_import("threadpoolctl")
    if threadpoolctl is not None:
        facts["threadpools"] = [
            {k: info.get(k) for k in ("user_api", "internal_api", "version", "num_threads")}
            for info in threadpoolctl.threadpool_info()
        ]
    return facts


def print_facts(facts: dict[str, Any]) -> None:
    """Print the machine facts, one per line."""
    print("Machine")
    width = max(map(len, facts))
    for key, value in facts.items():
        if key == "threadpools":
            for pool in value:
                print(
                    f"  {'threadpool':<{width}}  " + ", ".join(f"{k}={v}" for k, v in pool.items())
                )
        elif value is not None:
            print(f"  {key:<{width}}  {value}")
    if "threadpools" not in facts:
        print(f"  {'threadpools':<{width}}  (threadpoolctl not installed)")


def _ms(value: float) -> str:
    return f"{value:.3f}" if value < 100 else f"{value:.1f}"


def _spread(low: float | None, high: float | None, text: Callable[[float], str]) -> str:
    return "" if low is None or high is None or low == high else f"{text(low)}-{text(high)}"


def print_table(results: Iterable[Result]) -> None:
    """Print the figures as an aligned table: benchmark, implementation, the median CPU ms a
    call and its rounds' spread, the ratio to the baseline and its spread, calls, target."""
    results = list(results)
    header = ("benchmark", "implementation", "ms", "rounds", "ratio", "rounds", "calls",
              "target", "")  # fmt: skip
    rows = [
        (
            f"{r.suite}.{r.benchmark}",
            r.implementation + (" (wall clock)" if r.clock == "wall" else ""),
            _ms(r.median_ms),
            _spread(r.low_ms, r.high_ms, _ms),
            "" if r.ratio is None else f"{r.ratio:.2f}x",
            _spread(r.ratio_low, r.ratio_high, lambda x: f"{x:.2f}"),
            str(r.repeats),
            f"<= {r.target:g}x"
            if r.target is not None
            else ("" if r.target_ms is None else f"<= {r.target_ms:g} ms"),
            r.status,
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    right = {2, 3, 4, 5, 6}  # numeric columns

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    print("CPU time a call, median of the rounds (the lowest and highest round beside it);")
    print("a ratio is the median of the rounds' ratios to the baseline (run in the same rounds)")
    print()
    print(line(header))
    print("  ".join("-" * w for w in widths).rstrip())
    previous = None
    for r, row in zip(results, rows, strict=True):
        if previous is not None and r.benchmark != previous:
            print()
        previous = r.benchmark
        print(line(row))


def write_json(path: str, facts: dict[str, Any], results: Iterable[Result], quick: bool) -> None:
    """Write the machine facts and every figure to ``path`` as JSON."""
    document = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "quick": quick,
        "machine": facts,
        "results": [asdict(r) for r in results],
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
