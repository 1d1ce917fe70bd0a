"""Jacobian benchmarks: the full Jacobian of ``tanh(A @ x)`` with n = 500.

A is a seeded n x n float64 matrix divided by sqrt(n), x a seeded n-vector; the Jacobian is
the n x n matrix ``(1 - tanh(A x)^2)[:, None] * A``. Implementations:

* ``numpy (hand)``: that closed form (the baseline of every ratio);
* ``gradcli reverse`` and ``gradcli forward``: ``gc.jacobian(f, x, strategy=...,
  vectorize=True)`` (one traced pass replayed with all n basis vectors along a batch dimension);
* when importable: HIPS ``autograd.jacobian`` (one backward pass per output), ``jax.jacrev`` and
  ``jax.jacfwd`` (not jitted; vmapped inside), and ``torch.autograd.functional.jacobian(...,
  vectorize=True)`` in both strategies.

Everything must agree with the closed form (rtol 1e-10) before it is timed. The issue's target
is absolute (10 ms for gradcli); the table also gives each figure's ratio to the anchors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradcli as gc

from . import engine
from .harness import FULL, QUICK, Result, add_absolute, add_ratios, best_times, check_same

TITLE = "full Jacobian of tanh(A @ x), n = 500: gradcli vectorized vs closed form, autograd, jax"

SUITE = "jacobian"
BENCHMARK = "tanh(A @ x), n=500"
BASELINE = "numpy (hand)"
REVERSE = "gradcli reverse (vectorized)"
FORWARD = "gradcli forward (vectorized)"
N = 500
SEED = 0
RTOL = 1e-10

#: The issue's target for gradcli's vectorized Jacobians, in ms.
TARGET_MS = 10.0
ABSOLUTE_TARGETS = {(BENCHMARK, REVERSE): TARGET_MS, (BENCHMARK, FORWARD): TARGET_MS}

NOTES = (
    f"targets (from the issue): jacobian gradcli (vectorized) <= {TARGET_MS:g} ms absolute; "
    "the ratio column is to the closed form, which does O(n^2) work",
    "                          (a vectorized reverse or forward pass multiplies the n x n "
    "basis by A: O(n^3) work).",
)


def inputs(n: int = N, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """The seeded A (divided by sqrt(n)) and x."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def closed_form(A: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    """Hand-written numpy: ``(1 - tanh(A x)^2)[:, None] * A``."""
    return lambda: (1.0 - np.tanh(A @ x) ** 2)[:, None] * A


def gradcli_jacobian(A: np.ndarray, x: np.ndarray, strategy: str) -> Callable[[], Any]:
    """``gc.jacobian(..., vectorize=True)`` in ``strategy``, returning a numpy array."""
    At = gc.tensor(A)
    xt = gc.tensor(x)

    def f(v: gc.Tensor) -> gc.Tensor:
        return gc.tanh(gc.matmul(At, v))

    return lambda: gc.jacobian(f, xt, strategy=strategy, vectorize=True).numpy()


def autograd_jacobian(A: np.ndarray, x: np.ndarray) -> Callable[[], Any]:
    autograd, anp = engine._autograd()
    jacobian = autograd.jacobian(lambda v: anp.tanh(anp.dot(A, v)))
    return lambda: jacobian(x)


def jax_jacobian(A: np.ndarray, x: np.ndarray, mode: str) -> Callable[[], Any]:
    jax, jnp = engine._jax()
    Aj, xj = jnp.asarray(A), jnp.asarray(x)
    transform = jax.jacrev if mode == "rev" else jax.jacfwd
    jacobian = transform(lambda v: jnp.tanh(Aj @ v))
    return lambda: jax.block_until_ready(jacobian(xj))


def torch_jacobian(A: np.ndarray, x: np.ndarray, strategy: str) -> Callable[[], Any]:
    torch = engine._torch()
    At, xt = torch.from_numpy(A), torch.from_numpy(x)
    jacobian = torch.autograd.functional.jacobian
    return lambda: jacobian(
        lambda v: torch.tanh(At @ v), xt, vectorize=True, strategy=strategy
    ).numpy()


def implementations(A: np.ndarray, x: np.ndarray) -> dict[str, Callable[[], Any]]:
    """Every implementation whose library is installed."""
    runs = {
        BASELINE: closed_form(A, x),
        REVERSE: gradcli_jacobian(A, x, "reverse-mode"),
        FORWARD: gradcli_jacobian(A, x, "forward-mode"),
    }
    if engine._autograd() is not None:
        runs["autograd.jacobian"] = autograd_jacobian(A, x)
    if engine._jax() is not None:
        runs["jax.jacrev (not jitted)"] = jax_jacobian(A, x, "rev")
        runs["jax.jacfwd (not jitted)"] = jax_jacobian(A, x, "fwd")
    if engine._torch() is not None:
        runs["torch reverse (vectorize)"] = torch_jacobian(A, x, "reverse-mode")
        runs["torch forward (vectorize)"] = torch_jacobian(A, x, "forward-mode")
    return runs


def run(quick: bool = False) -> list[Result]:
    """Check that every Jacobian equals the closed form, then time each one."""
    A, x = inputs()
    runs = implementations(A, x)
    check_same(f"{SUITE}.{BENCHMARK}", {k: [fn()] for k, fn in runs.items()}, BASELINE, RTOL)
    times = best_times(runs, QUICK if quick else FULL)
    results = [
        Result(SUITE, BENCHMARK, name, seconds * 1e3, repeats, BASELINE)
        for name, (seconds, repeats) in times.items()
    ]
    add_ratios(results, "", {})
    return add_absolute(results, ABSOLUTE_TARGETS)
