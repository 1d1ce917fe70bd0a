"""Operation groups: one gradcli program per group of the op table, compiled, against numpy.

Each benchmark is a small program of one group's operations on a seeded 256x256 float64
input ``x``, and the gradient of its scalar output ``y`` by ``x``. ``gradcli compiled`` is
``Tape.run`` of one trace of ``program.run`` + ``gc.grad`` (as in the compiled suite);
the baseline is the same value and gradient written by hand in numpy, and torch computes
them with its autograd where installed. Every implementation is checked against the
baseline before anything is timed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import gradcli as gc
from gradcli.engine.compile import trace
from gradcli.lang import parse_program

from . import engine
from .harness import (
    FULL,
    QUICK,
    Result,
    add_ratios,
    check_same,
    cpu_times,
    first_calls,
    results_of,
)

TITLE = "operation groups: one compiled program per group vs hand-written numpy"
SUITE = "groups"
BASELINE = engine.BASELINE  # "numpy (hand)"
SUBJECT = "gradcli compiled"
N = 256
RTOL = 1e-9

Arrays = tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Case:
    """One group's program, its hand-written value and gradient, and torch's spelling."""

    group: str
    source: str  # a gradcli program of x (and t); y is the output
    numpy: Callable[[np.ndarray, np.ndarray], Arrays]  # (x, t) -> (y, dy/dx)
    torch: Callable[[Any, Any, Any], Any]  # (torch, x, t) -> y


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _elementwise(x: np.ndarray, t: np.ndarray) -> Arrays:
    y = np.sum(np.exp(x) * np.sin(x) + np.log1p(x * x))
    return y, np.exp(x) * (np.sin(x) + np.cos(x)) + 2 * x / (1 + x * x)


def _reductions(x: np.ndarray, t: np.ndarray) -> Arrays:
    top = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - top).sum(axis=1)) + top[:, 0]
    y = np.sum(lse) + np.sum(top)
    return y, _softmax(x) + (x == top)


def _losses(x: np.ndarray, t: np.ndarray) -> Arrays:
    log_p = x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True))
    log_p -= x.max(1, keepdims=True)
    y = -np.sum(t * log_p) / len(x)
    return y, (_softmax(x) * t.sum(1, keepdims=True) - t) / len(x)


def _linalg(x: np.ndarray, t: np.ndarray) -> Arrays:
    ones = np.ones_like(x)
    return np.sum(x @ x), ones @ x.T + x.T @ ones


def _eigh(x: np.ndarray, t: np.ndarray) -> Arrays:
    # y = sum(L ** 2), L the eigenvalues of S = x x^T: dS = V diag(2 L) V^T, dx = 2 dS x
    values, vectors = np.linalg.eigh(x @ x.T)
    d_s = (vectors * (2 * values)) @ vectors.T
    return np.sum(values**2), 2 * d_s @ x


def _shapes(x: np.ndarray, t: np.ndarray) -> Arrays:
    return np.sum(np.transpose(x) * x), 2 * x.T


def _activations(x: np.ndarray, t: np.ndarray) -> Arrays:
    s = 1 / (1 + np.exp(-x))
    return np.sum(x * s), s * (1 + x * (1 - s))


def _masks(x: np.ndarray, t: np.ndarray) -> Arrays:
    positive = x > 0
    return np.sum(np.where(positive, x * x, -x)), np.where(positive, 2 * x, -1.0)


def _scans(x: np.ndarray, t: np.ndarray) -> Arrays:
    # d/dx sum(cumsum(x, 1) * t) is t summed from each column to the end of its row
    gradient = np.flip(np.cumsum(np.flip(t, 1), 1), 1)
    return np.sum(np.cumsum(x, 1) * t), gradient


def _layers(x: np.ndarray, t: np.ndarray) -> Arrays:
    # y = sum(layer_norm(x @ t^T, 256) * t): layer_norm's backward by hand
    h = x @ t.T
    centred = h - h.mean(axis=1, keepdims=True)
    sigma = np.sqrt((centred * centred).mean(axis=1, keepdims=True) + 1e-5)
    normal = centred / sigma
    dh = t - t.mean(axis=1, keepdims=True) - normal * (t * normal).mean(axis=1, keepdims=True)
    return np.sum(normal * t), (dh / sigma) @ t


def _inverse(x: np.ndarray, t: np.ndarray) -> Arrays:
    # y = sum(inv(x + 64 I)) (an LU factorization); dy/dx = -inv^T 1 1^T inv^T
    inverse = np.linalg.inv(x + 64 * np.eye(len(x)))
    ones = np.ones_like(x)
    return np.sum(inverse), -inverse.T @ ones @ inverse.T


def _dtypes(x: np.ndarray, t: np.ndarray) -> Arrays:
    # a float32 round trip passes the gradient on; an integer tensor (truncated) carries none
    single = x.astype(np.float32).astype(np.float64)
    whole = (x * 4).astype(np.int64)
    return np.sum(single**2 + whole * x), 2 * single + whole


def _indexing(x: np.ndarray, t: np.ndarray) -> Arrays:
    # the program's index: whole numbers made from t, 0..255 in each row
    index = (np.floor(t * 65536) % N).astype(np.int64)
    rows = np.arange(N)[:, None]
    gradient = np.zeros_like(x)
    np.add.at(gradient, (rows, index), 2.0)  # a column gathered twice gets both
    return np.sum(x[rows, index] * 2), gradient


CASES = (
    Case(
        "elementwise",
        "y = sum(exp(x) * sin(x) + log1p(x * x))",
        _elementwise,
        lambda torch, x, t: (x.exp() * x.sin() + (x * x).log1p()).sum(),
    ),
    Case(
        "reductions",
        "y = sum(logsumexp(x, 1)) + sum(amax(x, 1))",
        _reductions,
        lambda torch, x, t: torch.logsumexp(x, 1).sum() + x.amax(1).sum(),
    ),
    Case(
        "losses",
        "y = cross_entropy(x, t)",
        _losses,
        lambda torch, x, t: torch.nn.functional.cross_entropy(x, t),
    ),
    Case(
        "linalg",
        "y = sum(x @ x)",
        _linalg,
        lambda torch, x, t: (x @ x).sum(),
    ),
    Case(
        "linear algebra (eigh)",
        "L, V = eigh(x @ transpose(x)); y = sum(L ** 2)",
        _eigh,
        lambda torch, x, t: (torch.linalg.eigh(x @ x.T).eigenvalues ** 2).sum(),
    ),
    Case(
        "shapes",
        "y = sum(transpose(x) * x)",
        _shapes,
        lambda torch, x, t: (x.T * x).sum(),
    ),
    Case(
        "activations",
        "y = sum(silu(x))",
        _activations,
        lambda torch, x, t: torch.nn.functional.silu(x).sum(),
    ),
    Case(
        "masks",
        "y = sum(where(x > 0, x * x, -x))",
        _masks,
        lambda torch, x, t: torch.where(x > 0, x * x, -x).sum(),
    ),
    Case(
        "layers",
        "y = sum(layer_norm(linear(x, t), 256) * t)",
        _layers,
        lambda torch, x, t: (torch.nn.functional.layer_norm(x @ t.T, (256,)) * t).sum(),
    ),
    Case(
        "linear algebra (inverse)",
        "y = sum(inv(x + 64 * diag(t[0] * 0 + 1)))",
        _inverse,
        lambda torch, x, t: torch.linalg.inv(x + 64 * torch.eye(len(x), dtype=x.dtype)).sum(),
    ),
    Case(
        "indexing",
        "i = remainder(floor(t * 65536), 256); y = sum(gather(x, 1, i) * 2)",
        _indexing,
        lambda torch, x, t: (
            torch.gather(x, 1, torch.remainder(torch.floor(t * 65536), 256).long()) * 2
        ).sum(),
    ),
    Case(
        "dtypes",
        "y = sum(x.float().double() ** 2 + (x * 4).long() * x)",
        _dtypes,
        lambda torch, x, t: (x.float().double() ** 2 + (x * 4).long() * x).sum(),
    ),
    Case(
        "scans",
        "y = sum(cumsum(x, 1) * t)",
        _scans,
        lambda torch, x, t: (torch.cumsum(x, 1) * t).sum(),
    ),
)


def inputs() -> tuple[np.ndarray, np.ndarray]:
    """x: standard normal 256x256; t: rows of probabilities (a soft target)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, N))
    t = rng.random((N, N))
    return x, t / t.sum(axis=1, keepdims=True)


