"""Dask benchmarks: ``--batch ... --dask local:N`` against one process, whole CLI processes.

``gradcli grad -e CHAIN --batch @points.npy --out DIR/`` at seeded points, for two programs:

* where Dask does not pay: an 8-step chain ``h = sin(h)*1.01 + 0.1`` on 16 elements a point,
  ``y = sum(h*h)`` (seconds of work at 10^6 points, of which Dask's own start takes one);
* where it should: a 200-step chain on 4 elements a point, 10^6 points (issue 32's goal:
  ``local:2`` at least 1.6x the speed of one process on a quiet 2-core machine, ``local:1``
  within 1.2x of it).

Each run is one process, ``--dask local:1`` and ``--dask local:2`` in turn (interleaved
rounds: 3; ``--quick`` leaves the suite out: a cluster's start alone takes seconds), every point's
results compared with one process's first. The figures do not ask for a quiet machine: each
run's process tree (the command, which holds Dask's scheduler and nannies, the fork server
and the workers) is sampled for CPU time every 20 ms (``harness.sample_tree``), and the row
``estimated quiet wall`` is the wall clock that work would take on a quiet machine of 2 cores
(``harness.quiet_wall``, Amdahl's law); one process's figure is its CPU time, which is its
wall clock when nothing else runs. The wall clock measured at this load is printed too, with
the load average. The notes give the CPU time of each process: the command's (start-up,
tracing, Dask's scheduler, the gathering), the fork server's (the workers' imports, once)
and each worker's.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

import numpy as np

from .harness import (
    Result,
    TreeRun,
    add_ratios,
    load_average,
    optional_import,
    python_script,
    quick_skip,
    quiet_wall,
    sample_tree,
    with_bytecode,
)

TITLE = "Dask: --batch on a LocalCluster of 1 and 2 workers against one process (CLI)"

SUITE = "dask"
SEED = 0
CORES = 2
ONE = "1 process"
LOCAL = {1: "--dask local:1", 2: "--dask local:2"}
ESTIMATE = ", estimated quiet wall"
#: (steps, elements a point) -> the issue's targets for local:1 and local:2 (a ratio of
#: one process's time), where it states them.
CASES: dict[tuple[int, int], dict[int, float]] = {(8, 16): {}, (200, 4): {1: 1.2, 2: 1 / 1.6}}

#: The notes printed under the table, filled by ``run``.
NOTES: list[str] = []


def chain(steps: int) -> str:
    """The program: ``steps`` steps of ``h = sin(h)*1.01 + 0.1``, then ``y = sum(h*h)``."""
    body = [f"h{i} = sin(h{i - 1})*1.01 + 0.1" for i in range(1, steps + 1)]
    return "; ".join(["h0 = x", *body, f"y = sum(h{steps}*h{steps})"])


def _runs(root: Path, steps: int, size: int, count: int, rounds: int) -> dict[str, list[TreeRun]]:
    """Every run, round by round, its results checked against one process's first."""
    points = np.random.default_rng(SEED).standard_normal((count, size))
    np.save(root / "x.npy", points)
    np.save(root / "warm.npy", points[:10])
    env = {"GRADCLI_CACHE_DIR": str(root / "cache"), **with_bytecode()}
    gradcli = [python_script("gradcli"), "grad", "-e", chain(steps), "--batch"]
    how = {ONE: [], **{name: ["--dask", name.split()[-1]] for name in LOCAL.values()}}
    for options in ([], ["--dask", "local:1"]):  # the parse cache, and every module's bytecode
        sample_tree([*gradcli, "@warm.npy", "--out", "warm/", *options], env, root)
    runs: dict[str, list[TreeRun]] = {name: [] for name in how}
    for _ in range(rounds):
        for name, options in how.items():
            out = name.split()[-1].replace(":", "") + "/"
            runs[name].append(sample_tree([*gradcli, "@x.npy", "--out", out, *options], env, root))
            if len(runs[name]) == 1:  # every point as one process has it
                for key in ("grads.x", "values.y"):
                    parts = [sorted((root / d / key).iterdir()) for d in ("process/", out)]
                    alone, here = (np.concatenate([np.load(p) for p in ps]) for ps in parts)
                    np.testing.assert_array_equal(here, alone, err_msg=f"{SUITE}: {name}")
    return runs


