"""Batch-mode benchmarks: the start-up suite's vjp at 100,000 points.

The program ``y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1`` with ``--v 1,1,1`` at 100,000 seeded points
x (a 100000 x 2 float64 array); the vjp for x at each point is ``(4*x0, 10*x1 + 3)``.

* ``gradcli CLI --out results.npy``: ``gradcli vjp --expr ... --x 1,2 --v 1,1,1 --batch
  @points.npy --out results.npy`` as a new process (start-up, reading and writing included;
  the program is in the parse cache, as on a second run; gradcli's processes run with
  compiled bytecode in a temporary ``PYTHONPYCACHEPREFIX``, as the start-up suite explains);
* ``gradcli CLI JSON lines > file``: the same without ``--out``, its JSON lines sent to a file;
* ``gradcli batch.run (in-process)``: ``gradcli.batch.plan.run`` on an already bound program (its
  trace, chunked replays and concatenation included);
* anchors: ``numpy (hand)``, the gradients computed vectorized (the baseline of every ratio),
  torch's ``torch.func.vmap(torch.func.grad(...))`` and a batched torch autograd pass when
  installed, and two processes: the same vjp at one point (``gradcli CLI one point``) and
  ``python -c "import numpy, typer, rich.table"`` (the start-up floor).

Every implementation's gradients (the CLI's .npy file and JSON lines too) must equal the hand
numpy ones before anything is timed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gradcli.batch import plan as gradcli_batch
from gradcli.commands.compute import Bound, bind
from gradcli.lang import parse_program

from . import engine
from .harness import (
    PROCESS_FULL,
    PROCESS_QUICK,
    Result,
    add_absolute,
    add_ratios,
    check_same,
    command,
    cpu_times,
    first_calls,
    python_script,
    quick_skip,
    results_of,
    single,
    with_bytecode,
)
from .startup import EXPR, GRADCLI_ARGS

TITLE = "batch mode: the vjp at 100,000 points (CLI --batch, in-process) vs numpy, torch"

SUITE = "batch"
POINTS = 100_000
BENCHMARK = "vjp, 100000 points"
BASELINE = "numpy (hand)"
CLI_NPY = "gradcli CLI --out results.npy"
CLI_JSON = "gradcli CLI JSON lines > file"
IN_PROCESS = "gradcli batch.run (in-process)"
SEED = 0
RTOL = 1e-12
V = np.ones(3)

#: The issue's target, in ms, for the command line writing .npy (start-up included).
ABSOLUTE_TARGETS = {(BENCHMARK, CLI_NPY): 1000.0}

STATIC_NOTES = (
    "targets (from the issue): batch gradcli CLI --batch @points.npy --out results.npy "
    "<= 1 s for 100,000 points (a whole process: start-up, I/O included); 10^7 points to .npy "
    "in <= 500 MB resident, no slower a point than 10^5; JSON lines >= 2,000,000 points/s; "
    "jacobian, jvp, hvp and hessian at 10^4 points in one process (tracing included) no "
    "slower than torch.func.vmap (Dask: the dask suite)",
)
#: The notes printed under the table: the static ones, then this run's big-batch figures.
NOTES: list[str] = list(STATIC_NOTES)


def points(count: int = POINTS, seed: int = SEED) -> np.ndarray:
    """Seeded points x, one per row."""
    return np.random.default_rng(seed).standard_normal((count, 2))


def hand(x: np.ndarray) -> Callable[[], Any]:
    """numpy by hand: J^T v = (4 x0, 10 x1 + 3) at every point, vectorized."""
    return lambda: np.stack([4.0 * x[:, 0], 10.0 * x[:, 1] + 3.0], axis=1)


def bound_program() -> Bound:
    """The program parsed and bound at x = (1, 2), as the command line binds it."""
    return bind(parse_program(EXPR), {"x": np.array([1.0, 2.0])})


def in_process(bound: Bound, x: np.ndarray) -> Callable[[], Any]:
    """``gradcli.batch.plan.run`` over every chunk, the gradients concatenated."""

    def run() -> np.ndarray:
        chunks = gradcli_batch.run(bound, "vjp", {"x": x}, None, V, None)
        return np.concatenate([chunk.grads["x"] for chunk in chunks])

    return run


def _f(torch, x):
    return torch.stack([x[..., 0] ** 2, x[..., 0] ** 2 + 5 * x[..., 1] ** 2, 3 * x[..., 1]], -1)


def torch_vmap(x: np.ndarray) -> Callable[[], Any]:
    """``torch.func.vmap(torch.func.grad(x -> v . f(x)))`` over the points."""
    torch = engine._torch()
    xt, vt = torch.from_numpy(x), torch.from_numpy(V)
    per_point = torch.func.vmap(torch.func.grad(lambda p: (_f(torch, p) * vt).sum()))
    return lambda: per_point(xt).numpy()


def torch_batched(x: np.ndarray) -> Callable[[], Any]:
    """One torch autograd pass over all points at once (the points do not interact)."""
    torch = engine._torch()
    vt = torch.from_numpy(V)

    def run() -> np.ndarray:
        xt = torch.from_numpy(x).requires_grad_()
        y = _f(torch, xt)
        (g,) = torch.autograd.grad(y, xt, vt.expand_as(y))
        return g.numpy()

    return run


def _json_grads(path: Path) -> np.ndarray:
    with open(path, encoding="utf-8") as lines:
        return np.array([json.loads(line)["grads"]["x"] for line in lines])


def run(quick: bool = False) -> list[Result]:
    """Check that every implementation's gradients agree, then time each one."""
    NOTES[:] = STATIC_NOTES  # the other parts add theirs
    x = points()
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-batch-"))
    try:
        np.save(root / "points.npy", x)
        cache = {"GRADCLI_CACHE_DIR": str(root / "cache"), **with_bytecode()}
        gradcli = [python_script("gradcli"), *GRADCLI_ARGS]
        batch_args = ["--batch", "@points.npy"]
        runs: dict[str, Callable[[], Any]] = {
            BASELINE: hand(x),
            IN_PROCESS: in_process(bound_program(), x),
        }
        if engine._torch() is not None:
            runs["torch.func.vmap(grad)"] = torch_vmap(x)
            runs["torch batched autograd"] = torch_batched(x)
        values, first = first_calls(runs)
        outputs = {name: [value] for name, value in values.items()}
        processes = {
            CLI_NPY: command([*gradcli, *batch_args, "--out", "results.npy"], env=cache, cwd=root),
            CLI_JSON: command(
                [*gradcli, *batch_args], env=cache, cwd=root, stdout_path=root / "results.jsonl"
            ),
        }
        if quick:  # the start-up suite times these two processes (its second run, its baseline)
            what = f"the one-point and import rows of {BENCHMARK} (startup.vjp times both)"
            quick_skip(SUITE, what)
        else:
            processes["gradcli CLI one point"] = command(gradcli, env=cache, cwd=root)
            processes["import numpy, typer, rich.table"] = command(
                [sys.executable, "-c", "import numpy, typer, rich.table"]
            )
        processes[CLI_NPY]()  # the first call also fills the parse cache
        outputs[CLI_NPY] = [np.load(root / "results.npy")]
        first |= first_calls({CLI_JSON: processes[CLI_JSON]})[1]
        outputs[CLI_JSON] = [_json_grads(root / "results.jsonl")]
        check_same(f"{SUITE}.{BENCHMARK}", outputs, BASELINE, RTOL)

        timing = PROCESS_QUICK if quick else PROCESS_FULL
        times = cpu_times({**runs, **processes}, timing, first, processes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = results_of(SUITE, BENCHMARK, times, BASELINE)
    add_ratios(results, "", {})
    return add_absolute(results, ABSOLUTE_TARGETS) + commands(quick) + big_batches(quick)


# -- the other commands' batches -----------------------------------------------------------

COMMAND_POINTS = 10_000
IN_BATCH = "gradcli batch.run (in-process)"
#: The plan's replays alone (its passes traced once, before the timing): what a batch of more
#: points pays a point, the tracing's fixed cost aside.
REPLAYED = "gradcli plan replayed (traced once)"
ROSENBROCK = "f = (1 - x0)**2 + 100*(x1 - x0**2)**2"


def _rosenbrock(torch, x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _command_cases(torch) -> dict[str, tuple[str, str, dict, Any]]:
    """command -> (program, section and name of its result, settings, torch's result at every
    point as a function of the points, or None without torch)."""
    from gradcli.batch.passes import Settings

    t, v = np.array([1.0, 0.5]), np.array([0.5, -2.0])
    if torch is None:
        anchors: dict[str, Any] = dict.fromkeys(("jacobian", "jvp", "hvp", "hessian", "check"))
    else:
        func = torch.func
        f, g = (lambda p: _f(torch, p)), (lambda p: _rosenbrock(torch, p))
        tt, vt = torch.from_numpy(t), torch.from_numpy(v)
        anchors = {
            "jacobian": func.vmap(func.jacrev(f)),
            "jvp": func.vmap(lambda p: func.jvp(f, (p,), (tt,))[1]),
            "hvp": func.vmap(lambda p: func.jvp(func.grad(g), (p,), (vt,))[1]),
            "hessian": func.vmap(func.hessian(g)),
            "check": None,  # torch has no per-point check to compare with
        }
    return {
        "jacobian": (EXPR, "jacobian.x", {}, anchors["jacobian"]),
        "jvp": (EXPR, "jvp.y", {"settings": Settings(tangents={"x": t})}, anchors["jvp"]),
        "hvp": (ROSENBROCK, "hvp.x", {"settings": Settings(vectors={"x": v})}, anchors["hvp"]),
        "hessian": (ROSENBROCK, "hessian.x,x", {}, anchors["hessian"]),
        "check": (EXPR, "check.max_error", {}, None),
    }


def commands(quick: bool = False) -> list[Result]:
    """jacobian, jvp, hvp, hessian and check at 10^4 seeded points in one process, each
    command's results checked against torch.func's (vmap of jacrev, jvp, hessian) first, and
    their points a second in the notes; beside them, the replays of a plan traced once."""
    torch = engine._torch()
    x = points(COMMAND_POINTS)
    results: list[Result] = []
    rates = []
    for which, (program, key, options, anchor) in _command_cases(torch).items():
        bound = bind(parse_program(program), {"x": np.array([1.0, 2.0])})
        section, name = key.split(".", 1)

        def ours(bound=bound, which=which, options=options, section=section, name=name):
            chunks = gradcli_batch.run(bound, which, {"x": x}, **options)
            return np.concatenate([chunk.sections[section][name] for chunk in chunks])

        made = gradcli_batch.plan(bound, which, {"x": x}, **options)

        def replayed(made=made, section=section, name=name):
            chunks = [
                made.replay({"x": x[start : start + made.chunk]}, start)
                for start in range(0, len(x), made.chunk)
            ]
            return np.concatenate([chunk[section][name] for chunk in chunks])

        runs: dict[str, Callable[[], Any]] = {IN_BATCH: ours, REPLAYED: replayed}
        if anchor is not None:
            xt = torch.from_numpy(x)
            runs["torch.func.vmap"] = lambda anchor=anchor, xt=xt: anchor(xt).numpy()
        values, first = first_calls(runs)
        outputs = {label: [value] for label, value in values.items()}
        if which == "check":
            assert float(outputs[IN_BATCH][0].max()) < 1e-6, "check's methods disagree"
        else:
            check_same(f"{SUITE}.{which}", outputs, "torch.func.vmap", 1e-10)
        times = cpu_times(runs, PROCESS_QUICK if quick else PROCESS_FULL, first)
        benchmark = f"{which}, {COMMAND_POINTS} points"
        results += results_of(SUITE, benchmark, times, IN_BATCH)
        rates.append(f"{which} {COMMAND_POINTS / times[IN_BATCH].median:,.0f}")
    add_ratios(results, "", {})
    NOTES.append(f"batch, points/s at 10^4 points in one process: {', '.join(rates)}")
    versus = [
        f"{r.benchmark.split(',')[0]} {1 / r.ratio:.2f}x "
        f"({1 / r.ratio_high:.2f}-{1 / r.ratio_low:.2f}x) "
        f"{'PASS' if r.ratio >= 1 else 'MISS'}"
        for r in results
        if r.implementation == "torch.func.vmap" and r.ratio and r.ratio_low and r.ratio_high
    ]
    if versus:
        NOTES.append(
            f"batch, gradcli's time over torch.func.vmap's (target <= 1): {', '.join(versus)}"
        )
    return results


# -- big batches ---------------------------------------------------------------------------

BIG = "vjp, 10^7 points"
BIG_NPY = "gradcli CLI --out results.npy"
BIG_JSON = "gradcli CLI JSON lines > file"
JSON_RATE = 2_000_000  # points a second, issue 32's target for JSON lines


def _measured(
    argv: list[str], cwd: Path, env: dict, stdout_path: Path | None = None, clock: str = "cpu"
) -> tuple[float, float]:
    """One run of ``argv`` in a process of its own: (seconds, peak resident MB), read from
    ``getrusage`` by a wrapper process that runs only it; the seconds are its CPU time (user
    and system, of it and its children), or with ``clock="wall"`` the wall clock."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "out = open(sys.argv[2], 'wb') if sys.argv[2] != '-' else subprocess.DEVNULL\n"
        "start = time.perf_counter()\n"
        "code = subprocess.run(sys.argv[3:], stdout=out).returncode\n"
        "wall = time.perf_counter() - start\n"
        "used = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "seconds = wall if sys.argv[1] == 'wall' else used.ru_utime + used.ru_stime\n"
        "print(code, seconds, used.ru_maxrss / 1024)\n"
    )
    full_env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    where = "-" if stdout_path is None else str(stdout_path)
    done = subprocess.run(
        [sys.executable, "-c", wrapper, clock, where, *argv],
        cwd=cwd, env=full_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    code, seconds, peak = done.stdout.split()
    if code != "0":
        raise RuntimeError(f"{' '.join(argv)} exited with {code}: {done.stderr[-2000:]}")
    return float(seconds), float(peak)


#: What the JSON lines of a big batch import and load, in a process run before them: the kernel,
#: compiled by numba and stored in the run's cache directory (as any first use does; the timed run
#: then loads it without numba), and the bytecode of what they import, then in the run's prefix
#: as an installed program's is (the timed run does not compile it).
WARM_WRITER = (
    "import numpy as np\n"
    "from gradcli.render import compiled_lines\n"
    "from gradcli.render.json_lines import Line\n"
    "y = np.ones((2, 3))\n"
    "kernel = compiled_lines.kernel()\n"
    "if kernel is not None:\n"
    "    compiled_lines.Lines(kernel, Line.of([('values', 'y', y)]))(0, [y])\n"
)


def big_batches(quick: bool = False) -> list[Result]:
    """10^7 points of the vjp to .npy and as JSON lines (10^6 with ``quick``), beside 10^5
    (not with ``quick``: the suite's first rows run 10^5 points), with each process's peak
    resident memory (Dask's batches: the ``dask`` suite). Each is one run (they take seconds to
    a minute), its results checked first."""
    count = 10**6 if quick else 10**7
    sizes = (count,) if quick else (POINTS, count)
    if quick:
        quick_skip(SUITE, f"the big batches' runs of 10^5 points (the first rows run {POINTS:,})")
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-bigbatch-"))
    results: list[Result] = []
    try:
        env = {"GRADCLI_CACHE_DIR": str(root / "cache"), **with_bytecode()}
        gradcli = [str(python_script("gradcli")), *GRADCLI_ARGS]
        _measured([sys.executable, "-c", WARM_WRITER], root, env)
        figures = {}
        for n in sizes:
            x = points(n)
            np.save(root / f"p{n}.npy", x)
            batch_args = ["--batch", f"@p{n}.npy"]
            if n == sizes[0]:  # the first call fills the parse cache (and imports sympy)
                _measured([*gradcli, *batch_args, "--out", "r.npy"], root, env)
            figures[(n, "npy")] = _measured([*gradcli, *batch_args, "--out", "r.npy"], root, env)
            check_same(
                f"{SUITE}.{BIG}",
                {"hand": [hand(x)()], "npy": [np.load(root / "r.npy")]},
                "hand",
                RTOL,
            )
            figures[(n, "json")] = _measured(gradcli + batch_args, root, env, root / "r.jsonl")
            with open(root / "r.jsonl", encoding="utf-8") as lines:
                last = json.loads(lines.readlines()[-1])
            assert last["point"] == n - 1
            np.testing.assert_allclose(last["grads"]["x"], hand(x[-1:])()[0], rtol=RTOL)
            os.remove(root / f"p{n}.npy")
        label = f"10^{len(str(count)) - 1}"
        benchmark = BIG.replace("10^7", label)
        for kind, name in (("npy", BIG_NPY), ("json", BIG_JSON)):
            seconds, _ = figures[(count, kind)]
            results.append(single(SUITE, benchmark, name, seconds, BIG_NPY))
        add_ratios(results, "", {})
        if not quick:  # (at --quick's 10^6 points a process's start-up weighs ten times more:
            # the rate is a limit of the full run's 10^7 points alone)
            results = add_absolute(results, {(benchmark, BIG_JSON): count / JSON_RATE * 1e3})
        NOTES.extend(_big_notes(figures, count, label))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results


def _big_notes(figures: dict[tuple[int, str], tuple[float, float]], count: int, label: str):
    """The notes of the big batches: time, points a second and peak memory, against 10^5
    points where those ran too."""
    (s7, m7), (j7, jm7) = figures[(count, "npy")], figures[(count, "json")]
    npy = f"batch, {label} points to .npy: {s7:.2f} s, peak resident {m7:.0f} MB"
    rate = ""
    target = "target" if count >= 10**7 else "start-up included; the target, at 10^7 points only,"
    if (POINTS, "npy") in figures:
        (s5, m5), (j5, _) = figures[(POINTS, "npy")], figures[(POINTS, "json")]
        npy += (
            f" (10^5 points: {s5:.2f} s, {m5:.0f} MB); {s7 / count * 1e6:.3f} us a point "
            f"against {s5 / POINTS * 1e6:.3f} us at 10^5 (start-up included)"
        )
        rate = f"; {POINTS / j5:,.0f} points/s at 10^5, start-up included"
    return [
        npy,
        f"batch, {label} points as JSON lines: {j7:.1f} s, {count / j7:,.0f} points/s "
        f"({target} >= {JSON_RATE:,}{rate}), peak resident {jm7:.0f} MB",
    ]
