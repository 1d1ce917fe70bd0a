"""Scaling benchmarks: how gradcli's time grows with the size of the work.

Three series, each size checked against numpy written by hand (timed beside it, as the anchor):

``chain``
    The compiled chain ``h = sin(h) * 1.01 + 0.1`` on a 4-element vector, then the gradient of
    ``sum(h)``: ``Tape.run`` of one trace, for 10^2, 10^3, 10^4 and 10^5 steps (``--quick``
    stops at 10^4). The work is linear in the steps. The chain is built with the engine's API
    rather than parsed as a program (parsing 10^5 statements with sympy takes about a minute);
    the suite checks first that both give a tape of the same steps.
``jacobian``
    The full Jacobian of ``tanh(A @ x)`` by ``gc.jacobian(..., vectorize=True)`` in reverse
    mode, n = 10, 100, 1000. The element-wise part is O(n^2) work (n cotangents of length n);
    the matrix product of the n x n cotangents with A is O(n^3). The closed form anchor is O(n^2).
``batch``
    ``gradcli.batch.plan.run`` of the start-up suite's vjp (in-process, program bound once) at 10^2
    to 10^6 points. The work is linear in the points.

In the table each row's ratio is its time over the previous size's (the first size's is 1);
the notes give the time per unit of work, the ratio to hand numpy at each size, and the growth
exponent between successive sizes: log(time ratio) / log(size ratio), 1 for linear growth.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import gradcli as gc
from gradcli.engine.compile import trace
from gradcli.lang import parse_program

from . import batch, compiled, engine, jacobian
from .harness import (
    FULL,
    QUICK,
    Result,
    check_same,
    cpu_times,
    first_calls,
    results_of,
)

TITLE = "scaling: compiled chain length, Jacobian size, batch points; time per unit of work"

SUITE = "scaling"
SUBJECT = "gradcli"
BASELINE = "numpy (hand)"
RTOL = 1e-10

CHAIN_SIZES = (10**2, 10**3, 10**4, 10**5)
CHAIN_SIZES_QUICK = (10**2, 10**3, 10**4)
JACOBIAN_SIZES = (10, 100, 1000)
BATCH_SIZES = (10**2, 10**3, 10**4, 10**5, 10**6)

STATIC_NOTES = (
    "scaling: each row's ratio is its time over the previous size's (same implementation); "
    "exponent = log(time ratio) / log(size ratio): 1 = linear, 2 = quadratic, 3 = cubic",
)
#: Filled by ``run``: the static notes, then the per-unit figures and verdicts.
NOTES: list[str] = list(STATIC_NOTES)


# -- the series ----------------------------------------------------------------------------


def chain_pass(steps: int) -> Callable[[gc.Tensor], list[gc.Tensor]]:
    """``h0 -> [sum(h), d sum(h) / d h0]`` with the engine's API, to be traced."""

    def one_pass(h0: gc.Tensor) -> list[gc.Tensor]:
        h0.requires_grad = True
        h = h0
        for _ in range(steps):
            h = gc.sin(h) * 1.01 + 0.1
        out = h.sum()
        return [out, *gc.grad(out, [h0])]

    return one_pass


def chain_hand(h0: np.ndarray, steps: int) -> Callable[[], tuple[Any, ...]]:
    """The engine suite's hand-written numpy chain, for ``steps`` steps."""

    def run() -> tuple[Any, ...]:
        h, saved = h0, []
        for _ in range(steps):
            saved.append(h)
            h = np.sin(h) * 1.01 + 0.1
        g = np.ones_like(h)
        for h_prev in reversed(saved):
            g = g * 1.01 * np.cos(h_prev)
        return h.sum(), g

    return run


def check_chain_tape() -> None:
    """The engine-API chain traces to the same steps as the chain written as a program."""
    h0 = engine.chain_input()
    program = parse_program(compiled.chain_source(100))
    from_program = trace(compiled.program_pass(program), h0)
    from_api = trace(chain_pass(100), h0)
    names = [[step[0] for step in tape.steps] for tape in (from_program, from_api)]
    if names[0] != names[1]:
        raise AssertionError(f"{SUITE}.chain: the program and the engine API trace differently")


def chain_runs(steps: int) -> dict[str, Callable[[], Any]]:
    h0 = engine.chain_input()
    tape = trace(chain_pass(steps), h0)
    return {SUBJECT: lambda: tape.run(h0), BASELINE: chain_hand(h0, steps)}


def jacobian_runs(n: int) -> dict[str, Callable[[], Any]]:
    A, x = jacobian.inputs(n)
    return {
        SUBJECT: jacobian.gradcli_jacobian(A, x, "reverse-mode"),
        BASELINE: jacobian.closed_form(A, x),
    }


def batch_runs(count: int) -> dict[str, Callable[[], Any]]:
    x = batch.points(count)
    return {SUBJECT: batch.in_process(batch.bound_program(), x), BASELINE: batch.hand(x)}


def _as_outputs(value: Any) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


