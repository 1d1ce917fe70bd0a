"""Numerical helpers shared by the engine tests: evaluation, finite differences, graph walks."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, settings

import gradcli as gc

STEP = 1e-6  # central finite-difference step
FD_RTOL = 1e-5
FD_ATOL = 1e-6

# Modest example counts keep the whole engine suite well under two minutes on two cores;
# GRADCLI_ENGINE_EXAMPLES=500 (say) runs a deeper search.
EXAMPLES = int(os.environ.get("GRADCLI_ENGINE_EXAMPLES", "30"))
# Derandomized and without a database: CI sees the same examples on every run, so a result
# never depends on what an earlier run happened to find.
RULES = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FEW = settings(RULES, max_examples=max(EXAMPLES // 3, 1))


def tensors(arrays, requires_grad=False, dtype=None):
    return [gc.tensor(a, requires_grad=requires_grad, dtype=dtype) for a in arrays]


def evaluate(fn, arrays) -> np.ndarray:
    """fn at the point ``arrays``, as a float64 array, without recording a graph."""
    with gc.no_grad():
        return np.asarray(fn(*tensors(arrays)).data, dtype=np.float64)


def random_like(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.standard_normal(shape)


def fd_gradient(scalar_fn, arrays) -> list[np.ndarray]:
    """Central differences of ``scalar_fn(arrays) -> float``, one entry at a time."""
    gradients = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for k in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][k] += STEP
            minus[i][k] -= STEP
            g[k] = (scalar_fn(plus) - scalar_fn(minus)) / (2 * STEP)
        gradients.append(g)
    return gradients


def fd_directional(fn, arrays, directions):
    """Central difference of ``fn(arrays) -> array or list of arrays`` along ``directions``."""
    plus = fn([x + STEP * t for x, t in zip(arrays, directions)])
    minus = fn([x - STEP * t for x, t in zip(arrays, directions)])
    if isinstance(plus, list):
        return [(p - m) / (2 * STEP) for p, m in zip(plus, minus)]
    return (plus - minus) / (2 * STEP)


def reverse_gradients(fn, arrays, v) -> list[np.ndarray]:
    """J^T v for every input, by the engine's reverse mode (gc.vjp)."""
    _, grads = gc.vjp(fn, tensors(arrays), gc.tensor(v))
    return [g.numpy() for g in grads]


def hessian_vector(fn, arrays, v, w) -> list[np.ndarray]:
    """H w, where H is the Hessian of s(x) = <v, fn(x)>: grad with create_graph, then grad."""
    xs = tensors(arrays, requires_grad=True)
    s = (fn(*xs) * gc.tensor(v)).sum()
    first = gc.grad(s, xs, create_graph=True, allow_unused=True)
    inner = None
    for g, wi in zip(first, w):
        if g is not None and g.requires_grad:
            term = (g * gc.tensor(wi)).sum()
            inner = term if inner is None else inner + term
    if inner is None:  # the gradient does not depend on x: H = 0
        return [np.zeros_like(a) for a in arrays]
    second = gc.grad(inner, xs, allow_unused=True)
    return [np.zeros_like(a) if g is None else g.numpy() for g, a in zip(second, arrays)]


def graph_primitives(root: gc.Tensor) -> set[str]:
    """Names of the primitives recorded in the graph behind ``root``."""
    names, seen = set(), set()
    stack = [root.grad_fn] if root.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.prim.name)
        stack.extend(t.grad_fn for t in node.inputs if t.grad_fn is not None)
    return names
