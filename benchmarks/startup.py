"""Start-up benchmarks: one small ``gradcli vjp`` call, as a user runs it, in a new process.

One benchmark, ``vjp``: the CPU time of a whole process, from start to exit, for

* ``gradcli (second run)``: ``gradcli vjp --expr "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1" --x 1,2
  --v 1,1,1 --format json`` with a parse cache that already holds the program (the usual case:
  the same program again), and ``gradcli (first run)``: the same call, each time with a fresh,
  empty ``GRADCLI_CACHE_DIR`` (a program never seen before: it is parsed, which imports sympy).
  The console script is the one beside the running interpreter (the virtualenv's ``gradcli``).
  Both run with compiled bytecode, as an installed program does: their ``.pyc`` files live in a
  temporary ``PYTHONPYCACHEPREFIX`` (written by the warm-up run; nothing is written beside the
  sources). Where ``PYTHONDONTWRITEBYTECODE`` is set in the environment, one more row,
  ``gradcli (second run, environment as is)``, runs without that: a checkout whose ``gradcli``
  has no ``__pycache__`` then compiles gradcli's modules from source at every start. (The
  anchors' libraries are installed with their bytecode, so they run as they are.)
* the anchors: ``python -c "import numpy, typer, rich.table"`` (the baseline of every ratio:
  the imports a numpy + Typer + Rich command line cannot avoid), ``python -c pass`` (the
  interpreter alone), ``python -c "import sympy"`` (what a cache miss adds), and, when
  installed, a short torch script and a short jax script computing the same vjp and printing
  the same JSON.

A second benchmark, ``run``: ``gradcli run tests/pytorch/seed_first_example.py`` (second and
first run, as above) against ``python`` with torch running the same script (its bare last
line ``x.grad`` printed with ``print``, since Python does not echo a script's expressions);
its ratios are to torch. All three must print the same text.

The outputs of gradcli (both runs) and of the torch and jax scripts are checked to agree (values
of y and the vjp for x) before anything is timed. Every command is run once to warm up, then 7
times in interleaved rounds; the median call is reported. With ``--quick``: 3 rounds, the
checking run is the warm-up, a process over half a second of CPU (the first run, torch's)
is measured once (by that run), and the anchors ``import sympy`` and the torch and jax
scripts are left out (torch's start-up is timed once, as the run benchmark's baseline), as are
the environment-as-is row and the run benchmark's first run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

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
    with_bytecode,
)

TITLE = (
    "start-up: one `gradcli vjp` call in a new process vs the imports it needs, torch, jax; "
    "`gradcli run` on the seed's first example vs torch"
)

SUITE = "startup"
BENCHMARK = "vjp"
BASELINE = "import numpy, typer, rich.table"
SECOND = "gradcli (second run)"
FIRST = "gradcli (first run)"
AS_IS = "gradcli (second run, environment as is)"
RTOL = 1e-12

#: The issues' targets: the second run as a ratio to the import baseline (issue 15, item 4),
#: the first run in ms.
TARGETS = {BENCHMARK: 1.15}
ABSOLUTE_TARGETS = {(BENCHMARK, FIRST): 1000.0}

NOTES = (
    "targets (issue 15): startup.vjp gradcli second run <= 1.15x "
    "`python -c 'import numpy, typer, rich.table'`;",
    "                          gradcli first run (empty parse cache) <= 1.0 s. "
    "Every row is a whole process (start to exit), median of 7 after a warm-up;",
    "                          gradcli's rows run with compiled bytecode (PYTHONPYCACHEPREFIX "
    "in a temporary directory), as an installed gradcli does.",
    "                          startup.run: `gradcli run` on the seed's first example <= 0.2x "
    "`python` with torch on the same script (at least 5x faster).",
)

EXPR = "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1"
GRADCLI_ARGS = ("vjp", "--expr", EXPR, "--x", "1,2", "--v", "1,1,1", "--format", "json")

TORCH_SCRIPT = """\
import json, torch
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
y = torch.stack([x[0] ** 2, x[0] ** 2 + 5 * x[1] ** 2, 3 * x[1]])
(g,) = torch.autograd.grad(y, x, torch.ones(3, dtype=torch.float64))
print(json.dumps({"values": {"y": y.tolist()}, "grads": {"x": g.tolist()}}))
"""

JAX_SCRIPT = """\
import json, jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
f = lambda x: jnp.stack([x[0] ** 2, x[0] ** 2 + 5 * x[1] ** 2, 3 * x[1]])
y, pullback = jax.vjp(f, jnp.array([1.0, 2.0]))
(g,) = pullback(jnp.ones(3))
print(json.dumps({"values": {"y": y.tolist()}, "grads": {"x": g.tolist()}}))
"""

# The second benchmark, ``run``: ``gradcli run`` on the seed post's first example (a script
# file), against torch running the same script. Python runs a script without echoing its
# bare expressions, so torch's script prints its last line, ``x.grad``, with print(); the two
# outputs must be the same text. Its baseline is torch: the ratio is gradcli's share of
# torch's time (the issue asks for at least 5x faster, a ratio of at most 0.2).
RUN_BENCHMARK = "run"
RUN_BASELINE = "torch: python script.py"
RUN_SECOND = "gradcli run (second run)"
RUN_FIRST = "gradcli run (first run)"
RUN_TARGETS = {RUN_BENCHMARK: 0.2}
SEED_SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "pytorch" / "seed_first_example.py"
RUN_OUTPUT = "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"

#: What every checked command must print (values of y, then the vjp for x).
EXPECTED = (np.array([1.0, 21.0, 6.0]), np.array([4.0, 23.0]))


def installed(name: str) -> bool:
    """Whether ``name`` can be imported, without importing it here."""
    return importlib.util.find_spec(name) is not None


def _fresh_cache(root: Path, env: dict[str, str | None], args=GRADCLI_ARGS, name: str = "fresh"):
    """A function running gradcli ``args`` with a new, empty cache directory under ``root``
    each call."""
    count = 0

    def run() -> str:
        nonlocal count
        count += 1
        cache = root / f"{name}-{count}"  # made by gradcli itself when it stores the program
        return command(
            [python_script("gradcli"), *args], env={**env, "GRADCLI_CACHE_DIR": str(cache)}
        )()

    return run


def _run_processes(
    root: Path, bytecode: dict[str, str | None], quick: bool = False
) -> tuple[dict[str, Callable[[], str]], dict[str, float]]:
    """The ``run`` benchmark's processes (with ``quick``, no first run: it measures as the
    second does), their outputs checked to be the same text, and the CPU seconds of those
    checking runs."""
    args = ("run", str(SEED_SCRIPT))
    warm = root / "warm-run"
    processes = {
        RUN_SECOND: command(
            [python_script("gradcli"), *args], env={**bytecode, "GRADCLI_CACHE_DIR": str(warm)}
        ),
    }
    if quick:
        quick_skip(SUITE, f"{RUN_BENCHMARK}: {RUN_FIRST} (it measures as the second run does)")
    else:
        processes[RUN_FIRST] = _fresh_cache(root, bytecode, args, "fresh-run")
    if installed("torch"):
        script = root / "seed_first_example.py"
        text = SEED_SCRIPT.read_text()
        script.write_text(text.replace("\nx.grad\n", "\nprint(x.grad)\n"))
        processes[RUN_BASELINE] = command([sys.executable, str(script)])
    processes[RUN_SECOND]()  # fills the warm cache
    outputs, first = first_calls(processes)
    for name, output in outputs.items():
        if output != RUN_OUTPUT:
            raise AssertionError(f"{SUITE}.{RUN_BENCHMARK}: {name} printed another text")
    return processes, first


def _parsed(output: str) -> tuple[np.ndarray, np.ndarray]:
    document = json.loads(output)
    return np.asarray(document["values"]["y"]), np.asarray(document["grads"]["x"])


def run(quick: bool = False) -> list[Result]:
    """Check the commands agree, then time each whole process."""
    python = sys.executable
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-startup-"))
    try:
        warm = root / "warm"
        bytecode = with_bytecode()
        gradcli = [python_script("gradcli"), *GRADCLI_ARGS]
        processes = {
            "python -c pass": command([python, "-c", "pass"]),
            BASELINE: command([python, "-c", "import numpy, typer, rich.table"]),
            SECOND: command(gradcli, env={**bytecode, "GRADCLI_CACHE_DIR": str(warm)}),
            FIRST: _fresh_cache(root, bytecode),
        }
        if quick:  # torch's start-up is timed once, by the run benchmark's baseline
            what = "the anchors import sympy, the torch and jax scripts (2 to 3 s each)"
            quick_skip(SUITE, f"{BENCHMARK}: {what}, and the environment-as-is row")
        else:
            if os.environ.get("PYTHONDONTWRITEBYTECODE"):
                processes[AS_IS] = command(gradcli, env={"GRADCLI_CACHE_DIR": str(warm)})
            processes["import sympy"] = command([python, "-c", "import sympy"])
            if installed("torch"):
                processes["torch script"] = command([python, "-c", TORCH_SCRIPT])
            if installed("jax"):
                processes["jax script"] = command([python, "-c", JAX_SCRIPT])

        processes[SECOND]()  # the first call fills the warm cache; every later one reads it
        checked = (FIRST, SECOND, AS_IS, "torch script", "jax script")
        texts, first = first_calls({k: v for k, v in processes.items() if k in checked})
        outputs = {"expected": EXPECTED, **{k: _parsed(text) for k, text in texts.items()}}
        check_same(f"{SUITE}.{BENCHMARK}", outputs, "expected", RTOL)
        if not any(warm.glob("program-*.json")):
            raise AssertionError(f"{SUITE}: gradcli wrote no parse cache entry in {warm}")

        timing = PROCESS_QUICK if quick else PROCESS_FULL
        times = cpu_times(processes, timing, first, processes)
        run_processes, run_first = _run_processes(root, bytecode, quick)
        run_times = cpu_times(run_processes, timing, run_first, run_processes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = results_of(SUITE, BENCHMARK, times, BASELINE)
    add_ratios(results, SECOND, TARGETS)
    if RUN_BASELINE in run_times:  # the run benchmark's ratios are to torch
        runs = results_of(SUITE, RUN_BENCHMARK, run_times, RUN_BASELINE)
        results += add_ratios(runs, RUN_SECOND, RUN_TARGETS)
    return add_absolute(results, ABSOLUTE_TARGETS)