def compiled(source: str, x: np.ndarray, t: np.ndarray) -> Callable[[], list[np.ndarray]]:
    program = parse_program(source)

    def one_pass(xt: gc.Tensor, tt: gc.Tensor) -> list[gc.Tensor]:
        xt.requires_grad = True
        out = program.run({"x": xt, "t": tt})["y"]
        return [out, *gc.grad(out, [xt])]

    tape = trace(one_pass, x, t)
    return lambda: tape.run(x, t)


def torch_pass(case: Case, x: np.ndarray, t: np.ndarray) -> Callable[[], Arrays] | None:
    torch = engine._torch()
    if torch is None:
        return None
    tt = torch.from_numpy(t)

    def run() -> Arrays:
        xt = torch.from_numpy(x).requires_grad_()
        y = case.torch(torch, xt, tt)
        y.backward()
        return y.detach().numpy(), xt.grad.numpy()

    return run


def run(quick: bool = False) -> list[Result]:
    x, t = inputs()
    results = []
    for case in CASES:
        runs: dict[str, Callable[[], Any]] = {
            BASELINE: lambda c=case: c.numpy(x, t),
            SUBJECT: compiled(case.source, x, t),
        }
        anchor = torch_pass(case, x, t)
        if anchor is not None:
            runs["torch"] = anchor
        outputs, first = first_calls(runs)
        check_same(f"{SUITE}.{case.group}", outputs, BASELINE, RTOL)
        times = cpu_times(runs, QUICK if quick else FULL, first)
        results += results_of(SUITE, case.group, times, BASELINE)
    return add_ratios(results, SUBJECT, {})


NOTES = (
    "groups: each program on a 256x256 input, value and gradient; the gradcli figure is the "
    "compiled tape's replay (parse and trace once, not timed)",
)
