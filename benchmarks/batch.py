"""Batch-mode benchmarks: the start-up suite's vjp at 100,000 points.

The program ``y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1`` with ``--v 1,1,1`` at 100,000 seeded points
x (a 100000 x 2 float64 array); the vjp for x at each point is ``(4*x0, 10*x1 + 3)``.

* ``gradcli CLI --out results.npy``: ``gradcli vjp --expr ... --x 1,2 --v 1,1,1 --batch
  @points.npy --out results.npy`` as a new process (start-up, reading and writing included;
  the program is in the parse cache, as on a second run; gradcli's processes run with
  compiled bytecode in a temporary ``PYTHONPYCACHEPREFIX``, as the start-up suite explains);
* ``gradcli CLI JSON lines > file``: the same without ``--out``, its JSON lines sent to a file;
* ``gradcli batch.run (in-process)``: ``gradcli.batch.run`` on an already bound program (its
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
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gradcli import batch as gradcli_batch
from gradcli.compute import Bound, bind
from gradcli.lang import parse_program

from . import engine
from .harness import (
    PROCESS_FULL,
    PROCESS_QUICK,
    Result,
    add_absolute,
    add_ratios,
    best_times,
    check_same,
    command,
    python_script,
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

NOTES = (
    "targets (from the issue): batch gradcli CLI --batch @points.npy --out results.npy "
    "<= 1 s for 100,000 points (a whole process: start-up, I/O included)",
)


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
    """``gradcli.batch.run`` over every chunk, the gradients concatenated."""

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
    x = points()
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-batch-"))
    try:
        np.save(root / "points.npy", x)
        cache = {"GRADCLI_CACHE_DIR": str(root / "cache"), **with_bytecode(root / "pycache")}
        gradcli = [python_script("gradcli"), *GRADCLI_ARGS]
        batch_args = ["--batch", "@points.npy"]
        runs: dict[str, Callable[[], Any]] = {
            BASELINE: hand(x),
            IN_PROCESS: in_process(bound_program(), x),
        }
        if engine._torch() is not None:
            runs["torch.func.vmap(grad)"] = torch_vmap(x)
            runs["torch batched autograd"] = torch_batched(x)
        outputs = {name: [fn()] for name, fn in runs.items()}
        processes = {
            CLI_NPY: command([*gradcli, *batch_args, "--out", "results.npy"], env=cache, cwd=root),
            CLI_JSON: command(
                [*gradcli, *batch_args], env=cache, cwd=root, stdout_path=root / "results.jsonl"
            ),
            "gradcli CLI one point": command(gradcli, env=cache, cwd=root),
            "import numpy, typer, rich.table": command(
                [sys.executable, "-c", "import numpy, typer, rich.table"]
            ),
        }
        processes[CLI_NPY]()  # the first call also fills the parse cache
        outputs[CLI_NPY] = [np.load(root / "results.npy")]
        processes[CLI_JSON]()
        outputs[CLI_JSON] = [_json_grads(root / "results.jsonl")]
        check_same(f"{SUITE}.{BENCHMARK}", outputs, BASELINE, RTOL)

        times = best_times({**runs, **processes}, PROCESS_QUICK if quick else PROCESS_FULL)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = [
        Result(SUITE, BENCHMARK, name, seconds * 1e3, repeats, BASELINE)
        for name, (seconds, repeats) in times.items()
    ]
    add_ratios(results, "", {})
    return add_absolute(results, ABSOLUTE_TARGETS)