def _row(benchmark: str, name: str, seconds: list[float], baseline: str, clock: str) -> Result:
    ms = [s * 1e3 for s in seconds]
    median = statistics.median(ms)
    return Result(
        SUITE, benchmark, name, median, min(ms), max(ms), len(ms), baseline, tuple(ms), clock=clock
    )


def _split(name: str, runs: list[TreeRun]) -> str:
    """The CPU seconds of each kind of process, medians over the rounds."""

    def median(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}"

    parts = [f"command {median([sum(r.of('command')) for r in runs])}"]
    if any(r.of("fork server") for r in runs):
        parts.append(f"fork server {median([sum(r.of('fork server')) for r in runs])}")
    workers = len(runs[0].of("worker"))
    for i in range(workers):
        parts.append(f"worker {i + 1} {median([sorted(r.of('worker'))[i] for r in runs])}")
    total = median([sum(r.cpu.values()) for r in runs])
    return f"{name}: {', '.join(parts)} (all {total}) s"


def case(steps: int, size: int) -> list[Result]:
    """One program's rows: the estimated quiet wall clock against one process's CPU time,
    and the wall clock at this load, each a median over the rounds."""
    count = 10**6
    benchmark = f"grad of a {steps}-step chain on {size} elements, 10^{len(str(count)) - 1} points"
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-dask-"))
    load = load_average()
    try:
        runs = _runs(root, steps, size, count, 3)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    one = [sum(r.cpu.values()) for r in runs[ONE]]
    results = [_row(benchmark, f"{ONE} (CPU time)", one, f"{ONE} (CPU time)", "cpu")]
    for name in LOCAL.values():
        estimates = [quiet_wall(r, CORES) for r in runs[name]]
        results.append(_row(benchmark, name + ESTIMATE, estimates, f"{ONE} (CPU time)", "estimate"))
    measured = f"{benchmark}, at this load"
    for name, timed in runs.items():
        results.append(_row(measured, name, [r.wall for r in timed], ONE, "wall"))
    add_ratios(results, "", {})
    for workers, target in CASES[(steps, size)].items():
        row = next(r for r in results if r.implementation == LOCAL[workers] + ESTIMATE)
        row.target = target
        row.status = "PASS" if row.ratio is not None and row.ratio <= target else "MISS"
    speed = {r.implementation: 1 / r.ratio for r in results if r.ratio}
    NOTES.append(
        f"Dask, {benchmark}: estimated speed on a quiet {CORES}-core machine "
        f"{speed[LOCAL[1] + ESTIMATE]:.2f}x one process with local:1, "
        f"{speed[LOCAL[2] + ESTIMATE]:.2f}x with local:2; measured at this load (1-minute load "
        f"average {load} at the start, {load_average()} at the end) {speed[LOCAL[1]]:.2f}x and "
        f"{speed[LOCAL[2]]:.2f}x"
    )
    NOTES.extend(f"  CPU seconds, {_split(name, timed)}" for name, timed in runs.items())
    return results


def run(quick: bool = False) -> list[Result]:
    """Each program's rows, where Dask's distributed scheduler is installed."""
    NOTES.clear()
    if quick:
        quick_skip(SUITE, "every row (a cluster a run: tens of seconds of CPU, starts and imports)")
        return []
    if optional_import("distributed") is None:
        NOTES.append("Dask: not run (pip install 'gradcli[dask]')")
        return []
    return [row for (steps, size) in CASES for row in case(steps, size)]
