"""Shared machinery for the benchmark suites: timing, checking, machine facts, table and JSON.

Timing follows one rule everywhere (:func:`best_times`): the implementations of one benchmark
are warmed up once each, then timed with ``time.perf_counter`` in interleaved rounds (each round
calls every implementation, the fast ones several times, for about ``round_seconds`` each), and
each implementation's best (minimum) call is reported. Interleaving makes every implementation
sample the same moments of a shared, noisy machine, so their ratios stay fair. The garbage
collector stays on, as a user would have it, but is emptied before each implementation's turn.
"""

from __future__ import annotations

import gc
import importlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Timing:
    """How to time: ``rounds`` rounds, each giving every implementation ``round_seconds``."""

    rounds: int
    round_seconds: float


#: The default timing, and the one for ``--quick``.
FULL = Timing(rounds=5, round_seconds=0.15)
QUICK = Timing(rounds=3, round_seconds=0.05)

#: For benchmarks that start processes (a fraction of a second to seconds a call): a warm-up,
#: then the best of 7 (3 with ``--quick``) interleaved calls; in-process functions timed in the
#: same rounds still get several calls a round.
PROCESS_FULL = Timing(rounds=7, round_seconds=0.15)
PROCESS_QUICK = Timing(rounds=3, round_seconds=0.05)


@dataclass
class Result:
    """One figure: the best time of one implementation on one benchmark."""

    suite: str
    benchmark: str
    implementation: str
    best_ms: float
    repeats: int
    baseline: str
    ratio: float | None = None
    target: float | None = None
    status: str = ""
    target_ms: float | None = None  # an absolute target, where the issue states one


def optional_import(name: str) -> ModuleType | None:
    """``importlib.import_module(name)``, or None when it (or something it needs) is missing."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def best_times(fns: dict[str, Callable[[], Any]], timing: Timing) -> dict[str, tuple[float, int]]:
    """Time each function in interleaved rounds: name to (best seconds, number of timed calls).

    After one warm-up call each, every round calls each function ``round_seconds`` divided by its
    warm-up time times (at least once), so that a slow one costs one call a round.
    """
    calls = {}
    for name, fn in fns.items():
        gc.collect()
        start = time.perf_counter()
        fn()
        calls[name] = max(1, int(timing.round_seconds / max(time.perf_counter() - start, 1e-9)))
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(timing.rounds):
        for name, fn in fns.items():
            gc.collect()
            for _ in range(calls[name]):
                start = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - start)
    return {name: (best[name], calls[name] * timing.rounds) for name in fns}


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
    """Fill each result's ratio to its baseline, and PASS/MISS for ``subject`` against targets."""
    base = {(r.benchmark, r.implementation): r.best_ms for r in results}
    for r in results:
        r.ratio = r.best_ms / base[(r.benchmark, r.baseline)]
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
            r.status = "PASS" if r.best_ms <= target else "MISS"
    return results


def python_script(name: str) -> Path:
    """A console script installed beside the running interpreter (the virtualenv's ``bin``)."""
    return Path(sys.executable).parent / name


def with_bytecode(pycache: str | Path) -> dict[str, str | None]:
    """Environment changes giving a process compiled bytecode, as an installed program has.

    Python then reads and writes ``.pyc`` files under ``pycache`` (``PYTHONPYCACHEPREFIX``),
    never beside the sources, even where ``PYTHONDONTWRITEBYTECODE`` is set (it is removed):
    after a first, warm-up run nothing is compiled from source again.
    """
    return {"PYTHONPYCACHEPREFIX": str(pycache), "PYTHONDONTWRITEBYTECODE": None}


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


def machine_facts() -> dict[str, Any]:
    """Facts that decide the figures: versions, CPU count, BLAS set-up, thread pools."""
    facts: dict[str, Any] = {
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
        facts["torch_threads"] = sys.modules["torch"].get_num_threads()
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


def print_table(results: Iterable[Result]) -> None:
    """Print the figures as an aligned table: benchmark, implementation, best ms, ratio, target."""
    results = list(results)
    header = ("benchmark", "implementation", "best (ms)", "ratio", "repeats", "target", "")
    rows = [
        (
            f"{r.suite}.{r.benchmark}",
            r.implementation,
            f"{r.best_ms:.3f}",
            "" if r.ratio is None else f"{r.ratio:.2f}x",
            str(r.repeats),
            f"<= {r.target:g}x"
            if r.target is not None
            else ("" if r.target_ms is None else f"<= {r.target_ms:g} ms"),
            r.status,
        )
        for r in results
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    right = {2, 3, 4}  # numeric columns

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

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
