"""Rejections: how long gradcli takes to refuse hostile or oversized input.

Two benchmarks, each against the seed's own ``vjp`` call, which succeeds (a ratio near 1 means
refusing costs no more than answering; the issue's target is that no rejection takes longer
than a second):

* ``refuse``: the CPU time of a whole ``gradcli`` process that refuses its input, for one
  input of each kind (code smuggled into a program or a value, look-alike characters, deep and
  long text, huge sizes, huge powers in sympy's hands, a pickle), baseline ``gradcli (seed
  vjp)``. Every command first runs once and must exit 2 (``check`` exits 1: its methods
  disagree on the inf it is given; the baseline exits 0); then each is timed in interleaved
  rounds, the median of 7 (with ``--quick``, the checking run alone), with compiled bytecode and
  a warm parse cache, as an installed gradcli runs a second time.
* ``refuse-in-process``: every input the tests try (``tests/cli/hostile.py``: the hostile
  programs and the hostile values and options of ``test_cli_safety.py``, which must exit 2,
  and the huge powers of ``test_cli_limits.py``, which are floats, exit 0), each run through
  Typer's ``CliRunner`` in this process (imports done, ``--no-cache``), the median of 5 (one
  call with ``--quick``) after a warm-up that checks the exit code; baseline ``gradcli (seed
  vjp, in process)``. One row per group: its slowest input, named.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from .harness import (
    ONCE,
    PROCESS_FULL,
    Result,
    Timing,
    add_absolute,
    add_ratios,
    command,
    cpu_times,
    first_calls,
    python_script,
    results_of,
    with_bytecode,
)

TITLE = "rejections: a gradcli process refusing hostile or oversized input vs the seed vjp"

SUITE = "rejections"
BENCHMARK = "refuse"
BASELINE = "gradcli (seed vjp)"
SEED = ("vjp", "--expr", "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", "--x", "1,2", "--v", "1,1,1")
SECOND = 1000.0  # ms: the bound on any rejection

IN_PROCESS = "refuse-in-process"
IN_PROCESS_BASELINE = "gradcli (seed vjp, in process)"
IN_PROCESS_FULL = Timing(rounds=5, round_seconds=0.02)  # a few calls a round: 80 inputs
HOSTILE = Path(__file__).resolve().parents[1] / "tests" / "cli" / "hostile.py"

NOTES = (
    "target (from the issue): every rejection answers within 1 s of CPU time (refuse: whole "
    "process, median of 7;",
    "                         refuse-in-process: the slowest input of each group, median of 5).",
)


def _inputs(folder: Path) -> dict[str, list[str]]:
    """One hostile or oversized command line of each kind; files are made in ``folder``."""
    pickled = folder / "payload.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return {
        "code in a program": ["eval", "-e", "y = __import__('os').system('true')"],
        "code in a value": ["eval", "-e", "y = x", "--x", "__import__('os')"],
        "lambda and comprehension": ["eval", "-e", "y = [(lambda: 1)() for i in x]"],
        "look-alike minus": ["eval", "-e", "y = x \u2212 1", "--x", "1"],
        "bidi control": ["eval", "-e", "y = x # \u202e", "--x", "1"],
        "deep nesting": ["eval", "-e", "y = " + "-" * 50_000 + "x", "--x", "1"],
        "long chain": ["eval", "-e", "y = " + "+".join(["x"] * 300), "--x", "1"],
        "long text": ["eval", "-e", "y = x" + " " * 100_001, "--x", "1"],
        "huge constructor": ["eval", "-e", "y = x", "--x", "randn(100000, 100000)"],
        "huge intermediate": ["eval", "-e", "a = randn(7000, 1); b = randn(1, 8000); c = a*b"],
        "huge power for sympy": ["check", "-e", "y = x ** (2**2**2**30) + x", "--x", "2"],
        "pickled file": ["eval", "-e", "y = x", "--x", f"@{pickled}"],
    }


def _hostile() -> ModuleType:
    """``tests/cli/hostile.py``, the inputs the tests try (a plain module, not a package)."""
    spec = importlib.util.spec_from_file_location("hostile", HOSTILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _test_inputs(folder: Path) -> dict[str, tuple[dict[str, list[str]], int]]:
    """The tests' inputs as command lines, by group, with the exit code each must give.

    The canary path of the hostile payloads is a file in ``folder`` that nothing creates; the
    pickle they load is ``folder``'s harmless one (see ``_inputs``)."""
    hostile = _hostile()
    canary, pickled = folder / "canary", folder / "payload.npy"
    programs = {
        name: ["grad", "-e", program.format(c=canary), "--x", "1", "--no-cache"]
        for name, (program, _) in hostile.HOSTILE_PROGRAMS.items()
    }
    options = {
        name: ["vjp", "-e", "y = x * 1"]
        + [o.format(c=canary, pickle=pickled) for o in given]
        + ["--no-cache"]
        for name, (given, _) in hostile.HOSTILE_OPTIONS.items()
    }
    powers = {p: ["eval", "-e", p, "--x", "3", "--no-cache"] for p in hostile.HUGE_POWERS}
    return {
        f"{len(programs)} hostile programs": (programs, 2),
        f"{len(options)} hostile values and options": (options, 2),
        f"{len(powers)} huge powers": (powers, 0),
    }


