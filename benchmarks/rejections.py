"""Rejections: how long gradcli takes to refuse hostile or oversized input, in a new process.

One benchmark, ``refuse``: the wall time of a whole ``gradcli`` process that refuses its input,
for one input of each kind that ``tests/cli/test_cli_safety.py`` tries (code smuggled into a
program or a value, look-alike characters, deep and long text, huge sizes, huge powers in
sympy's hands, a pickle), against the baseline ``gradcli (seed vjp)``: the seed's own
``vjp`` call, which succeeds. A ratio near 1 means refusing costs no more than answering; the
issue's target is that no rejection takes longer than a second.

Every command first runs once and must exit 2 (``check`` exits 1: its methods disagree on the
inf it is given; the baseline exits 0); then each is timed in interleaved rounds, best of 7
(3 with ``--quick``), with compiled bytecode and a warm parse cache, as an installed gradcli
runs a second time.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np

from .harness import (
    PROCESS_FULL,
    PROCESS_QUICK,
    Result,
    add_absolute,
    add_ratios,
    best_times,
    command,
    python_script,
    with_bytecode,
)

TITLE = "rejections: a gradcli process refusing hostile or oversized input vs the seed vjp"

SUITE = "rejections"
BENCHMARK = "refuse"
BASELINE = "gradcli (seed vjp)"
SEED = ("vjp", "--expr", "y0=x0**2; y1=x0**2+5*x1**2; y2=3*x1", "--x", "1,2", "--v", "1,1,1")
SECOND = 1000.0  # ms: the bound on any rejection

NOTES = ("target (from the issue): every rejection answers within 1 s (whole process, best of 7).",)


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


def run(quick: bool = False) -> list[Result]:
    """Check that each command is refused (exit 2, an error line), then time them."""
    root = Path(tempfile.mkdtemp(prefix="gradcli-bench-rejections-"))
    try:
        env = {**with_bytecode(root / "pycache"), "GRADCLI_CACHE_DIR": str(root / "cache")}
        gradcli = python_script("gradcli")
        processes = {BASELINE: command([gradcli, *SEED], env=env)}
        disagree = {"huge power for sympy": 1}  # check runs, and its methods disagree
        for name, argv in _inputs(root).items():
            exit_code = disagree.get(name, 2)
            processes[name] = command([gradcli, *argv], env=env, exit_code=exit_code)
        for process in processes.values():  # warms up, and checks the exit codes
            process()
        times = best_times(processes, PROCESS_QUICK if quick else PROCESS_FULL)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = [
        Result(SUITE, BENCHMARK, name, seconds * 1e3, repeats, BASELINE)
        for name, (seconds, repeats) in times.items()
    ]
    add_ratios(results, BASELINE, {})
    targets = {(BENCHMARK, name): SECOND for name in times if name != BASELINE}
    return add_absolute(results, targets)