# -- running -------------------------------------------------------------------------------


def _label(size: int) -> str:
    exponent = math.log10(size)
    return f"10^{exponent:.0f}" if exponent == int(exponent) else str(size)


def series(
    name: str,
    unit: str,
    sizes: tuple[int, ...],
    make: Callable[[int], dict[str, Callable[[], Any]]],
    quick: bool,
    work: tuple[str, Callable[[int], int]] | None = None,
) -> tuple[list[Result], list[str], list[float]]:
    """Check and time both implementations at every size: rows, notes, gradcli's exponents.

    ``work`` names the unit of work and counts it for a size (default: the size itself).
    """
    work_unit, count = work or (unit, lambda size: size)
    rows: list[Result] = []
    per_size: dict[int, dict[str, float]] = {}
    for size in sizes:
        runs = make(size)
        values, first = first_calls(runs)
        outputs = {impl: _as_outputs(value) for impl, value in values.items()}
        check_same(f"{SUITE}.{name} {unit}={_label(size)}", outputs, BASELINE, RTOL)
        times = cpu_times(runs, QUICK if quick else FULL, first)
        per_size[size] = {impl: figure.median for impl, figure in times.items()}
        labelled = {f"{impl}, {unit}={_label(size)}": figure for impl, figure in times.items()}
        rows += results_of(SUITE, name, labelled, "")
    # each row's baseline: the same implementation at the previous size
    for impl in (SUBJECT, BASELINE):
        previous = None
        for r in rows:
            if r.implementation.startswith(impl + ","):
                r.baseline = (previous or r).implementation
                r.ratio = r.median_ms / (previous or r).median_ms
                previous = r
    rows.sort(key=lambda r: not r.implementation.startswith(SUBJECT))
    notes, exponents = [], []
    for i, size in enumerate(sizes):
        t, units = per_size[size], count(size)
        line = (
            f"  {unit}={_label(size):>5}: gradcli {t[SUBJECT] / units * 1e6:10.4f} us/{work_unit}, "
            f"hand {t[BASELINE] / units * 1e6:10.4f} us/{work_unit}, "
            f"gradcli/hand {t[SUBJECT] / t[BASELINE]:7.2f}x"
        )
        if i:
            before = per_size[sizes[i - 1]]
            step = math.log(size / sizes[i - 1])
            growth = {k: math.log(t[k] / before[k]) / step for k in (SUBJECT, BASELINE)}
            exponents.append(growth[SUBJECT])
            line += f"; exponent gradcli {growth[SUBJECT]:.2f}, hand {growth[BASELINE]:.2f}"
        notes.append(line)
    return rows, notes, exponents


def _linearity(exponents: list[float]) -> str:
    """A verdict on growth that should be linear, judged between the two largest sizes."""
    last = exponents[-1]
    if last < 0.85:
        return f"sub-linear so far (exponent {last:.2f}): fixed costs still dominate"
    if last <= 1.2:
        return f"linear (exponent {last:.2f} between the two largest sizes)"
    return f"SUPER-LINEAR (exponent {last:.2f} between the two largest sizes)"


def _cubic(exponents: list[float]) -> str:
    """A verdict on the Jacobian's growth: O(n^2) element-wise work plus an O(n^3) product."""
    last = exponents[-1]
    if last > 2.2:
        why = "above 2: the O(n^3) matrix product dominates"
    else:
        why = "at most about 2: the O(n^2) element-wise work and per-call costs dominate"
    return f"exponent {last:.2f} between the two largest sizes, {why}"


def run(quick: bool = False) -> list[Result]:
    """The three series; notes with the time per unit, exponents and verdicts."""
    check_chain_tape()
    chain_sizes = CHAIN_SIZES_QUICK if quick else CHAIN_SIZES
    results, notes = [], list(STATIC_NOTES)

    rows, lines, exponents = series(
        "chain", "steps", chain_sizes, chain_runs, quick, ("step", lambda n: n)
    )
    results += rows
    notes += ["scaling.chain (compiled Tape.run; the work is linear in the steps):", *lines]
    notes.append(f"  growth: {_linearity(exponents)}")

    rows, lines, exponents = series(
        "jacobian", "n", JACOBIAN_SIZES, jacobian_runs, quick, ("entry", lambda n: n * n)
    )
    results += rows
    notes += [
        "scaling.jacobian (vectorized reverse mode; per unit = per Jacobian entry, n^2 of them; "
        "the element-wise work is O(n^2), the cotangents-times-A product O(n^3), "
        "the closed form O(n^2)):",
        *lines,
        f"  growth: {_cubic(exponents)}",
    ]

    rows, lines, exponents = series(
        "batch", "points", BATCH_SIZES, batch_runs, quick, ("point", lambda n: n)
    )
    results += rows
    notes += ["scaling.batch (in-process batch.run; the work is linear in the points):", *lines]
    notes.append(f"  growth: {_linearity(exponents)}")

    NOTES[:] = notes
    return results