def _in_process(args: list[str], exit_code: int) -> Callable[[], None]:
    """A function that runs ``gradcli ARGS`` in this process and checks its exit code."""
    from typer.testing import CliRunner

    from gradcli.cli.app import app

    runner = CliRunner()

    def run() -> None:
        result = runner.invoke(app, args)
        if result.exit_code != exit_code:
            raise RuntimeError(
                f"gradcli {' '.join(args)[:200]} exited with {result.exit_code}, not "
                f"{exit_code}: {result.stderr.strip()[-2000:]}"
            )

    return run


def _run_in_process(folder: Path, quick: bool) -> list[Result]:
    """Every test input in this process; a row per group, its slowest input."""
    groups = _test_inputs(folder)
    calls = {IN_PROCESS_BASELINE: _in_process([*SEED, "--no-cache"], 0)}
    for group, (cases, exit_code) in groups.items():
        calls |= {f"{group}: {case}": _in_process(args, exit_code) for case, args in cases.items()}
    _, first = first_calls(calls)  # warms up, and checks the exit codes
    times = cpu_times(calls, ONCE if quick else IN_PROCESS_FULL, first)
    shown = {IN_PROCESS_BASELINE: IN_PROCESS_BASELINE}
    for group in groups:
        case = max((c for c in times if c.startswith(f"{group}: ")), key=lambda c: times[c].median)
        shown[f"slowest of {case}"] = case
    results = results_of(
        SUITE, IN_PROCESS, {name: times[case] for name, case in shown.items()}, IN_PROCESS_BASELINE
    )
    add_ratios(results, IN_PROCESS_BASELINE, {})
    return add_absolute(results, {(IN_PROCESS, r.implementation): SECOND for r in results[1:]})


def run(quick: bool = False) -> list[Result]:
    """Check that each command is refused (exit 2, an error line), then time them: as whole
    processes, then every input of the tests in this process."""
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-rejections-"))
    try:
        env = {**with_bytecode(), "GRADCLI_CACHE_DIR": str(root / "cache")}
        gradcli = python_script("gradcli")
        processes = {BASELINE: command([gradcli, *SEED], env=env)}
        disagree = {"huge power for sympy": 1}  # check runs, and its methods disagree
        for name, argv in _inputs(root).items():
            exit_code = disagree.get(name, 2)
            processes[name] = command([gradcli, *argv], env=env, exit_code=exit_code)
        processes[BASELINE]()  # writes the bytecode and the parse cache the others read
        _, first = first_calls(processes)  # warms up, and checks the exit codes
        times = cpu_times(processes, ONCE if quick else PROCESS_FULL, first, processes)
        in_process = _run_in_process(root, quick)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = results_of(SUITE, BENCHMARK, times, BASELINE)
    add_ratios(results, BASELINE, {})
    targets = {(BENCHMARK, name): SECOND for name in times if name != BASELINE}
    return add_absolute(results, targets) + in_process
